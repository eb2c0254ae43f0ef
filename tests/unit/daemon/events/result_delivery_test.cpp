// The inference worker's result handler (deliverResults), on its own: a result handed over on
// another thread reaches the result path only on the control thread, and a result of the `auto`
// backend is named after the side that ran it.
#include "daemon/events/result_delivery.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <thread>

#include "daemon/base/metrics.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

// A result path on a real publisher (no broker) whose stage histograms say which backend each
// result was counted for, and a backend status whose `auto` runs on cpu-ort now.
class DeliveryRig {
 public:
  DeliveryRig()
      : publisher({}, nullptr), path(publisher, stagesByBackend(), 0.5F), status(registry) {
    publisher.setCameras({PublishedCamera{"door", {}, {}, {}, {}}});
    path.addCamera("door", std::make_shared<CameraChannel>("door", 5.0),
                   {registry.histogram("delivered_c2p", "c", {"camera"}).labels({"door"}),
                    registry.histogram("delivered_track", "t", {"camera"}).labels({"door"})},
                   nullptr);
    status.reset(BackendStatus::Facts{"auto", "auto: the NPU fell back", "cpu-ort", "CPU", {}});
  }

  ResultPath::StageHistogramsFor stagesByBackend() {
    HistogramFamily* f = &registry.histogram("delivered_stages", "s", {"stage", "backend"});
    return [f](const std::string& backend) -> ResultPath::StageHistograms {
      return {f->labels({"a", backend}), f->labels({"b", backend}), f->labels({"c", backend}),
              f->labels({"d", backend}), f->labels({"e", backend})};
    };
  }

  static FrameResult resultOf(const std::string& backend) {
    FrameResult r;
    r.camera = "door";
    r.sequence = 1;
    r.width = 640;
    r.height = 480;
    r.captureTime = SteadyClock::now() - 100ms;
    r.startTime = r.captureTime + 10ms;
    r.doneTime = r.captureTime + 50ms;
    r.timings = {10, 20, 10};
    r.backend = backend;
    return r;
  }

  // How many results the stage histograms counted for `backend`.
  std::string countedFor(const std::string& backend) {
    const std::string text = registry.render();
    const std::string series = "delivered_stages_count{stage=\"a\",backend=\"" + backend + "\"} ";
    const auto at = text.find(series);
    if (at == std::string::npos) return "none";
    return text.substr(at + series.size(), text.find('\n', at) - at - series.size());
  }

  Registry registry;
  EventPublisher publisher;
  ResultPath path;
  BackendStatus status;
  boost::asio::io_context control;
};

TEST(ResultDeliveryTest, AResultReachesTheResultPathOnlyOnTheControlThread) {
  DeliveryRig rig;
  auto handler = deliverResults(rig.control, rig.path, rig.status);
  std::thread inference([&] { handler(DeliveryRig::resultOf("cpu")); });
  inference.join();
  EXPECT_EQ(rig.countedFor("cpu"), "none") << "posted, not run on the inference thread";
  EXPECT_EQ(rig.control.run(), 1U);
  EXPECT_EQ(rig.countedFor("cpu"), "1");
}

TEST(ResultDeliveryTest, AResultOfAutoIsNamedAfterTheSideThatRanIt) {
  DeliveryRig rig;
  auto handler = deliverResults(rig.control, rig.path, rig.status);
  handler(DeliveryRig::resultOf("auto"));
  handler(DeliveryRig::resultOf("npu"));  // a backend named already keeps its name
  rig.control.run();
  EXPECT_EQ(rig.countedFor("cpu-ort"), "1");
  EXPECT_EQ(rig.countedFor("npu"), "1");
  EXPECT_EQ(rig.countedFor("auto"), "none");
}

}  // namespace
}  // namespace vigil
