// Is Vigil's cpu-ort backend as fast as ONNX Runtime used directly? One process, one
// letterboxed real photograph, two sessions with the same options (intra-op threads N,
// inter-op 1, sequential, all graph optimisations, spinning off):
//   standalone: the plain ONNX Runtime C++ API as its documentation shows it, Session::Run
//               returning a freshly allocated output each time;
//   cpu-ort:    Vigil's backend (InferenceBackend::infer), with its buffers bound once.
// They run in alternation, the first of each round rotating, so the machine's load hits both
// alike. Prints median and p95 of each and the median of the per-round ratios.
//   build/bench/vigil_ort_standalone_bench [--threads N] [--warmup W] [--iterations I] [--json]
//   [IMAGE]
#include <fmt/format.h>
#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "daemon/commands/bench_command.h"
#include "detector/backend.h"
#include "detector/backends/ort_session_options.h"
#include "detector/preprocess.h"

namespace {

using Clock = std::chrono::steady_clock;

int fail(const std::string& message) {
  fmt::print(stderr, "ort_standalone_bench: {}\n", message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  int warmup = 10;
  int iterations = 100;
  bool json = false;
  std::string imagePath = VIGIL_SHARED_DIR "/data/coco-person-dev/images/000000001000.jpg";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> int { return i + 1 < argc ? std::atoi(argv[++i]) : -1; };
    if (arg == "--threads") {
      threads = next();
    } else if (arg == "--warmup") {
      warmup = next();
    } else if (arg == "--iterations") {
      iterations = next();
    } else if (arg == "--json") {
      json = true;
    } else if (!arg.starts_with("--")) {
      imagePath = arg;
    } else {
      return fail("unknown option " + arg);
    }
  }
  if (threads < 1 || warmup < 0 || iterations < 1)
    return fail("bad --threads/--warmup/--iterations");

  auto manifest = vigil::loadModelManifest(VIGIL_MODEL_DIR);
  if (!manifest) return fail(manifest.error().message);
  cv::Mat image = cv::imread(imagePath);
  if (image.empty()) return fail("cannot read " + imagePath);
  vigil::Tensor input;
  vigil::Letterbox(manifest->input).run(image, input);

  // Vigil's backend first: it checks the runtime supports the headers' API and initialises the
  // C++ API (ORT_API_MANUAL_INIT), which the standalone session below then uses as well.
  vigil::BackendOptions options;
  options.threads = threads;
  auto backend = vigil::createBackend("cpu-ort", *manifest, options);
  if (!backend) return fail(backend.error().message);
  vigil::Tensor output;

  const vigil::StageSpec& stage = manifest->stages.front();
  const std::string modelPath = (manifest->directory() / stage.file).string();
  Ort::Env env(ORT_LOGGING_LEVEL_WARNING, "standalone");
  Ort::Session session(env, modelPath.c_str(), vigil::ortSessionOptions(threads, false));
  Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  const auto& inShape = stage.inputs.front().shape;
  Ort::Value in = Ort::Value::CreateTensor<float>(memory, input.data.data(), input.data.size(),
                                                  inShape.data(), inShape.size());
  const char* inName = stage.inputs.front().name.c_str();
  const char* outName = stage.outputs.front().name.c_str();

  std::vector<double> standalone;
  std::vector<double> ours;
  std::vector<double> ratios;
  double maxDiff = 0;
  for (int i = 0; i < warmup + iterations; ++i) {
    double tStandalone = 0;
    double tOurs = 0;
    for (int k = 0; k < 2; ++k) {
      const bool standaloneTurn = (i + k) % 2 == 0;
      auto t0 = Clock::now();
      if (standaloneTurn) {
        auto outputs = session.Run(Ort::RunOptions{nullptr}, &inName, &in, 1, &outName, 1);
        tStandalone = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (i == 1 && !output.data.empty()) {
          const float* v = outputs.front().GetTensorData<float>();
          for (std::size_t j = 0; j < output.data.size(); ++j) {
            maxDiff = std::max(maxDiff, static_cast<double>(std::abs(v[j] - output.data[j])));
          }
        }
      } else {
        if (auto ok = (*backend)->infer(input, output); !ok) return fail(ok.error().message);
        tOurs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      }
    }
    if (i < warmup) continue;
    standalone.push_back(tStandalone);
    ours.push_back(tOurs);
    ratios.push_back(tOurs / tStandalone);
  }
  vigil::Summary s = vigil::summarize(standalone);
  vigil::Summary o = vigil::summarize(ours);
  vigil::Summary r = vigil::summarize(ratios);
  if (json) {
    fmt::print(
        "{{\"threads\": {}, \"warmup\": {}, \"iterations\": {}, \"device\": \"{}\", "
        "\"standalone_ms\": {{\"median\": {:.4f}, \"p95\": {:.4f}}}, "
        "\"cpu_ort_ms\": {{\"median\": {:.4f}, \"p95\": {:.4f}}}, \"ratio_median\": {:.4f}, "
        "\"max_abs_diff\": {:g}}}\n",
        threads, warmup, iterations, (*backend)->device(), s.median, s.p95, o.median, o.p95,
        r.median, maxDiff);
    return 0;
  }
  fmt::print("{} ({}), {} warm-up, {} rounds in alternation\n", imagePath, (*backend)->device(),
             warmup, iterations);
  fmt::print("{:<28} {:>9} {:>9}\n", "inference (ms)", "median", "p95");
  fmt::print("{:<28} {:>9.3f} {:>9.3f}\n", "standalone ONNX Runtime", s.median, s.p95);
  fmt::print("{:<28} {:>9.3f} {:>9.3f}\n", "vigil cpu-ort backend", o.median, o.p95);
  fmt::print("cpu-ort / standalone: {:.3f} (median of per-round ratios); outputs differ by {:g}\n",
             r.median, maxDiff);
  return 0;
}
