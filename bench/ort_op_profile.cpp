// Where does ONNX Runtime's CPU time go in each model? Runs ONNX files on one letterboxed real
// photograph with the cpu-ort backend's session options (ortSessionOptions, spinning off), the
// models in alternation, and reads ONNX Runtime's own profile: per model the median time of a run,
// then the kernels' time per run by operator type after ORT's fusions (QLinearConv, QuickGelu, ...)
// and how many nodes each has. The question it answers: why an integer model is or is not faster
// than float (bench/int8-cpu.md).
//   build/bench/vigil_ort_op_profile [--threads N] [--warmup W] [--iterations I]
//       [--image IMAGE] MODEL.onnx...
// Each model's input is [1, 3, H, W] float, H and W from the model (YOLOX: 416).
#include <fmt/format.h>
#include <onnxruntime_cxx_api.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "daemon/commands/bench_command.h"
#include "detector/backends/ort_session_options.h"
#include "detector/model_manifest.h"
#include "detector/preprocess.h"

namespace {

using Clock = std::chrono::steady_clock;

int fail(const std::string& message) {
  fmt::print(stderr, "ort_op_profile: {}\n", message);
  return 2;
}

// One model's session, its input and its timings.
struct Profiled {
  std::string path;
  std::unique_ptr<Ort::Session> session;
  std::vector<std::int64_t> shape;
  vigil::Tensor input;
  Ort::Value value{nullptr};
  std::string inName;
  std::vector<std::string> outNames;
  std::vector<double> runMs;
};

Ort::SessionOptions sessionOptions(int threads, const std::string& profilePrefix) {
  Ort::SessionOptions so = vigil::ortSessionOptions(threads, false);
  so.EnableProfiling(profilePrefix.c_str());
  return so;
}

// Kernel microseconds and node count per operator type, from ORT's profile (Chrome trace JSON).
struct OpTotals {
  std::map<std::string, double> micros;
  std::map<std::string, int> nodes;
  int runs = 0;
};

OpTotals readProfile(const std::string& file) {
  OpTotals totals;
  std::ifstream in(file);
  const nlohmann::json events = nlohmann::json::parse(in);
  for (const auto& e : events) {
    const std::string name = e.value("name", "");
    if (name == "model_run") ++totals.runs;
    if (e.value("cat", "") != "Node" || !name.ends_with("_kernel_time")) continue;
    const std::string op = e["args"].value("op_name", "?");
    totals.micros[op] += e.value("dur", 0.0);
    ++totals.nodes[op];
  }
  return totals;
}

void printProfile(const Profiled& model, const OpTotals& totals) {
  const vigil::Summary s = vigil::summarize(model.runMs);
  fmt::print("\n{}: median {:.2f} ms a run (p95 {:.2f})\n", model.path, s.median, s.p95);
  std::vector<std::pair<double, std::string>> byTime;
  double all = 0;
  for (const auto& [op, micros] : totals.micros) {
    byTime.emplace_back(micros, op);
    all += micros;
  }
  std::sort(byTime.rbegin(), byTime.rend());
  const double runs = std::max(1, totals.runs);
  fmt::print("  {:<24} {:>10} {:>6} {:>6}\n", "operator (after fusion)", "ms a run", "share",
             "nodes");
  for (const auto& [micros, op] : byTime) {
    fmt::print("  {:<24} {:>10.2f} {:>5.0f}% {:>6}\n", op, micros / runs / 1000, 100 * micros / all,
               static_cast<int>(totals.nodes.at(op) / runs));
  }
  fmt::print("  {:<24} {:>10.2f}\n", "kernels in all", all / runs / 1000);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  int warmup = 10;
  int iterations = 60;
  std::string imagePath = VIGIL_SHARED_DIR "/data/coco-person-dev/images/000000001000.jpg";
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> int { return i + 1 < argc ? std::atoi(argv[++i]) : -1; };
    if (arg == "--threads") {
      threads = next();
    } else if (arg == "--warmup") {
      warmup = next();
    } else if (arg == "--iterations") {
      iterations = next();
    } else if (arg == "--image" && i + 1 < argc) {
      imagePath = argv[++i];
    } else if (!arg.starts_with("--")) {
      paths.push_back(arg);
    } else {
      return fail("unknown option " + arg);
    }
  }
  if (threads < 1 || warmup < 0 || iterations < 1 || paths.empty()) {
    return fail("usage: [--threads N] [--warmup W] [--iterations I] [--image F] MODEL.onnx...");
  }
  const cv::Mat image = cv::imread(imagePath);
  if (image.empty()) return fail("cannot read " + imagePath);

  Ort::InitApi();
  Ort::Env env(ORT_LOGGING_LEVEL_ERROR, "op-profile");
  Ort::AllocatorWithDefaultOptions allocator;
  const Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  const std::filesystem::path profileDir = std::filesystem::temp_directory_path();
  std::vector<Profiled> models;
  for (std::size_t m = 0; m < paths.size(); ++m) {
    Profiled p;
    p.path = paths[m];
    const std::string prefix = (profileDir / fmt::format("vigil-op-profile-{}-{}", getpid(), m));
    try {
      p.session =
          std::make_unique<Ort::Session>(env, p.path.c_str(), sessionOptions(threads, prefix));
    } catch (const Ort::Exception& e) {
      return fail(fmt::format("{}: {}", p.path, e.what()));
    }
    p.shape = p.session->GetInputTypeInfo(0).GetTensorTypeAndShapeInfo().GetShape();
    if (p.shape.size() != 4) return fail(p.path + ": the input is not [1, 3, H, W]");
    vigil::InputSpec spec;  // YOLOX's: BGR, 0-255, padded with 114
    spec.width = static_cast<int>(p.shape[3]);
    spec.height = static_cast<int>(p.shape[2]);
    vigil::Letterbox(spec).run(image, p.input);
    p.value = Ort::Value::CreateTensor<float>(memory, p.input.data.data(), p.input.data.size(),
                                              p.shape.data(), p.shape.size());
    p.inName = p.session->GetInputNameAllocated(0, allocator).get();
    for (std::size_t o = 0; o < p.session->GetOutputCount(); ++o) {
      p.outNames.emplace_back(p.session->GetOutputNameAllocated(o, allocator).get());
    }
    models.push_back(std::move(p));
  }

  for (int i = 0; i < warmup + iterations; ++i) {
    for (std::size_t k = 0; k < models.size(); ++k) {
      Profiled& p = models[(i + k) % models.size()];  // the first of each round rotates
      const char* in = p.inName.c_str();
      std::vector<const char*> outs;
      for (const auto& o : p.outNames) outs.push_back(o.c_str());
      const auto t0 = Clock::now();
      p.session->Run(Ort::RunOptions{nullptr}, &in, &p.value, 1, outs.data(), outs.size());
      if (i >= warmup)
        p.runMs.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
  }
  fmt::print("{} thread(s), {} warm-up runs, {} measured in alternation, {}\n", threads, warmup,
             iterations, imagePath);
  for (Profiled& p : models) {
    const std::string file = p.session->EndProfilingAllocated(allocator).get();
    const OpTotals totals = readProfile(file);
    std::filesystem::remove(file);
    printProfile(p, totals);
  }
  return 0;
}
