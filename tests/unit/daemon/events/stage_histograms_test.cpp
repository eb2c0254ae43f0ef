#include "daemon/events/stage_histograms.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using namespace std::chrono_literals;

FrameResult resultOf(const std::string& backend) {
  FrameResult r;
  r.camera = "door";
  r.backend = backend;
  r.captureTime = SteadyClock::now() - 100ms;
  r.startTime = r.captureTime + 10ms;
  r.doneTime = r.captureTime + 50ms;
  r.timings = {10, 20, 10};
  return r;
}

double summed(const Histogram& h) { return h.snapshot().sum; }
std::uint64_t observed(const Histogram& h) { return h.snapshot().cumulative.back(); }

TEST(StagesByBackendTest, EachBackendsHistogramsAreMadeOnItsFirstResult) {
  Registry registry;
  HistogramFamily* f = &registry.histogram("stages", "s", {"stage", "backend"});
  std::vector<std::string> made;
  StagesByBackend stages([&](const std::string& backend) -> StageHistograms {
    made.push_back(backend);
    return {f->labels({"start", backend}), f->labels({"pre", backend}),
            f->labels({"infer", backend}), f->labels({"post", backend}),
            f->labels({"publish", backend})};
  });
  auto c2p = registry.histogram("c2p", "c", {"camera"}).labels({"door"});
  const auto received = SteadyClock::now();
  stages.observe(resultOf("npu"), received, c2p.get());
  stages.observe(resultOf("npu"), received, c2p.get());
  stages.observe(resultOf("cpu-ort"), received, nullptr);  // auto fell back to the CPU
  EXPECT_EQ(made, (std::vector<std::string>{"npu", "cpu-ort"}));
  EXPECT_EQ(observed(*f->labels({"infer", "npu"})), 2U);
  EXPECT_EQ(observed(*f->labels({"infer", "cpu-ort"})), 1U);
  EXPECT_NEAR(summed(*f->labels({"start", "npu"})), 2 * 0.010, 1e-9) << "capture to start";
  EXPECT_NEAR(summed(*f->labels({"pre", "npu"})), 2 * 0.010, 1e-9);
  EXPECT_NEAR(summed(*f->labels({"infer", "npu"})), 2 * 0.020, 1e-9);
  EXPECT_NEAR(summed(*f->labels({"post", "npu"})), 2 * 0.010, 1e-9);
  EXPECT_EQ(observed(*f->labels({"publish", "cpu-ort"})), 1U);
  EXPECT_EQ(observed(*c2p), 2U) << "the camera's capture-to-publish, when it has one";
  EXPECT_GE(summed(*c2p), 2 * 0.100);
}

}  // namespace
}  // namespace vigil
