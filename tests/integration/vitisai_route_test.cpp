// The Vitis AI route where it cannot run: the real ONNX Runtime C API (the npm CPU build, which
// has no Vitis AI EP) refuses the EP, and Vigil turns that into one clear refusal under `npu`
// and a loud fallback to cpu-ort under `auto`, in the daemon's status, metrics and MQTT. The
// loader's own errors come from real files (libc, a missing path) and one made library (an API
// too old). A silent CPU placement, which no runtime here can produce, comes from a runtime
// double that computes with the real model and then reports a flat busy time.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <regex>
#include <set>

#include "detector/cpu_stage.h"
#include "detector/detector.h"
#include "detector/npu/npu_backend.h"
#include "tests/http_get.h"
#include "tests/model_paths.h"
#include "tests/mosquitto_broker.h"
#include "tests/mqtt_subscriber.h"
#include "tests/process.h"
#include "tests/promtool.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::filesystem::path npuModel(const std::string& preset) {
  return std::filesystem::path(VIGIL_SOURCE_DIR) / "models" / ("yolox-nano-npu-" + preset);
}

// Skips when this build has no Vitis AI runtime at all (no ONNX Runtime headers).
#define VIGIL_REQUIRE_VITISAI_RUNTIME()                                                 \
  do {                                                                                  \
    auto state = vitisAiRuntimeState({});                                               \
    if (!state && state.error().message.find("not in this build") != std::string::npos) \
      GTEST_SKIP() << state.error().message;                                            \
  } while (0)

TEST(VitisAiRouteTest, NpuRefusesEveryVitisAiBundleSayingWhatToInstall) {
  VIGIL_REQUIRE_VITISAI_RUNTIME();
  for (const char* preset : {"float", "xint8", "a8w8", "a16w8"}) {
    auto manifest = loadModelManifest(npuModel(preset));
    ASSERT_TRUE(manifest) << manifest.error().message;
    auto backend = createBackend("npu", *manifest, BackendOptions{});
    ASSERT_FALSE(backend) << preset;
    const std::string& why = backend.error().message;
    EXPECT_NE(why.find("has no Vitis AI execution provider"), std::string::npos) << why;
    EXPECT_NE(why.find("Ryzen AI Software"), std::string::npos) << why;
    EXPECT_NE(why.find("detector.onnxruntime"), std::string::npos) << why;
  }
}

TEST(VitisAiRouteTest, AutoDetectsPeopleOnCpuOrtAndSaysWhy) {
  VIGIL_REQUIRE_VITISAI_RUNTIME();
  const NpuStats& stats = npuStats();
  const auto before = stats.fallbackCount(FallbackReason::kNpuUnavailable);
  DetectorOptions options;
  options.model = npuModel("xint8");
  options.backend = "auto";
  auto detector = Detector::create(options);
  ASSERT_TRUE(detector) << detector.error().message;
  auto sides = autoBackendSides((*detector)->backend());
  ASSERT_TRUE(sides.has_value());
  EXPECT_EQ(sides->cpuName, "cpu-ort");
  EXPECT_EQ(stats.fallbackCount(FallbackReason::kNpuUnavailable), before + 1);
  EXPECT_NE((*detector)->backend().device().find("NPU not in use: npu_unavailable"),
            std::string::npos);
  // The canary photograph: people walking in a street.
  cv::Mat photo = cv::imread((npuModel("xint8") / "canary.jpg").string());
  DetectionResult result;
  ASSERT_TRUE((*detector)->detect(photo, result));
  EXPECT_GE(result.detections.size(), 2U);
}

TEST(VitisAiRouteTest, TheLoaderNamesTheFileAndWhatIsWrongWithIt) {
  VIGIL_REQUIRE_VITISAI_RUNTIME();
  VitisAiSettings settings;
  settings.onnxRuntime = "/nonexistent/onnxruntime/lib";
  auto missing = vitisAiRuntimeState(settings);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cannot load ONNX Runtime '/nonexistent/onnxruntime/lib'"),
            std::string::npos)
      << missing.error().message;

  settings.onnxRuntime = "/lib/x86_64-linux-gnu/libc.so.6";
  auto notOrt = vitisAiRuntimeState(settings);
  ASSERT_FALSE(notOrt);
  EXPECT_NE(notOrt.error().message.find("libc.so.6' is not ONNX Runtime"), std::string::npos)
      << notOrt.error().message;

  settings.onnxRuntime = VIGIL_OLD_ORT_STUB;
  auto old = vitisAiRuntimeState(settings);
  ASSERT_FALSE(old);
  EXPECT_NE(old.error().message.find(std::string(VIGIL_OLD_ORT_STUB) + "' is version 1.10.0"),
            std::string::npos)
      << old.error().message;
  EXPECT_NE(old.error().message.find("does not offer C API version"), std::string::npos);
}

// Runs the stage on the CPU (the real model), as a working NPU would, and then reports what the
// busy-time watch reports for a silent CPU fallback.
class SilentCpuRuntime final : public NpuRuntime {
 public:
  SilentCpuRuntime(const ModelManifest& m, int goodRuns) : goodRuns_(goodRuns) {
    stage_ = std::move(*loadCpuStage(m, *m.npuStage()));
    spec_ = *m.npuStage()->npu;
  }
  std::string describe() const override { return "silent-CPU double"; }
  Expected<void> openDevice() override { return {}; }
  Expected<void> load(const NpuStageSpec&, const std::filesystem::path&) override { return {}; }
  Expected<void> allocate() override {
    in_.resize(spec_.inputs[0].shape);
    out_.resize(spec_.outputs[0].shape);
    return {};
  }
  std::span<std::byte> buffer(int argIndex) override {
    return std::as_writable_bytes(std::span(argIndex == 0 ? in_.data : out_.data));
  }
  Expected<void> start() override {
    std::vector<Tensor> outs(1);
    if (auto ok = stage_->run(std::span(&in_, 1), outs); !ok) return ok;
    out_.data = outs[0].data;
    return {};
  }
  Expected<void> wait(std::chrono::milliseconds) override {
    if (++runs_ <= goodRuns_) return {};
    return makeError(ErrorCode::kNotOnNpu, "the NPU busy time stayed flat (double)");
  }
  void unload() override {}
  void closeDevice() override {}

 private:
  std::unique_ptr<CpuStage> stage_;
  NpuStageSpec spec_;
  Tensor in_;
  Tensor out_;
  int goodRuns_;
  int runs_ = 0;
};

TEST(VitisAiRouteTest, ASilentCpuPlacementIsAFallbackWithItsOwnReasonAndNoRetries) {
  auto manifest = loadModelManifest(npuModel("float"));
  ASSERT_TRUE(manifest) << manifest.error().message;
  NpuBackendConfig config;
  config.runtimeFactory = [&] { return std::make_unique<SilentCpuRuntime>(*manifest, 1); };
  const NpuStats& stats = npuStats();
  const auto retries = stats.retries.load();
  const auto before = stats.fallbackCount(FallbackReason::kNotOnNpu);
  auto backend = createAutoBackend(*manifest, BackendOptions{}, config);
  ASSERT_TRUE(backend) << backend.error().message;  // the canary passed: run 1
  EXPECT_TRUE(stats.npuActive.load());
  Tensor input;
  input.resize({1, 3, 416, 416});
  Tensor output;
  ASSERT_TRUE((*backend)->infer(input, output));  // run 2: flat, the CPU answers
  EXPECT_EQ(stats.fallbackCount(FallbackReason::kNotOnNpu), before + 1);
  EXPECT_EQ(stats.lastFallbackReason(), FallbackReason::kNotOnNpu);
  EXPECT_FALSE(stats.npuActive.load());
  EXPECT_EQ(stats.retries.load(), retries) << "no rung of the ladder moves work to the NPU";

  config.runtimeFactory = [&] { return std::make_unique<SilentCpuRuntime>(*manifest, 1); };
  auto strict = createNpuBackend(*manifest, BackendOptions{}, config);
  ASSERT_TRUE(strict) << strict.error().message;
  auto refused = (*strict)->infer(input, output);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kNotOnNpu);
}

TEST(VitisAiRouteTest, RunRefusesUnderNpuAndFallsBackLoudlyUnderAuto) {
  VIGIL_REQUIRE_VITISAI_RUNTIME();
  VIGIL_REQUIRE_MOSQUITTO();
  const auto clip = testing::videosDir() / "TUD-Campus.mp4";
  if (!std::filesystem::exists(clip)) GTEST_SKIP() << "clip absent: " << clip;
  TempDir dir;
  auto config = [&](const std::string& backend, const std::string& mqtt) {
    std::ofstream(dir.path() / "cameras.yaml")
        << "version: 1\ndetector:\n  model: " << npuModel("float").string()
        << "\n  backend: " << backend
        << "\n  vitisai: {cache_dir: " << (dir.path() / "cache").string()
        << "}\nhttp:\n  listen: 127.0.0.1:0\n"
        << mqtt << "cameras:\n  - {name: door, source: 'file:" << clip.string()
        << "', loop: true, detect_fps: 2}\n";
    return (dir.path() / "cameras.yaml").string();
  };
  testing::ChildProcess strict({VIGIL_BINARY, "run", "--config", config("npu", "")},
                               dir.path() / "strict.log");
  auto status = strict.wait(120s);
  ASSERT_TRUE(status.has_value()) << strict.log();
  EXPECT_NE(*status, 0);
  EXPECT_NE(strict.log().find("has no Vitis AI execution provider"), std::string::npos)
      << strict.log();

  testing::MosquittoBroker broker;
  ASSERT_TRUE(broker.start());
  testing::ChildProcess vigil(
      {VIGIL_BINARY, "run", "--config",
       config("auto", "mqtt:\n  url: " + broker.url() +
                          "\n  client_id: vigil-test\n  topic_prefix: vigil\n")},
      dir.path() / "auto.log");
  ASSERT_TRUE(vigil.waitForLog("/api/status on http://127.0.0.1:", 120s)) << vigil.log();
  std::smatch m;
  const std::string log = vigil.log();
  ASSERT_TRUE(std::regex_search(log, m, std::regex("on http://127\\.0\\.0\\.1:(\\d+)/"))) << log;
  EXPECT_NE(log.find("FALLING BACK TO THE CPU (npu_unavailable)"), std::string::npos) << log;
  const int port = std::stoi(m[1]);
  auto reply = testing::httpGet(port, "/api/status");
  ASSERT_TRUE(reply && reply->status == 200);
  const json backend = json::parse(reply->body)["backend"];
  EXPECT_EQ(backend["name"], "cpu-ort") << backend.dump();
  EXPECT_EQ(backend["last_fallback_reason"], "npu_unavailable") << backend.dump();
  EXPECT_TRUE(backend["npu_graph_nodes"].is_null()) << "no EP ever reported a placement";
  auto metrics = testing::httpGet(port, "/metrics");
  ASSERT_TRUE(metrics && metrics->status == 200);
  EXPECT_NE(metrics->body.find("vigil_backend_fallback_total{reason=\"npu_unavailable\"} 1\n"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("vigil_backend_fallback_total{reason=\"not_on_npu\"} 0\n"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("vigil_backend_info{backend=\"cpu-ort\""), std::string::npos);
  testing::expectPromtoolAccepts(metrics->body, dir.path());
  auto attributes = testing::waitForRetained(broker.url(), "vigil/status/attributes");
  ASSERT_TRUE(attributes.has_value()) << vigil.log();
  EXPECT_EQ(json::parse(*attributes)["last_fallback_reason"], "npu_unavailable");
  auto stopped = vigil.stop(SIGTERM);
  ASSERT_TRUE(stopped.status.has_value());
  EXPECT_EQ(*stopped.status, 0) << vigil.log();
}

TEST(VitisAiRouteTest, DoctorListsTheVitisAiState) {
  VIGIL_REQUIRE_VITISAI_RUNTIME();
  TempDir dir;
  testing::ChildProcess doctor(
      {VIGIL_BINARY, "doctor", "--verbose", "--model", npuModel("xint8").string()},
      dir.path() / "doctor.log");
  auto status = doctor.wait(60s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << doctor.log();  // the bundle is valid; the machine has no NPU
  const std::string out = doctor.log();
  EXPECT_NE(out.find("vitisai          NOT USABLE: the ONNX Runtime at"), std::string::npos) << out;
  EXPECT_NE(out.find("vitisai target   unknown: no NPU recognised"), std::string::npos) << out;
  EXPECT_NE(out.find("verdict          no NPU on this machine: Vigil runs on the CPU"),
            std::string::npos)
      << "what the NPU's needs mean on a CPU-only box\n"
      << out;
  EXPECT_EQ(out.find("problem "), std::string::npos)
      << "no NPU here: what one would need is said \"for an NPU\", not as problems\n"
      << out;
  EXPECT_NE(out.find("for an NPU       /dev/accel/accel0: no NPU device node"), std::string::npos)
      << out;
  // ONNX Runtime's own error for the missing EP (its coloured line on standard error, outside
  // the log) would only repeat the vitisai line.
  EXPECT_EQ(out.find("onnxruntime:vigil-npu"), std::string::npos) << out;
  EXPECT_EQ(out.find("ONNX Runtime (vigil-npu)"), std::string::npos) << out;
  EXPECT_NE(out.find("for ONNX Runtime's Vitis AI EP (int8 compiler, at least 113 nodes on the "
                     "NPU), canary canary.jpg"),
            std::string::npos)
      << out;
  // What auto runs on the CPU: the bundle's twin, the float model.
  EXPECT_NE(out.find("cpu twin         yolox-nano ("), std::string::npos) << out;
  EXPECT_NE(out.find("sha256 checked: auto runs it on the CPU"), std::string::npos) << out;
}

// With --config, doctor uses the service's Vitis AI settings: the configuration's ONNX Runtime
// (for the state line and the canary), target and cache directory; --onnxruntime still wins.
TEST(VitisAiRouteTest, DoctorTakesTheVitisAiSettingsFromTheConfiguration) {
  VIGIL_REQUIRE_VITISAI_RUNTIME();
  TempDir dir;
  std::ofstream(dir.path() / "door.mp4") << "frames";
  const std::string noOrt = (dir.path() / "no-ort").string();
  const std::string cache = (dir.path() / "vitisai-cache").string();
  const std::string file = (dir.path() / "cameras.yaml").string();
  std::ofstream(file) << "version: 1\nnode: hall\ndetector:\n  model: "
                      << npuModel("xint8").string() << "\n  onnxruntime: " << noOrt
                      << "\n  vitisai:\n    target: X2\n"
                      << "    cache_dir: " << cache
                      << "\ncameras:\n  - name: door\n    source: 'file:door.mp4'\n";
  auto run = [&](std::vector<std::string> extra, const char* log) {
    std::vector<std::string> args{VIGIL_BINARY, "doctor", "--config", file, "--run-canary"};
    args.insert(args.end(), extra.begin(), extra.end());
    testing::ChildProcess doctor(args, dir.path() / log);
    auto status = doctor.wait(120s);
    return std::make_pair(status.value_or(-1), doctor.log());
  };
  auto [status, out] = run({}, "doctor.log");
  EXPECT_EQ(status, 1) << out;  // the canary cannot run: no ONNX Runtime where the file says
  for (const std::string& want :
       {"vitisai from     " + file + " (detector.onnxruntime, detector.vitisai)",
        "vitisai          NOT USABLE: cannot load ONNX Runtime '" + noOrt + "'",
        std::string("vitisai target   X2 (detector.vitisai.target)"),
        "vitisai cache    " + cache + " (created at first compile)",
        "canary           FAILED: cannot open the NPU (ONNX Runtime Vitis AI EP (" + noOrt +
            ")): cannot load ONNX Runtime '" + noOrt + "'"}) {
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
  }
  auto [overridden, out2] = run({"--onnxruntime", VIGIL_ORT_LIBRARY}, "doctor2.log");
  EXPECT_EQ(overridden, 1) << out2;
  EXPECT_NE(out2.find("vitisai          NOT USABLE: the ONNX Runtime at"), std::string::npos)
      << out2;
  EXPECT_NE(out2.find("has no Vitis AI execution provider"), std::string::npos) << out2;
  EXPECT_NE(out2.find("vitisai cache    " + cache), std::string::npos) << out2;
}

// `vigil npu compile` with the real ONNX Runtime C API: the settings come from the file (its
// cache_dir, its ONNX Runtime, overridden by --onnxruntime); here the EP is absent, so it is
// refused with what to install and writes no EP-context model; a bundle with no Vitis AI stage
// is refused naming why. (Where the EP-context model goes, how it is written and when a session
// takes it: VitisAiPlanTest.TheEpContextModelIsKeyedLikeTheCacheAndUsedWhenPresent.)
TEST(VitisAiRouteTest, CompileRefusesWithoutTheEpAndWritesNothing) {
  VIGIL_REQUIRE_VITISAI_RUNTIME();
  TempDir dir;
  const std::string cache = (dir.path() / "vitisai-cache").string();
  const std::string file = (dir.path() / "cameras.yaml").string();
  std::ofstream(dir.path() / "door.mp4") << "frames";
  std::ofstream(file) << "version: 1\ndetector:\n  model: " << npuModel("xint8").string()
                      << "\n  onnxruntime: " << (dir.path() / "no-ort").string()
                      << "\n  vitisai:\n    target: X2\n    cache_dir: " << cache
                      << "\ncameras:\n  - name: door\n    source: 'file:door.mp4'\n";
  auto compile = [&](std::vector<std::string> args, const char* log) {
    args.insert(args.begin(), {VIGIL_BINARY, "npu", "compile"});
    testing::ChildProcess cmd(args, dir.path() / log);
    const int status = cmd.wait(120s).value_or(-1);  // before the log is read
    return std::make_pair(status, cmd.log());
  };
  auto [noOrt, said] = compile({npuModel("xint8").string(), "--config", file}, "a.log");
  EXPECT_EQ(noOrt, 1) << said;
  EXPECT_NE(said.find("cannot load ONNX Runtime '" + (dir.path() / "no-ort").string()),
            std::string::npos)
      << "the file's detector.onnxruntime was used\n"
      << said;
  auto [noEp, said2] = compile(
      {npuModel("xint8").string(), "--config", file, "--onnxruntime", VIGIL_ORT_LIBRARY}, "b.log");
  EXPECT_EQ(noEp, 1) << said2;
  EXPECT_NE(said2.find("has no Vitis AI execution provider"), std::string::npos) << said2;
  EXPECT_NE(said2.find("docs/ryzen-ai.md"), std::string::npos) << said2;
  std::error_code ec;
  EXPECT_FALSE(std::filesystem::exists(cache, ec) && !std::filesystem::is_empty(cache, ec))
      << "nothing written to " << cache;
  auto [notVitisAi, said3] = compile({testing::modelDir().string()}, "c.log");
  EXPECT_EQ(notVitisAi, 1) << said3;
  EXPECT_NE(said3.find("no stage runs on the Vitis AI EP"), std::string::npos) << said3;
}

// The field report on this machine: every shipped bundle refused with its reason, cpu-ort's
// figures for each, the versions; --out writes what --json prints; nothing of the
// configuration's secrets in it.
TEST(VitisAiRouteTest, SelftestReportsEveryBundleRefusedWithItsReasonAndTheCpuFigures) {
  VIGIL_REQUIRE_VITISAI_RUNTIME();
  TempDir dir;
  std::ofstream(dir.path() / "door.mp4") << "frames";
  std::ofstream(dir.path() / "mqtt.secret") << "s3cr3t-pw\n";
  std::filesystem::permissions(dir.path() / "mqtt.secret", std::filesystem::perms::owner_read |
                                                               std::filesystem::perms::owner_write);
  const std::string config = (dir.path() / "cameras.yaml").string();
  std::ofstream(config) << "version: 1\nnode: hall\nmqtt:\n  url: mqtt://127.0.0.1:1\n"
                        << "  username: hall\n  password_file: mqtt.secret\ncameras:\n"
                        << "  - name: door\n    source: 'rtsp://admin:cam-pw@127.0.0.1:1/live'\n";
  const std::string out = (dir.path() / "report.json").string();
  testing::ChildProcess selftest(
      {VIGIL_BINARY, "npu", "selftest", "--json", "--out", out, "--iterations", "3", "--model",
       npuModel("xint8").parent_path().string(), "--config", config},
      dir.path() / "selftest.log");
  auto status = selftest.wait(300s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << selftest.log();
  std::ifstream in(out);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  json report = json::parse(text);
  EXPECT_NE(selftest.log().find(report.dump(2)), std::string::npos) << "--json prints --out's";
  for (const char* key : {"kernel", "amdxdna", "firmware", "xrt", "onnxruntime", "vitisai_ep"}) {
    EXPECT_TRUE(report["versions"].contains(key)) << key;
  }
  EXPECT_NE(report["versions"]["onnxruntime"].get<std::string>().find("ONNX Runtime"),
            std::string::npos);
  std::set<std::string> names;
  for (const json& b : report["bundles"]) {
    const std::string name = b["name"];
    names.insert(name);
    EXPECT_EQ(b["outcome"], "refused") << name;
    EXPECT_NE(b["why"].get<std::string>().find("has no Vitis AI execution provider"),
              std::string::npos)
        << name;
    EXPECT_FALSE(b.contains("npu")) << name;
    const json& cpu = report["cpu-ort"]["bundles"][name];
    EXPECT_EQ(cpu["inferences"], 3) << name;
    EXPECT_GT(cpu["latency_ms"]["median"].get<double>(), 0.0) << name;
    EXPECT_GT(cpu["host_cpu_ms_per_inference"].get<double>(), 0.0) << name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"yolox-nano-npu-a16w8", "yolox-nano-npu-a8w8",
                                          "yolox-nano-npu-float", "yolox-nano-npu-xint8"}));
  for (const char* secret : {"s3cr3t-pw", "cam-pw", "admin"}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret;
  }
}

}  // namespace
}  // namespace vigil
