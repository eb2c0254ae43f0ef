#include "daemon/events/result_path.h"

#include <gtest/gtest.h>

#include <numeric>

#include "daemon/pipeline/motion.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

std::uint64_t count(const Histogram& h) { return h.snapshot().cumulative.back(); }

Detection person(float score = 0.9F) { return Detection{Box{100, 100, 80, 200}, score, 0}; }

// A result path on a real publisher (no broker: it keeps presence state without one) and real
// histograms.
class ResultPathRig {
 public:
  // `tracked`: the camera runs PersonTracks (tracking's defaults, no zones).
  explicit ResultPathRig(bool tracked = false)
      : publisher({}, nullptr), results(publisher, stageHistograms(), 0.5F) {
    results.keepEventStarts(true);
    PresenceSettings presence;
    presence.minFrames = 2;
    presence.clearAfter = 5s;
    publisher.setCameras({PublishedCamera{"door", presence, {}, {}, {}}});
    results.addCamera(
        "door", channel,
        {registry.histogram("c2p", "c", {"camera"}).labels({"door"}),
         registry.histogram("track", "t", {"camera"}).labels({"door"})},
        tracked ? std::make_unique<PersonTracks>(PersonTrackingSettings{}, std::vector<TrackZone>{})
                : nullptr);
  }

  ResultPath::StageHistogramsFor stageHistograms() {
    HistogramFamily* f = &registry.histogram("stages", "s", {"stage", "backend"});
    return [f](const std::string& backend) -> ResultPath::StageHistograms {
      return {f->labels({"a", backend}), f->labels({"b", backend}), f->labels({"c", backend}),
              f->labels({"d", backend}), f->labels({"e", backend})};
    };
  }

  // A result of `camera` captured 100 ms ago, with the picture when `withFrame`.
  void result(std::vector<Detection> detections, bool withFrame = false,
              const std::string& camera = "door", const std::string& backend = "cpu") {
    FrameResult r;
    r.camera = camera;
    r.sequence = ++sequence_;
    r.width = 640;
    r.height = 480;
    r.captureTime = SteadyClock::now() - 100ms;
    r.startTime = r.captureTime + 10ms;
    r.doneTime = r.captureTime + 50ms;
    r.detections = std::move(detections);
    r.timings = {10, 20, 10};  // 40 ms of detector time per frame
    r.backend = backend;
    if (withFrame) {
      r.frame = std::move(*pool->acquire());
      r.frame->picture.bgrForWriting(cv::Size(640, 480)).setTo(cv::Scalar(1, 2, 3));
    }
    results.onResult(r);
  }

  MotionGate::Person gate() const { return channel->personSaid(); }

  Registry registry;
  EventPublisher publisher;
  ResultPath results;
  std::shared_ptr<CameraChannel> channel = std::make_shared<CameraChannel>("door", 5.0);
  std::shared_ptr<FramePool> pool = FramePool::create(2);

 private:
  std::uint64_t sequence_ = 0;
};

TEST(ResultPathTest, APersonReachesThePublisherTheGateTheHistogramsAndTheView) {
  ResultPathRig rig;
  rig.result({person()}, true);
  rig.result({person()});
  auto presence = rig.publisher.state("door");
  ASSERT_TRUE(presence);
  EXPECT_TRUE(presence->present) << "min_frames 2 reached";
  EXPECT_EQ(rig.gate(), MotionGate::Person::kSeen);
  const CameraView* view = rig.results.view("door");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->events.size(), 1U) << "one presence event, seen on two frames";
  EXPECT_EQ(view->latency.samples(), 2U);
  EXPECT_DOUBLE_EQ(view->latency.percentile(0.5), 50.0) << "capture to detections ready";
  EXPECT_TRUE(view->hasFrame);
  auto latest = view->latest.bgr();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->at<cv::Vec3b>(0, 0), cv::Vec3b(1, 2, 3)) << "the picture was kept";
  EXPECT_EQ(view->latestDetections.size(), 1U);
  EXPECT_TRUE(view->lastPerson);
  EXPECT_EQ(count(*view->captureToPublish), 2U);
  EXPECT_EQ(rig.pool->available(), 2U) << "the frame went back to its pool";
}

// A daemon without --summary-json keeps no list of its events: it would grow for months.
TEST(ResultPathTest, EventStartsAreKeptOnlyWhenASummaryWillBeWritten) {
  ResultPathRig rig;
  rig.results.keepEventStarts(false);
  rig.result({person()});
  rig.result({person()});
  ASSERT_TRUE(rig.publisher.state("door")->present);
  EXPECT_TRUE(rig.results.view("door")->events.empty());
}

TEST(ResultPathTest, EachBackendHasItsOwnStageHistograms) {
  ResultPathRig rig;
  rig.result({person()}, false, "door", "npu");
  rig.result({person()}, false, "door", "npu");
  rig.result({person()}, false, "door", "cpu-ort");  // auto fell back to the CPU
  const std::string text = rig.registry.render();
  EXPECT_NE(text.find("stages_count{stage=\"c\",backend=\"npu\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("stages_count{stage=\"c\",backend=\"cpu-ort\"} 1"), std::string::npos)
      << text;
}

TEST(ResultPathTest, AnEmptyFrameDuringAnEventKeepsTheGateAtTheFullRate) {
  ResultPathRig rig;
  rig.result({person()});
  rig.result({person()});
  rig.result({});
  EXPECT_EQ(rig.gate(), MotionGate::Person::kPresent) << "the event is open until clear_after";
}

TEST(ResultPathTest, AResultOfACameraThatIsGoneIsDropped) {
  ResultPathRig rig;
  rig.results.removeCamera("door");
  rig.result({person()});
  rig.result({person()});
  EXPECT_EQ(rig.results.view("door"), nullptr);
  auto presence = rig.publisher.state("door");
  EXPECT_TRUE(!presence || !presence->present) << "nothing published for it";
}

TEST(ResultPathTest, TickMeasuresRatesOverTwoSecondsAndPricesGatedFrames) {
  ResultPathRig rig;
  rig.result({});  // 40 ms of detector time: the price of one gated frame
  const auto t0 = SteadyClock::now();
  rig.results.tick(t0);  // the rates' first window starts
  CameraCounters& c = rig.channel->counters();
  c.captured += 10;
  c.detected += 4;
  c.gated += 5;
  rig.results.tick(t0 + 1s);
  const CameraView* view = rig.results.view("door");
  EXPECT_EQ(view->fpsCaptured, 0) << "the window is not over";
  EXPECT_NEAR(view->gatedSeconds, 5 * 0.040, 1e-9);
  rig.results.tick(t0 + 2s);
  EXPECT_DOUBLE_EQ(view->fpsCaptured, 5.0);
  EXPECT_DOUBLE_EQ(view->fpsDetected, 2.0);
  EXPECT_NEAR(view->gatedSeconds, 5 * 0.040, 1e-9) << "each gated frame priced once";
}

TEST(ResultPathTest, ATrackedCameraCountsItsTracksAndSeesPersonsBelowMinScore) {
  ResultPathRig rig(true);
  rig.result({person(0.9F), Detection{Box{400, 50, 50, 50}, 0.3F, 2}}, true);
  rig.result({person(0.9F)});
  rig.result({person(0.3F)});  // below detector.min_score: tracking's second association
  const CameraView* view = rig.results.view("door");
  ASSERT_EQ(view->latestTracks.size(), 1U);
  EXPECT_EQ(view->latestTracks[0].id, 1U);
  EXPECT_TRUE(view->latestTracks[0].detected) << "matched with the low-score detection";
  EXPECT_TRUE(view->latestDetections.empty()) << "nothing at detector.min_score to report";
  EXPECT_EQ(rig.gate(), MotionGate::Person::kPresent)
      << "the gate hears of reported persons only; the event is still open";
  rig.result({});  // missed: still counted, where tracking predicts it
  EXPECT_EQ(rig.publisher.state("door")->count, 1);
  EXPECT_FALSE(view->latestTracks.at(0).detected);
  const double wall =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(view->latestTracks[0].firstSeen, wall, 5) << "first seen in Unix seconds";
  EXPECT_EQ(view->tracks->personsStarted(), 1U);
  const auto duration = view->trackDuration;
  rig.results.removeCamera("door");
  EXPECT_EQ(count(*duration), 1U) << "the track ended with its camera";
}

TEST(ResultPathTest, TracksOfACameraWithoutFramesEndByTime) {
  ResultPathRig rig(true);
  rig.result({person()});
  rig.result({person()});
  const CameraView* view = rig.results.view("door");
  ASSERT_EQ(view->latestTracks.size(), 1U);
  rig.results.tick(SteadyClock::now() + 2s);
  EXPECT_EQ(view->latestTracks.size(), 1U)
      << "lost_after (1 s) and the grace for a frame in flight (2 s) not over yet";
  rig.results.tick(SteadyClock::now() + 4s);
  EXPECT_TRUE(view->latestTracks.empty()) << "no frame for longer than lost_after and the grace";
  EXPECT_EQ(count(*view->trackDuration), 1U);
  rig.result({person()});  // a late frame captured before that tick is tracked after it
  EXPECT_TRUE(view->latestTracks.empty()) << "a new track is not confirmed on one frame";
}

TEST(ResultPathTest, AnUntrackedCameraCountsDetectionsAtMinScore) {
  ResultPathRig rig;
  rig.result({person(0.9F), person(0.3F)});
  const CameraView* view = rig.results.view("door");
  EXPECT_EQ(view->latestDetections.size(), 1U) << "0.3 is below detector.min_score";
  EXPECT_TRUE(view->latestTracks.empty());
}

TEST(LatencyWindowTest, NearestRankPercentilesOverTheLastWindow) {
  LatencyWindow w;
  EXPECT_EQ(w.percentile(0.5), 0) << "empty";
  for (int ms = 1; ms <= 100; ++ms) w.add(ms);
  EXPECT_EQ(w.percentile(0.5), 50);
  EXPECT_EQ(w.percentile(0.99), 99);
  EXPECT_EQ(w.percentile(1.0), 100);
  for (std::size_t i = 0; i < LatencyWindow::kWindow; ++i) w.add(1000);
  EXPECT_EQ(w.samples(), LatencyWindow::kWindow);
  EXPECT_EQ(w.percentile(0.0), 1000) << "the oldest samples were replaced";
}

}  // namespace
}  // namespace vigil
