// The NPU backend on the real model bundle: the real XRT 2.13 library under its noop shim
// (nothing runs on an NPU; outputs are recorded CPU results replayed into the output buffers)
// and the fault-injecting runtime, the only fake, for timeouts, run errors and NaN.
#include <gtest/gtest.h>

#include <deque>
#include <future>
#include <map>
#include <sstream>

#include "daemon/base/metrics.h"
#include "daemon/commands/bench_command.h"
#include "daemon/commands/eval_command.h"
#include "daemon/pipeline/backend_status.h"
#include "detector/detector.h"
#include "detector/verify.h"
#include "foundation/background_work.h"
#include "tests/npu/npu_fixtures.h"
#include "tests/wait.h"
#ifdef VIGIL_WITH_XRT
#include "detector/npu/npu_buffer_files.h"
#include "detector/npu/xrt_runtime.h"
#endif

namespace vigil {
namespace {

using testing::npuBundle;

// ---------------------------------------------------------------------------------------------
// The fault-injecting runtime: host buffers; a run computes the backbone on the CPU reference
// (so the canary passes) unless the script says time out, fail, return NaN or garbage.
enum class Outcome { kOk, kTimeout, kError, kNan, kGarbage };

struct FaultScript {
  std::deque<Outcome> outcomes;  // consumed per run; empty: `steady`
  Outcome steady = Outcome::kOk;
  bool failOpen = false;
  // When valid, opening the device waits for it: a bring-up that takes its time (a real NPU's
  // open, load and canary take seconds), which this runtime cannot otherwise be.
  std::shared_future<void> openGate;
  int opens = 0;
  int loads = 0;
};

class FaultRuntime final : public NpuRuntime {
 public:
  FaultRuntime(std::shared_ptr<FaultScript> script, const ModelManifest& m)
      : script_(std::move(script)), stage_(*m.npuStage()) {
    reference_ = std::move(*OnnxStage::load(m.directory() / stage_.file, stage_));
    in_.resize(1);
    in_[0].resize(stage_.inputs[0].shape);
    out_.resize(stage_.outputs.size());
  }
  std::string describe() const override { return "fault-injecting runtime"; }
  Expected<void> openDevice() override {
    if (script_->openGate.valid()) script_->openGate.wait();
    ++script_->opens;
    if (script_->failOpen) return makeError(ErrorCode::kUnavailable, "injected: no device");
    return {};
  }
  Expected<void> load(const NpuStageSpec& spec, const std::filesystem::path&) override {
    ++script_->loads;
    spec_ = &spec;
    return {};
  }
  Expected<void> allocate() override {
    for (const NpuArgument& a : spec_->arguments) {
      if (a.bytes > 0) buffers_[a.index].assign(a.bytes, std::byte{0});
    }
    return {};
  }
  std::span<std::byte> buffer(int i) override { return buffers_[i]; }
  Expected<void> start() override {
    outcome_ = script_->outcomes.empty() ? script_->steady : script_->outcomes.front();
    if (!script_->outcomes.empty()) script_->outcomes.pop_front();
    if (outcome_ == Outcome::kError) return makeError(ErrorCode::kBackendFailure, "injected");
    return {};
  }
  Expected<void> wait(std::chrono::milliseconds timeout) override {
    if (outcome_ == Outcome::kTimeout) {
      return makeError(ErrorCode::kTimeout, "injected: no completion in {} ms", timeout.count());
    }
    const NpuArgument* in = nullptr;
    for (const NpuArgument& a : spec_->arguments) {
      if (a.role == NpuArgRole::kInput) in = &a;
    }
    EXPECT_TRUE(unpackTensor(buffers_[in->index], spec_->inputs[0], in_[0]));
    EXPECT_TRUE(reference_->run(in_, out_));
    std::size_t o = 0;
    for (const NpuArgument& a : spec_->arguments) {
      if (a.role != NpuArgRole::kOutput) continue;
      if (outcome_ == Outcome::kNan) out_[o].data[17] = std::numeric_limits<float>::quiet_NaN();
      if (outcome_ == Outcome::kGarbage) {
        for (float& v : out_[o].data) v += 0.5F;
      }
      EXPECT_TRUE(packTensor(out_[o], spec_->outputs[o], buffers_[a.index]));
      ++o;
    }
    return {};
  }
  void unload() override { buffers_.clear(); }
  void closeDevice() override {}

 private:
  std::shared_ptr<FaultScript> script_;
  const StageSpec& stage_;
  const NpuStageSpec* spec_ = nullptr;
  std::unique_ptr<OnnxStage> reference_;
  std::map<int, std::vector<std::byte>> buffers_;
  std::vector<Tensor> in_;
  std::vector<Tensor> out_;
  Outcome outcome_ = Outcome::kOk;
};

// What every runtime's allocate() prepares and syncs to the device before the first run (the
// syncs themselves cannot be seen under the noop shim, which keeps no device copy).
TEST(NpuRuntimeContractTest, AllocateClearsOutputsAndScratchAndUploadsWhatTheKernelReads) {
  EXPECT_EQ(initialContentOf(NpuArgRole::kOutput), InitialContent::kZeros);
  EXPECT_EQ(initialContentOf(NpuArgRole::kScratch), InitialContent::kZeros);
  EXPECT_EQ(initialContentOf(NpuArgRole::kInstructions), InitialContent::kInstructions);
  EXPECT_EQ(initialContentOf(NpuArgRole::kWeights), InitialContent::kWeights);
  for (NpuArgRole r : {NpuArgRole::kOpcode, NpuArgRole::kInstructionCount, NpuArgRole::kInput}) {
    EXPECT_EQ(initialContentOf(r), InitialContent::kNone) << static_cast<int>(r);
  }
}

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    VIGIL_REQUIRE_NPU_BUNDLE();
    VIGIL_REQUIRE_COCO();
    manifest_ = std::move(*loadModelManifest(npuBundle()));
    config_.runtimeFactory = [this] { return std::make_unique<FaultRuntime>(script_, manifest_); };
    config_.retryAfter = std::chrono::seconds(60);
    config_.now = [this] { return now_; };
    testing::Recorder rec(manifest_);
    input_ = rec.input(cv::imread(testing::cocoImages(1)[0].string()));
    auto cpu = createBackend("cpu", manifest_, {});
    ASSERT_TRUE(cpu);
    ASSERT_TRUE((*cpu)->infer(input_, cpuOutput_));
    // What auto answers with when the NPU cannot: the best CPU backend of this build.
    auto fallback = createCpuBackend(manifest_, {});
    ASSERT_TRUE(fallback);
    ASSERT_TRUE((*fallback)->infer(input_, fallbackOutput_));
  }

  std::uint64_t fallbacks(FallbackReason r) const { return npuStats().fallbackCount(r); }

  // Makes `backend` (auto) fall back to the CPU, then makes the NPU's retry due with its open
  // held until `gate` is set (a bring-up that takes its time).
  void fallBackAndHoldTheRetry(InferenceBackend& backend, std::promise<void>& gate) {
    script_->steady = Outcome::kError;
    Tensor out;
    ASSERT_TRUE(backend.infer(input_, out));
    ASSERT_FALSE(npuStats().npuActive.load()) << "fell back";
    script_->steady = Outcome::kOk;
    script_->openGate = gate.get_future().share();
    now_ += std::chrono::seconds(61);  // the retry is due; its open now waits for the gate
  }

  ModelManifest manifest_;
  std::shared_ptr<FaultScript> script_ = std::make_shared<FaultScript>();
  NpuBackendConfig config_;
  std::chrono::steady_clock::time_point now_{};
  Tensor input_;
  Tensor cpuOutput_;       // the OpenCV reference, which also runs the NPU bundle's CPU stage
  Tensor fallbackOutput_;  // the CPU backend auto falls back to
};

// A timed-out run's context is gone (the driver reset it): no retry on it, a new context at
// once, then a reopened device, each vetted by the canary. A run error is retried on the same
// context first.
TEST_F(FaultTest, TimeoutsSkipTheRetryAndClimbUntilARunSucceeds) {
  auto npu = createNpuBackend(manifest_, {}, config_);
  ASSERT_TRUE(npu) << npu.error().message;
  NpuStats& s = npuStats();
  auto retries = s.retries.load();
  auto contexts = s.contextRecreations.load();
  auto reopens = s.deviceReopens.load();
  auto timeouts = s.timeouts.load();
  auto canaries = s.canaryRuns.load();
  int loads = script_->loads;
  int opens = script_->opens;
  // The frame times out; the new context passes its canary, but the frame times out again; the
  // reopened device passes its canary and answers the frame.
  script_->outcomes = {Outcome::kTimeout, Outcome::kOk, Outcome::kTimeout};
  Tensor out;
  ASSERT_TRUE((*npu)->infer(input_, out));
  EXPECT_EQ(s.timeouts.load() - timeouts, 2U);
  EXPECT_EQ(s.retries.load() - retries, 0U);
  EXPECT_EQ(s.contextRecreations.load() - contexts, 1U);
  EXPECT_EQ(s.deviceReopens.load() - reopens, 1U);
  EXPECT_EQ(s.canaryRuns.load() - canaries, 2U);
  EXPECT_EQ(script_->loads, loads + 2);  // the contexts were really recreated
  EXPECT_EQ(script_->opens, opens + 1);
  EXPECT_LE(maxAbsDiff(out.values(), cpuOutput_.values()), 1e-4F);

  script_->outcomes = {Outcome::kError, Outcome::kOk};
  ASSERT_TRUE((*npu)->infer(input_, out));
  EXPECT_EQ(s.retries.load() - retries, 1U);
  EXPECT_EQ(script_->loads, loads + 2);
  EXPECT_EQ(s.canaryRuns.load() - canaries, 2U) << "a retry on the same context needs no canary";
}

// A context or device the ladder made is trusted only after it passes the canary: one that
// computes wrong numbers fails the frame (npu) or sends auto to the CPU with canary_failed.
TEST_F(FaultTest, ARecreatedContextOrDeviceMustPassTheCanary) {
  auto npu = createNpuBackend(manifest_, {}, config_);
  ASSERT_TRUE(npu) << npu.error().message;
  auto failures = npuStats().canaryFailures.load();
  // The frame fails, so does its retry; the new context's canary gets plausible garbage.
  script_->outcomes = {Outcome::kError, Outcome::kError, Outcome::kGarbage};
  Tensor out;
  auto r = (*npu)->infer(input_, out);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("a new context failed the canary: NPU canary failed"),
            std::string::npos)
      << r.error().message;
  EXPECT_EQ(npuStats().canaryFailures.load() - failures, 1U);

  auto autoBackend = createAutoBackend(manifest_, {}, config_);
  ASSERT_TRUE(autoBackend);
  auto before = fallbacks(FallbackReason::kCanaryFailed);
  auto reopens = npuStats().deviceReopens.load();
  // Frame and retry fail; the new context passes its canary but fails the frame; the reopened
  // device's canary gets garbage.
  script_->outcomes = {Outcome::kError, Outcome::kError, Outcome::kOk, Outcome::kError,
                       Outcome::kGarbage};
  ASSERT_TRUE((*autoBackend)->infer(input_, out));  // answered by the CPU
  EXPECT_EQ(maxAbsDiff(out.values(), fallbackOutput_.values()), 0.0F);
  EXPECT_EQ(fallbacks(FallbackReason::kCanaryFailed) - before, 1U);
  EXPECT_EQ(npuStats().deviceReopens.load() - reopens, 1U);
  EXPECT_NE((*autoBackend)->device().find("canary_failed"), std::string::npos);
}

TEST_F(FaultTest, NpuPolicyFailsTheFrameWhenTheWholeLadderFails) {
  auto npu = createNpuBackend(manifest_, {}, config_);
  ASSERT_TRUE(npu);
  auto reopens = npuStats().deviceReopens.load();
  int opens = script_->opens;
  script_->steady = Outcome::kError;
  Tensor out;
  auto r = (*npu)->infer(input_, out);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("reopened device"), std::string::npos) << r.error().message;
  EXPECT_EQ(npuStats().deviceReopens.load() - reopens, 1U);
  EXPECT_EQ(script_->opens, opens + 1);
}

TEST_F(FaultTest, AutoFallsBackToTheCpuOnRunFailureAndRetriesLater) {
  auto autoBackend = createAutoBackend(manifest_, {}, config_);
  ASSERT_TRUE(autoBackend);
  EXPECT_EQ((*autoBackend)->device().find("NPU not in use"), std::string::npos);
  auto before = fallbacks(FallbackReason::kRunFailed);
  script_->steady = Outcome::kError;
  Tensor out;
  ASSERT_TRUE((*autoBackend)->infer(input_, out));  // answered by the CPU
  EXPECT_EQ(maxAbsDiff(out.values(), fallbackOutput_.values()), 0.0F);
  EXPECT_EQ(fallbacks(FallbackReason::kRunFailed) - before, 1U);
  EXPECT_NE((*autoBackend)->device().find("run_failed"), std::string::npos);
  EXPECT_FALSE(npuStats().npuActive.load());

  // Before retryAfter the NPU is left alone; after it, a healthy NPU is brought up in the
  // background and used again from the frame after it is ready.
  script_->steady = Outcome::kOk;
  int opens = script_->opens;
  ASSERT_TRUE((*autoBackend)->infer(input_, out));
  EXPECT_EQ(script_->opens, opens);
  now_ += std::chrono::seconds(61);
  EXPECT_TRUE(testing::waitUntil([&] {
    EXPECT_TRUE((*autoBackend)->infer(input_, out));
    return npuStats().npuActive.load();
  }));
  EXPECT_EQ(script_->opens, opens + 1);
  EXPECT_EQ((*autoBackend)->device().find("NPU not in use"), std::string::npos);
}

// Bringing the NPU up again (open, load, canary: seconds on a real device) happens beside the
// inference thread, not on it: every frame meanwhile is answered by the CPU at once.
TEST_F(FaultTest, TheNpuRetryRunsBesideTheFramesNotInTheirWay) {
  auto autoBackend = createAutoBackend(manifest_, {}, config_);
  ASSERT_TRUE(autoBackend);
  std::promise<void> gate;
  ASSERT_NO_FATAL_FAILURE(fallBackAndHoldTheRetry(**autoBackend, gate));
  Tensor out;
  for (int frame = 0; frame < 3; ++frame) {
    auto answered = std::async(std::launch::async,
                               [&] { return (*autoBackend)->infer(input_, out).has_value(); });
    if (answered.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      gate.set_value();  // let the stuck frame finish before failing
      FAIL() << "frame " << frame << " waited for the NPU's bring-up";
    }
    ASSERT_TRUE(answered.get());
    EXPECT_EQ(maxAbsDiff(out.values(), fallbackOutput_.values()), 0.0F) << "answered by the CPU";
    EXPECT_FALSE(npuStats().npuActive.load());
  }
  gate.set_value();
  EXPECT_TRUE(testing::waitUntil([&] {
    EXPECT_TRUE((*autoBackend)->infer(input_, out));
    return npuStats().npuActive.load();
  })) << "the NPU, up again, answers";
}

// The daemon's stop while the NPU is being brought up again (open, load, canary: seconds on a
// real device, forever on a hung one): the backend goes without waiting for it. The bring-up
// runs on detached, counted (background_work.h) until it ends, so that the daemon's process
// ends with std::_Exit meanwhile. Before the stop, the backend's end waits (a reload must
// release the NPU before opening it again).
TEST_F(FaultTest, AtTheProcessEndTheNpuBringUpIsNotWaitedFor) {
  auto autoBackend = createAutoBackend(manifest_, {}, config_);
  ASSERT_TRUE(autoBackend);
  std::promise<void> gate;
  ASSERT_NO_FATAL_FAILURE(fallBackAndHoldTheRetry(**autoBackend, gate));
  Tensor out;
  ASSERT_TRUE((*autoBackend)->infer(input_, out));  // the retry starts; its open waits
  background::processEnding();
  auto gone = std::async(std::launch::async, [&] { autoBackend->reset(); });
  const bool waited = gone.wait_for(std::chrono::seconds(5)) != std::future_status::ready;
  EXPECT_FALSE(waited) << "the backend's end waited for the NPU's bring-up";
  EXPECT_EQ(background::detachedRunning(), waited ? 0 : 1);
  gate.set_value();
  gone.wait();
  EXPECT_TRUE(testing::waitUntil([] { return background::detachedRunning() == 0; }))
      << "the bring-up, let go, ends and says so";
  background::detail::ending = false;  // the next tests in this process are not ending
}

TEST_F(FaultTest, NanOutputIsRefusedAndAutoFallsBack) {
  auto npu = createNpuBackend(manifest_, {}, config_);
  ASSERT_TRUE(npu);
  script_->outcomes = {Outcome::kNan};
  Tensor out;
  auto r = (*npu)->infer(input_, out);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidOutput);

  auto autoBackend = createAutoBackend(manifest_, {}, config_);
  ASSERT_TRUE(autoBackend);
  auto before = fallbacks(FallbackReason::kInvalidOutput);
  script_->outcomes = {Outcome::kNan};
  ASSERT_TRUE((*autoBackend)->infer(input_, out));
  EXPECT_EQ(fallbacks(FallbackReason::kInvalidOutput) - before, 1U);
  EXPECT_EQ(maxAbsDiff(out.values(), fallbackOutput_.values()), 0.0F);
}

TEST_F(FaultTest, PeriodicCanaryCatchesAnNpuThatTurnsWrong) {
  auto npu = createNpuBackend(manifest_, {}, config_);
  ASSERT_TRUE(npu);
  Tensor out;
  script_->steady = Outcome::kGarbage;      // plausible, finite, wrong
  ASSERT_TRUE((*npu)->infer(input_, out));  // no canary due: a wrong frame is not detectable
  auto failures = npuStats().canaryFailures.load();
  now_ += std::chrono::seconds(manifest_.npuStage()->npu->canaryIntervalS);
  auto r = (*npu)->infer(input_, out);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("canary failed"), std::string::npos) << r.error().message;
  EXPECT_EQ(npuStats().canaryFailures.load() - failures, 1U);
}

TEST_F(FaultTest, MissingDeviceFailsNpuAndAutoSaysWhy) {
  script_->failOpen = true;
  auto npu = createNpuBackend(manifest_, {}, config_);
  ASSERT_FALSE(npu);
  EXPECT_NE(npu.error().message.find("cannot open the NPU"), std::string::npos);
  auto before = fallbacks(FallbackReason::kNpuUnavailable);
  auto autoBackend = createAutoBackend(manifest_, {}, config_);
  ASSERT_TRUE(autoBackend);
  EXPECT_EQ(fallbacks(FallbackReason::kNpuUnavailable) - before, 1U);
  EXPECT_NE((*autoBackend)->device().find("npu_unavailable"), std::string::npos);
}

// The daemon's wiring of the fallback (daemon/pipeline/backend_status.h, what daemon.cpp polls on
// its control thread): vigil_backend_info follows the backend in use, NPU -> CPU and back,
// vigil_backend_fallback_total counts per reason, the status JSON names the last reason.
TEST_F(FaultTest, DaemonBackendStatusFollowsTheFallbackAndTheReturn) {
  Registry registry;
  BackendStatus status(registry);
  auto autoBackend = createAutoBackend(manifest_, {}, config_);
  ASSERT_TRUE(autoBackend);
  status.reset("auto", **autoBackend, "auto: the preferred backend of this build");
  ASSERT_EQ(status.json()["name"], "npu") << status.json().dump();
  EXPECT_EQ(status.json()["configured"], "auto");
  EXPECT_EQ(status.json()["device"],
            "npu1 NPU via fault-injecting runtime, CPU stages on OpenCV DNN")
      << status.json().dump();
  auto sample = [&](const std::string& series) {
    std::string text = registry.render();
    auto at = text.find("\n" + series + " ");
    return at == std::string::npos ? std::string("absent")
                                   : text.substr(at + series.size() + 2,
                                                 text.find('\n', at + 1) - at - series.size() - 2);
  };
  auto count = [](FallbackReason r) { return std::to_string(npuStats().fallbackCount(r)); };
  EXPECT_EQ(sample("vigil_backend_fallback_total{reason=\"run_failed\"}"),
            count(FallbackReason::kRunFailed));
  EXPECT_EQ(sample("vigil_backend_fallback_total{reason=\"canary_failed\"}"),
            count(FallbackReason::kCanaryFailed));
  const std::string npuInfo =
      "vigil_backend_info{backend=\"npu\",device=\"npu1 NPU via fault-injecting runtime, CPU "
      "stages on OpenCV DNN\",reason=\"auto: the NPU passed its canary\"}";
  EXPECT_EQ(sample(npuInfo), "1") << registry.render();
  EXPECT_FALSE(status.poll()) << "nothing changed yet";

  // Run errors through the whole ladder: auto falls back, and the daemon's view follows.
  const auto before = npuStats().fallbackCount(FallbackReason::kRunFailed);
  script_->steady = Outcome::kError;
  Tensor out;
  ASSERT_TRUE((*autoBackend)->infer(input_, out));
  EXPECT_TRUE(status.poll());
  EXPECT_EQ(npuStats().fallbackCount(FallbackReason::kRunFailed), before + 1);
  EXPECT_EQ(sample("vigil_backend_fallback_total{reason=\"run_failed\"}"),
            std::to_string(before + 1));
  auto fallenBack = createCpuBackend(manifest_, {});
  ASSERT_TRUE(fallenBack);
  nlohmann::json j = status.json();
  EXPECT_EQ(j["name"], std::string((*fallenBack)->name()));
  EXPECT_EQ(j["device"], (*fallenBack)->device());
  EXPECT_EQ(j["last_fallback_reason"], "run_failed");
  EXPECT_NE(j["reason"].get<std::string>().find("fell back from the NPU to the CPU (run_failed)"),
            std::string::npos)
      << j.dump();
  EXPECT_EQ(sample(npuInfo), "absent") << "the NPU's series left: " << registry.render();
  EXPECT_EQ(sample(fmt::format("vigil_backend_info{{backend=\"{}\",device=\"{}\",reason=\"{}\"}}",
                               (*fallenBack)->name(), (*fallenBack)->device(),
                               j["reason"].get<std::string>())),
            "1")
      << registry.render();

  // A successful retry after retryAfter (brought up in the background, taken by the frame after
  // it is ready): back on the NPU; the last reason stays for the record.
  script_->steady = Outcome::kOk;
  now_ += std::chrono::seconds(61);
  ASSERT_TRUE(testing::waitUntil([&] {
    EXPECT_TRUE((*autoBackend)->infer(input_, out));
    return npuStats().npuActive.load();
  }));
  EXPECT_TRUE(status.poll());
  EXPECT_EQ(status.json()["name"], "npu");
  EXPECT_EQ(status.json()["last_fallback_reason"], "run_failed");
  EXPECT_EQ(sample(npuInfo), "1") << registry.render();
}

// NaN from the NPU: the invalid_output series counts it.
TEST_F(FaultTest, DaemonBackendStatusCountsInvalidOutputFallbacks) {
  Registry registry;
  BackendStatus status(registry);
  auto autoBackend = createAutoBackend(manifest_, {}, config_);
  ASSERT_TRUE(autoBackend);
  status.reset("auto", **autoBackend, "");
  const auto before = npuStats().fallbackCount(FallbackReason::kInvalidOutput);
  script_->outcomes = {Outcome::kNan};
  Tensor out;
  ASSERT_TRUE((*autoBackend)->infer(input_, out));
  EXPECT_TRUE(status.poll());
  EXPECT_EQ(status.json()["last_fallback_reason"], "invalid_output");
  EXPECT_NE(registry.render().find(fmt::format(
                "vigil_backend_fallback_total{{reason=\"invalid_output\"}} {}\n", before + 1)),
            std::string::npos)
      << registry.render();
}

// A backend that does not switch (cpu, npu) is reported as configured.
TEST_F(FaultTest, DaemonBackendStatusOfAFixedBackend) {
  Registry registry;
  BackendStatus status(registry);
  auto npu = createNpuBackend(manifest_, {}, config_);
  ASSERT_TRUE(npu);
  status.reset("npu", **npu, "configured: npu");
  EXPECT_EQ(status.json()["name"], "npu");
  EXPECT_EQ(status.json()["reason"], "configured: npu");
  EXPECT_FALSE(status.poll());
}

// ---------------------------------------------------------------------------------------------
// The real XRT library under its noop shim.
#ifdef VIGIL_WITH_XRT

class NoopXrtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    VIGIL_REQUIRE_NPU_BUNDLE();
    if (!testing::NoopXrt::available()) GTEST_SKIP() << "libxrt_noop.so.2 absent";
    noop_ = std::make_unique<testing::NoopXrt>();
    manifest_ = std::move(*loadModelManifest(npuBundle()));
  }
  // Records a good canary and the backbone outputs of the first `count` COCO photographs into
  // `dir` and points the noop shim's replay at it; returns the photographs.
  std::vector<std::filesystem::path> replayCoco(const TempDir& dir, std::size_t count) {
    testing::Recorder rec(manifest_);
    rec.recordCanary(dir.path(), false);
    auto images = testing::cocoImages(count);
    for (const auto& p : images) rec.record(rec.input(cv::imread(p.string())), dir.path());
    ::setenv("VIGIL_NOOP_REPLAY_DIR", dir.path().c_str(), 1);
    return images;
  }
  std::unique_ptr<testing::NoopXrt> noop_;
  ModelManifest manifest_;
};

TEST_F(NoopXrtTest, RealXrtOpensLoadsAllocatesAndRuns) {
  const NpuStageSpec& spec = *manifest_.npuStage()->npu;
  auto rt = makeXrtRuntime();
  ASSERT_TRUE(rt->openDevice()) << rt->describe();
  auto loaded = rt->load(spec, manifest_.directory());
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto allocated = rt->allocate();
  ASSERT_TRUE(allocated) << allocated.error().message;
  for (const NpuArgument& a : spec.arguments) {
    EXPECT_EQ(rt->buffer(a.index).size(), a.bytes) << "argument " << a.index;
  }
  // The instruction stream was uploaded into its buffer.
  auto insts = testing::readBytes(manifest_.directory() / spec.instructions);
  auto ib = rt->buffer(spec.argumentFor(NpuArgRole::kInstructions)->index);
  ASSERT_EQ(ib.size(), insts.size());
  EXPECT_EQ(std::memcmp(ib.data(), insts.data(), insts.size()), 0);
  // A pattern preloaded into an output buffer survives run, wait and sync back (noop computes
  // nothing), which is what the replay tests rely on.
  auto out = rt->buffer(spec.argumentFor(NpuArgRole::kOutput)->index);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::byte>(i * 31);
  ASSERT_TRUE(rt->start());
  auto waited = rt->wait(std::chrono::milliseconds(1000));
  ASSERT_TRUE(waited) << waited.error().message;
  EXPECT_EQ(out[1000], static_cast<std::byte>(1000 * 31));
  // The ladder's rungs work on the real library too; the new buffers start cleared.
  rt->unload();
  rt->closeDevice();
  ASSERT_TRUE(rt->openDevice());
  ASSERT_TRUE(rt->load(spec, manifest_.directory()));
  ASSERT_TRUE(rt->allocate());
  out = rt->buffer(spec.argumentFor(NpuArgRole::kOutput)->index);
  EXPECT_EQ(std::count(out.begin(), out.end(), std::byte{0}), std::ssize(out));
  ASSERT_TRUE(rt->start());
  ASSERT_TRUE(rt->wait(std::chrono::milliseconds(1000)));
}

TEST_F(NoopXrtTest, KernelNameMustMatch) {
  NpuStageSpec spec = *manifest_.npuStage()->npu;
  spec.kernel = "NOT_THERE";
  auto rt = makeXrtRuntime();
  ASSERT_TRUE(rt->openDevice());
  auto loaded = rt->load(spec, manifest_.directory());
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find("no kernel named NOT_THERE"), std::string::npos)
      << loaded.error().message;
}

// mlir-aie's host code takes the first kernel whose name starts with the manifest's: a later
// kernel with a longer name (here one without data buffers) must not shadow it.
TEST_F(NoopXrtTest, KernelLookupTakesTheFirstKernelWithThePrefix) {
  const NpuStageSpec& spec = *manifest_.npuStage()->npu;
  TempDir design;
  std::filesystem::copy_file(manifest_.directory() / spec.instructions,
                             design.path() / spec.instructions);
  const std::string make = std::string(VIGIL_SYSTEM_PYTHON) +
                           " " VIGIL_SOURCE_DIR "/tests/tools/make_xclbin.py " +
                           (design.path() / spec.xclbin).string() +
                           " --buffers 5 --kernel MLIR_AIE --kernel MLIR_AIE_SPARE:0";
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  auto rt = makeXrtRuntime();
  ASSERT_TRUE(rt->openDevice());
  auto loaded = rt->load(spec, design.path());
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto allocated = rt->allocate();
  EXPECT_TRUE(allocated) << "bound to MLIR_AIE_SPARE? " << allocated.error().message;
}

// mlir-aie designs take their weights in a buffer of their own: allocate() fills it from the
// file every time, so the recovery ladder's new context gets them again.
TEST_F(NoopXrtTest, WeightsFillTheirBufferAtEveryAllocation) {
  const NpuStageSpec& bundle = *manifest_.npuStage()->npu;
  TempDir dir;
  for (const std::string& f : {bundle.xclbin, bundle.instructions}) {
    std::filesystem::copy_file(manifest_.directory() / f, dir.path() / f);
  }
  std::vector<std::byte> weights(1000);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<std::byte>(i * 7 + 3);
  testing::writeBytes(dir.path() / "wts.bin", weights);
  const testing::WeightsReplacements edit(*sha256File(dir.path() / "wts.bin"), weights.size());
  std::ofstream(dir.path() / "model.yaml")
      << testing::bundleManifestWith({edit.list(), edit.bind()});
  auto m = loadModelManifest(dir.path());
  ASSERT_TRUE(m) << m.error().message;
  const NpuStageSpec& spec = *m->npuStage()->npu;

  auto rt = makeXrtRuntime();
  ASSERT_TRUE(rt->openDevice());
  for (int allocation = 0; allocation < 2; ++allocation) {
    auto loaded = rt->load(spec, dir.path());
    ASSERT_TRUE(loaded) << loaded.error().message;
    auto allocated = rt->allocate();
    ASSERT_TRUE(allocated) << allocated.error().message;
    auto w = rt->buffer(7);
    ASSERT_EQ(w.size(), weights.size());
    EXPECT_TRUE(std::equal(w.begin(), w.end(), weights.begin())) << "allocation " << allocation;
    std::fill(w.begin(), w.end(), std::byte{0xee});  // what a faulted context may leave behind
    rt->unload();                                    // the ladder's "new context"
  }
}

// The kernel's instruction count is the instruction stream's length in 32-bit words, read off
// the file; a file that is no whole number of words is refused at load, naming it and its size.
TEST(XrtRuntimeTest, InstructionCountIsTheStreamsSizeInWords) {
  EXPECT_EQ(instructionWordCount("insts.bin", 256), 64U);
  for (std::uint64_t bytes : {0, 255, 258}) {
    auto words = instructionWordCount("insts.bin", bytes);
    ASSERT_FALSE(words) << bytes;
    EXPECT_EQ(words.error().message.find(fmt::format("insts.bin: {} bytes is no instruction "
                                                     "stream",
                                                     bytes)),
              0U)
        << words.error().message;
  }
}

TEST_F(NoopXrtTest, AnInstructionStreamOfNoWholeWordsFailsToLoad) {
  const NpuStageSpec& spec = *manifest_.npuStage()->npu;
  TempDir design;
  std::filesystem::copy_file(manifest_.directory() / spec.xclbin, design.path() / spec.xclbin);
  auto insts = testing::readBytes(manifest_.directory() / spec.instructions);
  insts.pop_back();
  testing::writeBytes(design.path() / spec.instructions, insts);
  auto rt = makeXrtRuntime();
  ASSERT_TRUE(rt->openDevice());
  auto loaded = rt->load(spec, design.path());
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find(
                fmt::format("insts.bin: {} bytes is no instruction stream", insts.size())),
            std::string::npos)
      << loaded.error().message;
}

// The ELF flows need XRT's ELF API, which Debian 12's XRT 2.13 headers lack: the load error
// names the flow and the XRT version it needs.
TEST_F(NoopXrtTest, ElfFlowsFailToLoadNamingTheFlowAndTheXrtTheyNeed) {
  for (const auto& [flow, version] :
       {std::pair{"xclbin+elf", "XRT >= 2.16"}, std::pair{"full-elf", "XRT >= 2.19"}}) {
    NpuStageSpec spec = *manifest_.npuStage()->npu;
    spec.flow = flow;
    auto rt = makeXrtRuntime();
    ASSERT_TRUE(rt->openDevice());
    auto loaded = rt->load(spec, manifest_.directory());
    ASSERT_FALSE(loaded) << flow;
    EXPECT_EQ(loaded.error().code, ErrorCode::kUnsupported);
    const std::string& m = loaded.error().message;
    EXPECT_NE(m.find(std::string("flow ") + flow + " needs " + version), std::string::npos) << m;
    EXPECT_NE(m.find("XRT " + xrtVersion() + " headers"), std::string::npos) << m;
  }
}

// `vigil bench --backend cpu,npu` under the noop shim with recorded outputs: the report's
// fields (not speed: nothing runs on an NPU, and the report says so).
TEST_F(NoopXrtTest, BenchCpuNpuChecksEveryNpuOutputAndSaysNoop) {
  VIGIL_REQUIRE_COCO();
  TempDir replay;
  auto images = replayCoco(replay, 3);

  BenchCommandOptions options;
  options.detector.model = npuBundle().string();
  options.detector.backend = "cpu,npu";
  options.warmup = 1;
  options.iterations = 2;
  options.batches = {1, 2};
  options.json = true;
  for (const auto& p : images) options.paths.push_back(p.string());
  std::ostringstream out;
  ASSERT_EQ(runBenchCommand(options, out), 0) << out.str();
  auto j = nlohmann::json::parse(out.str());
  ASSERT_EQ(j["backends"].size(), 2U);
  const auto& cpu = j["backends"][0];
  const auto& npu = j["backends"][1];
  EXPECT_EQ(cpu["backend"], "cpu");
  EXPECT_EQ(npu["backend"], "npu");
  EXPECT_FALSE(cpu.contains("npu_check"));
  for (const auto& b : j["backends"]) {
    ASSERT_EQ(b["batches"].size(), 2U);
    EXPECT_EQ(b["batches"][0]["batch"], 1);
    EXPECT_EQ(b["batches"][1]["batch"], 2);
    for (const auto& m : b["batches"]) {
      EXPECT_GT(m["ms"]["inference"]["median"].get<double>(), 0);
      EXPECT_GE(m["ms"]["inference"]["p95"].get<double>(),
                m["ms"]["inference"]["median"].get<double>());
      EXPECT_GT(m["process_cpu_utilisation"].get<double>(), 0);
    }
    EXPECT_EQ(b["iterations"], 2);
    EXPECT_EQ(b["warmup"], 1);
  }
  // Every NPU output of the run, warm-up included: (1 + 2 frames) x (1 warm-up + 2 measured
  // batches), finite, compared with the CPU reference of the same stage; the replayed outputs
  // are that reference, packed.
  const auto& check = npu["npu_check"];
  EXPECT_EQ(check["outputs_compared_with_cpu"], 9) << check.dump();
  EXPECT_LE(check["max_abs_diff_to_cpu"].get<double>(), 1e-4) << check.dump();
  EXPECT_EQ(check["invalid_outputs"], 0);
  EXPECT_EQ(check["fallbacks_to_cpu"], 0);
  EXPECT_TRUE(check["noop_shim"].get<bool>());

  options.json = false;
  std::ostringstream text;
  ASSERT_EQ(runBenchCommand(options, text), 0) << text.str();
  EXPECT_NE(text.str().find("nothing runs on an NPU; the npu times below are not NPU speed"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("batch 2 (frames back to back; ms per frame)"), std::string::npos);
  EXPECT_NE(text.str().find("compared with the CPU reference of the same stage, max abs diff"),
            std::string::npos)
      << text.str();
}

TEST_F(NoopXrtTest, RecordedOutputsThroughRealXrtGiveTheCpuDetections) {
  VIGIL_REQUIRE_COCO();
  TempDir replay;
  auto images = replayCoco(replay, 8);

  DetectorOptions cpuOptions;
  cpuOptions.model = npuBundle();
  DetectorOptions npuOptions = cpuOptions;
  npuOptions.backend = "npu";
  auto cpu = Detector::create(cpuOptions);
  auto npu = Detector::create(npuOptions);
  ASSERT_TRUE(cpu) << cpu.error().message;
  ASSERT_TRUE(npu) << npu.error().message;
  EXPECT_NE((*npu)->backend().device().find("XRT 2.13 legacy"), std::string::npos)
      << (*npu)->backend().device();
  int persons = 0;
  for (const auto& p : images) {
    cv::Mat image = cv::imread(p.string());
    DetectionResult a;
    DetectionResult b;
    ASSERT_TRUE((*cpu)->detect(image, a));
    ASSERT_TRUE((*npu)->detect(image, b)) << p;
    ASSERT_EQ(a.detections.size(), b.detections.size()) << p;
    for (std::size_t i = 0; i < a.detections.size(); ++i) {
      EXPECT_EQ(a.detections[i].score, b.detections[i].score);
      EXPECT_EQ(a.detections[i].box.x, b.detections[i].box.x);
      EXPECT_EQ(a.detections[i].box.width, b.detections[i].box.width);
    }
    persons += static_cast<int>(a.detections.size());
  }
  EXPECT_GT(persons, 4);
}

TEST_F(NoopXrtTest, GarbageOutputFailsTheCanaryNpuRefusesAutoFallsBack) {
  TempDir replay;
  testing::Recorder rec(manifest_);
  rec.recordCanary(replay.path(), true);
  ::setenv("VIGIL_NOOP_REPLAY_DIR", replay.path().c_str(), 1);
  auto npu = createBackend("npu", manifest_, {});
  ASSERT_FALSE(npu);
  EXPECT_NE(npu.error().message.find("canary failed"), std::string::npos) << npu.error().message;

  auto before = npuStats().fallbackCount(FallbackReason::kCanaryFailed);
  auto autoBackend = createBackend("auto", manifest_, {});
  ASSERT_TRUE(autoBackend) << autoBackend.error().message;
  EXPECT_EQ(npuStats().fallbackCount(FallbackReason::kCanaryFailed) - before, 1U);
  // The best CPU backend of this build answers (OpenCV DNN or ONNX Runtime).
  EXPECT_NE((*autoBackend)->device().find(" on CPU"), std::string::npos)
      << (*autoBackend)->device();
  EXPECT_NE((*autoBackend)->device().find("canary_failed"), std::string::npos);
}

TEST_F(NoopXrtTest, WithoutRecordedOutputsTheZeroBuffersFailTheCanary) {
  auto npu = createBackend("npu", manifest_, {});
  ASSERT_FALSE(npu);
  EXPECT_NE(npu.error().message.find("canary failed"), std::string::npos) << npu.error().message;
}

// vigil eval through the NPU code path under the noop shim, its device outputs replayed from the
// CPU reference's: the same figures, to the last digit, prove the packing of inputs and outputs
// and the plumbing around the NPU stage lossless (not the NPU's arithmetic: nothing runs on an
// NPU here). With corrupted outputs nothing is published.
TEST_F(NoopXrtTest, EvalThroughTheNpuPathsPackingAndPlumbingIsLossless) {
  VIGIL_REQUIRE_COCO();
  TempDir replay;
  testing::Recorder rec(manifest_);
  rec.recordCanary(replay.path(), false);
  for (const auto& p : testing::cocoImages(1000)) {
    rec.record(rec.input(cv::imread(p.string())), replay.path());
  }
  ::setenv("VIGIL_NOOP_REPLAY_DIR", replay.path().c_str(), 1);
  EvalCommandOptions options;
  options.detector.model = npuBundle().string();
  options.images = (testing::cocoDir() / "images").string();
  options.annotations = (testing::cocoDir() / "annotations.json").string();
  options.json = true;
  std::ostringstream cpuOut;
  ASSERT_EQ(runEvalCommand(options, cpuOut), 0) << cpuOut.str();
  options.detector.backend = "npu";
  std::ostringstream npuOut;
  ASSERT_EQ(runEvalCommand(options, npuOut), 0) << npuOut.str();
  auto lastLine = [](const std::string& s) {
    auto end = s.find_last_not_of('\n');
    auto start = s.rfind('\n', end);
    return s.substr(start == std::string::npos ? 0 : start + 1, end - start);
  };
  EXPECT_EQ(lastLine(cpuOut.str()), lastLine(npuOut.str()));
  EXPECT_NE(lastLine(npuOut.str()).find("\"AP\""), std::string::npos) << npuOut.str();

  rec.recordCanary(replay.path(), true);  // the NPU now returns wrong numbers
  std::ostringstream corrupted;
  EXPECT_EQ(runEvalCommand(options, corrupted), 2);
  EXPECT_EQ(corrupted.str().find("\"AP\""), std::string::npos) << corrupted.str();
}

#endif  // VIGIL_WITH_XRT

}  // namespace
}  // namespace vigil
