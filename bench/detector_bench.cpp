// Micro-benchmarks of the detector's stages on a real photograph (COCO val2017 #1000, 640x480)
// and the real YOLOX-nano model. Run: build/bench/vigil_detector_bench
// The stage figures `vigil bench` prints come from the same code through the Detector facade.
#include <benchmark/benchmark.h>

#include <opencv2/imgcodecs.hpp>

#include "detector/backend.h"
#include "detector/nms.h"
#include "detector/preprocess.h"
#include "detector/verify.h"
#include "detector/yolox_decode.h"

namespace vigil {
namespace {

struct Fixture {
  std::string error;
  ModelManifest manifest;
  cv::Mat image;
  std::unique_ptr<InferenceBackend> backend;
  Tensor input;
  Tensor output;
  LetterboxInfo letterbox;

  Fixture() {
    auto m = loadModelManifest(VIGIL_MODEL_DIR);
    if (!m) {
      error = m.error().message;
      return;
    }
    manifest = *m;
    image = cv::imread(VIGIL_SHARED_DIR "/data/coco-person-dev/images/000000001000.jpg");
    if (image.empty()) {
      error =
          "photograph absent: " VIGIL_SHARED_DIR "/data/coco-person-dev/images/000000001000.jpg";
      return;
    }
    auto b = createBackend("cpu", manifest, BackendOptions{});
    if (!b) {
      error = b.error().message;
      return;
    }
    backend = std::move(*b);
    Letterbox lb(manifest.input);
    letterbox = lb.run(image, input);
    if (auto ok = backend->infer(input, output); !ok) error = ok.error().message;
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_Letterbox(benchmark::State& state) {
  Fixture& f = fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  Letterbox lb(f.manifest.input);
  Tensor t;
  for (auto _ : state) benchmark::DoNotOptimize(lb.run(f.image, t));
}
BENCHMARK(BM_Letterbox)->Unit(benchmark::kMicrosecond);

void BM_Inference(benchmark::State& state) {
  Fixture& f = fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  Tensor out;
  for (auto _ : state) benchmark::DoNotOptimize(f.backend->infer(f.input, out));
}
BENCHMARK(BM_Inference)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_FiniteCheck(benchmark::State& state) {
  Fixture& f = fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  for (auto _ : state) benchmark::DoNotOptimize(checkFinite(f.output.values(), "bench"));
}
BENCHMARK(BM_FiniteCheck)->Unit(benchmark::kMicrosecond);

// Decode + NMS at the daemon's threshold (0.3) and at the evaluation threshold (0.01), where
// far more candidates reach NMS.
void BM_DecodeNms(benchmark::State& state) {
  Fixture& f = fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  YoloxDecoder decoder(f.manifest.input, f.manifest.postprocess);
  std::vector<bool> wanted(80, false);
  wanted[0] = true;
  const float minScore = static_cast<float>(state.range(0)) / 100.0F;
  std::vector<Detection> candidates;
  std::vector<Detection> kept;
  std::vector<int> order;
  for (auto _ : state) {
    decoder.decode(f.output, f.letterbox, minScore, wanted, candidates);
    nonMaximumSuppression(candidates, 0.45F, 100, order, kept);
    benchmark::DoNotOptimize(kept.data());
  }
  state.counters["candidates"] = static_cast<double>(candidates.size());
  state.counters["kept"] = static_cast<double>(kept.size());
}
BENCHMARK(BM_DecodeNms)->Arg(30)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
