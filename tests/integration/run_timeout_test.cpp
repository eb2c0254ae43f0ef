// The run timeout of the ONNX Runtime NPU path with the real runtime: ONNX Runtime's CPU provider
// behind the NPU runtime seam (the Vitis AI runtime's session, buffers and watchdog, without the
// EP; nothing runs on an NPU) on a vitisai stage slow on purpose (tests/tools/make_slow_stage.py:
// its loop runs as many times as its picture is bright, so the black canary costs nothing and a
// bright frame as long as a wedged NPU). A run past timeout_ms is cut through ONNX Runtime's
// terminate flag, climbs the ladder (a new session, then a reopened device, each vetted by the
// canary) and under `auto` falls back with the reason `timeout`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "detector/npu/npu_backend.h"
#include "detector/npu/npu_stage.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// What a cut run may take beyond its timeout: one loop iteration is well under a millisecond,
// the rest is a loaded machine's scheduling.
constexpr auto kMargin = 2000ms;

std::chrono::milliseconds since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
}

class RunTimeoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.runtimeFactory = ortCpuStageRuntimeFactory({});
    if (!config_.runtimeFactory) GTEST_SKIP() << "this build has no ONNX Runtime";
    auto m = loadModelManifest(VIGIL_SLOW_STAGE_BUNDLE);
    ASSERT_TRUE(m) << m.error().message;
    manifest_ = std::move(*m);
    timeout_ = std::chrono::milliseconds(manifest_.npuStage()->npu->timeoutMs);
    config_.retryAfter = 60s;
    config_.now = [this] { return now_; };
  }

  // A picture as the stage takes it, every value `level` (0..255): the loop runs
  // level * iterations-per-level times.
  Tensor picture(float level) const {
    Tensor t;
    t.resize(manifest_.stages.front().inputs.front().shape);
    std::fill(t.data.begin(), t.data.end(), level);
    return t;
  }

  // One run of the stage on a fresh runtime at `level`, cut at `timeout`: how long it took.
  Expected<std::chrono::milliseconds> runOnce(NpuRuntime& runtime, float level,
                                              std::chrono::milliseconds timeout) const {
    const NpuStageSpec& spec = *manifest_.npuStage()->npu;
    Tensor in = picture(level);
    auto buffer = runtime.buffer(spec.arguments.front().index);
    std::memcpy(buffer.data(), in.data.data(), buffer.size());
    const auto t0 = Clock::now();
    if (auto ok = runtime.start(); !ok) return tl::unexpected(ok.error());
    if (auto ok = runtime.wait(timeout); !ok) return tl::unexpected(ok.error());
    return since(t0);
  }

  ModelManifest manifest_;
  NpuBackendConfig config_;
  Clock::time_point now_{};
  std::chrono::milliseconds timeout_{};
};

TEST_F(RunTimeoutTest, ARunPastItsTimeoutIsCutWithinAMarginAndTheSessionGoesOn) {
  auto runtime = config_.runtimeFactory();
  const NpuStageSpec& spec = *manifest_.npuStage()->npu;
  ASSERT_TRUE(runtime->openDevice());
  ASSERT_TRUE(runtime->load(spec, manifest_.directory()));
  ASSERT_TRUE(runtime->allocate());
  // How long the brightest frame would take, from a dim one run to its end: 255/4 times it.
  auto dim = runOnce(*runtime, 4, 600s);
  ASSERT_TRUE(dim) << dim.error().message;
  const auto uncut = *dim * 255 / 4;
  ASSERT_GT(uncut, 2 * (timeout_ + kMargin)) << "the fixture is too fast to show a cut";

  const auto t0 = Clock::now();
  auto cut = runOnce(*runtime, 255, timeout_);
  const auto took = since(t0);
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().code, ErrorCode::kTimeout);
  EXPECT_NE(cut.error().message.find("passed its timeout of " + std::to_string(timeout_.count()) +
                                     " ms and was cut"),
            std::string::npos)
      << cut.error().message;
  EXPECT_GE(took, timeout_);
  EXPECT_LT(took, timeout_ + kMargin) << "uncut it would take about " << uncut.count() << " ms";
  RecordProperty("cut_ms", static_cast<int>(took.count()));
  RecordProperty("uncut_estimate_ms", static_cast<int>(uncut.count()));

  // The terminate flag was the cut run's only: the same session answers the next frame.
  auto next = runOnce(*runtime, 0, timeout_);
  EXPECT_TRUE(next) << next.error().message;
}

TEST_F(RunTimeoutTest, NpuPolicyClimbsTheLadderWithCanariesThenFailsTheFrameAsATimeout) {
  auto npu = createNpuBackend(manifest_, {}, config_);
  ASSERT_TRUE(npu) << npu.error().message;  // the black canary passed at start
  const NpuStats& s = npuStats();
  const auto timeouts = s.timeouts.load();
  const auto contexts = s.contextRecreations.load();
  const auto reopens = s.deviceReopens.load();
  const auto canaries = s.canaryRuns.load();
  const auto canaryFailures = s.canaryFailures.load();
  Tensor out;
  const auto t0 = Clock::now();
  auto r = (*npu)->infer(picture(255), out);
  const auto took = since(t0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kTimeout);
  EXPECT_NE(r.error().message.find("a new context and a reopened device"), std::string::npos)
      << r.error().message;
  // The frame, again on a new session, again on a reopened device: three cut runs, no retry on
  // the session that hung; each new session passed the canary before the frame ran on it.
  EXPECT_EQ(s.timeouts.load() - timeouts, 3U);
  EXPECT_EQ(s.contextRecreations.load() - contexts, 1U);
  EXPECT_EQ(s.deviceReopens.load() - reopens, 1U);
  EXPECT_EQ(s.canaryRuns.load() - canaries, 2U);
  EXPECT_EQ(s.canaryFailures.load() - canaryFailures, 0U);
  EXPECT_LT(took, 3 * (timeout_ + kMargin));

  // The session the ladder left answers the next frame.
  ASSERT_TRUE((*npu)->infer(picture(1), out));
  EXPECT_FLOAT_EQ(out.data.front(), 1.0F);
}

TEST_F(RunTimeoutTest, AutoFallsBackWithTheReasonTimeoutAndTheCpuAnswers) {
  auto backend = createAutoBackend(manifest_, {}, config_);
  ASSERT_TRUE(backend) << backend.error().message;
  ASSERT_EQ((*backend)->device().find("NPU not in use"), std::string::npos) << (*backend)->device();
  const NpuStats& s = npuStats();
  const auto before = s.fallbackCount(FallbackReason::kTimeout);
  const auto contexts = s.contextRecreations.load();
  const auto canaries = s.canaryRuns.load();
  // Bright enough to pass the timeout, dim enough for the CPU to answer it in a few seconds.
  Tensor out;
  ASSERT_TRUE((*backend)->infer(picture(16), out));
  EXPECT_FLOAT_EQ(out.data.front(), 16.0F);  // the CPU's answer
  EXPECT_EQ(s.fallbackCount(FallbackReason::kTimeout) - before, 1U);
  EXPECT_EQ(s.lastFallbackReason(), FallbackReason::kTimeout);
  EXPECT_EQ(s.contextRecreations.load() - contexts, 1U);
  EXPECT_EQ(s.canaryRuns.load() - canaries, 2U);
  EXPECT_FALSE(s.npuActive.load());
  EXPECT_NE((*backend)->device().find("NPU not in use: timeout"), std::string::npos)
      << (*backend)->device();
  EXPECT_EQ(fallbackReasonName(FallbackReason::kTimeout), "timeout");
}

// A canary cut at its timeout compared no numbers: the start fails as a timeout, not as a
// wrong answer (before, a failed run of a photograph canary was canary_failed).
TEST_F(RunTimeoutTest, ACanaryThatHangsIsATimeoutNotAWrongAnswer) {
  auto m = loadModelManifest(std::string(VIGIL_SLOW_STAGE_BUNDLE) + "-slow-canary");
  ASSERT_TRUE(m) << m.error().message;
  const NpuStats& s = npuStats();
  const auto failures = s.canaryFailures.load();
  const auto before = s.fallbackCount(FallbackReason::kTimeout);
  auto npu = createNpuBackend(*m, {}, config_);
  ASSERT_FALSE(npu);
  EXPECT_EQ(npu.error().code, ErrorCode::kTimeout) << npu.error().message;
  auto backend = createAutoBackend(*m, {}, config_);
  ASSERT_TRUE(backend) << backend.error().message;
  EXPECT_NE((*backend)->device().find("NPU not in use: timeout"), std::string::npos)
      << (*backend)->device();
  EXPECT_EQ(s.fallbackCount(FallbackReason::kTimeout) - before, 1U);
  EXPECT_EQ(s.canaryFailures.load() - failures, 0U);
}

}  // namespace
}  // namespace vigil
