// The daemon's own series (DaemonMetrics), on their own, rendered from a real registry: the
// version and node, the series of what is there (no worker, no MQTT: absent), a camera's series
// read at render time and all taken away with it, its info following its resolution and
// decoder, the HTTP server's counters, and the histograms the result path observes.
#include "daemon/metrics/daemon_metrics.h"

#include <gtest/gtest.h>

#include <string>

#include "daemon/mqtt/mqtt_client.h"
#include "daemon/mqtt/mqtt_figures.h"
#include "daemon/pipeline/inference_worker.h"
#include "daemon/pipeline/motion.h"
#include "daemon/web/http_server.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

// "door" with a zone "porch" and a line "entrance", on a publisher without a broker and a result
// path observed by the metrics; the parts' reports handed over as the daemon hands them
// (service/daemon.cpp).
class MetricsRig {
 public:
  explicit MetricsRig(const MqttClient* mqtt = nullptr)
      : publisher({}, nullptr),
        metrics(registry, {[this](FigureWriter& out) {
                             if (worker) worker->counters().report(out);
                           },
                           [](FigureWriter& out) { InferenceCounters().report(out); },
                           [this]() -> std::uint64_t { return worker ? worker->inferences() : 0; },
                           publisher, mqttReport(mqtt), "hall"}),
        results(publisher, metrics.stageHistograms(), 0.5F) {
    door.name = "door";
    door.kind = SourceKind::kFile;
    door.detectFps = 2.5;
    door.zones = {ZoneSpec{"porch", {{0, 0}, {1, 0}, {1, 1}, {0, 1}}}};
    LineSpec line;
    line.name = "entrance";
    line.points = {{0.5, 0}, {0.5, 1}};
    door.lines = {line};
    publisher.setCameras({PublishedCamera{"door", {}, door.zones, {}, door.lines}});
  }

  static FigureSeries::Report mqttReport(const MqttClient* mqtt) {
    if (mqtt == nullptr) return {};
    return [mqtt](FigureWriter& out) { reportMqttFigures(*mqtt, out); };
  }

  const CameraView& addDoor() {
    const CameraView& view =
        results.addCamera("door", channel, metrics.cameraHistograms("door"), nullptr);
    metrics.addCamera("door",
                      {[c = channel](FigureWriter& out) { c->report(out); },
                       [c = channel] { return c->counters().decoder(); }},
                      view, door);
    return view;
  }

  // A detected frame of the door, `size` large.
  void detect(cv::Size size) {
    FrameResult r;
    r.camera = "door";
    r.width = size.width;
    r.height = size.height;
    r.captureTime = r.startTime = r.doneTime = SteadyClock::now();
    r.backend = "cpu";
    r.frame = std::move(*pool->acquire());
    r.frame->picture.bgrForWriting(size).setTo(cv::Scalar(1, 2, 3));
    results.onResult(r);
  }

  bool has(const std::string& line) const {
    return registry.render().find(line + "\n") != std::string::npos;
  }

  Registry registry;
  std::unique_ptr<InferenceWorker> worker;  // the daemon's slot: empty here
  EventPublisher publisher;
  DaemonMetrics metrics;
  ResultPath results;
  CameraConfig door;
  std::shared_ptr<CameraChannel> channel = std::make_shared<CameraChannel>("door", 2.5);
  std::shared_ptr<FramePool> pool = FramePool::create(2);
};

TEST(DaemonMetricsTest, TheVersionAndTheNodeAreInfoSeries) {
  MetricsRig rig;
  EXPECT_TRUE(rig.has("vigil_build_info{version=\"" VIGIL_VERSION "\"} 1"))
      << rig.registry.render();
  EXPECT_TRUE(rig.has("vigil_node_info{node=\"hall\"} 1"));
}

TEST(DaemonMetricsTest, WhatIsNotThereHasNoSeriesAndThePublishersCountsAre) {
  MetricsRig rig;
  const std::string text = rig.registry.render();
  EXPECT_EQ(text.find("vigil_detection_failures_total "), std::string::npos) << "no worker";
  EXPECT_EQ(text.find("vigil_detector_busy_seconds_total "), std::string::npos);
  EXPECT_EQ(text.find("vigil_mqtt_connected "), std::string::npos) << "no MQTT";
  EXPECT_TRUE(rig.has("vigil_events_published_total 0")) << text;
  EXPECT_TRUE(rig.has("vigil_zone_events_published_total 0"));
}

TEST(DaemonMetricsTest, WithAnMqttClientItsSeriesAreRead) {
  MqttClient mqtt(MqttSettings{});  // never started
  MetricsRig rig(&mqtt);
  EXPECT_TRUE(rig.has("vigil_mqtt_connected 0")) << rig.registry.render();
  EXPECT_TRUE(rig.has("vigil_mqtt_buffered_messages 0"));
  mqtt.publish("vigil/x", "queued", false);
  EXPECT_TRUE(rig.has("vigil_mqtt_buffered_messages 1")) << "read at render time";
}

TEST(DaemonMetricsTest, ACamerasSeriesReadItsCountersPresenceAndLinesAtRenderTime) {
  MetricsRig rig;
  rig.addDoor();
  CameraCounters& counters = rig.channel->counters();
  counters.captured = 42;
  counters.up = true;
  counters.motionState = static_cast<int>(MotionState::kIdle);
  EXPECT_TRUE(rig.has("vigil_camera_frames_captured_total{camera=\"door\"} 42"))
      << rig.registry.render();
  counters.captured = 43;
  EXPECT_TRUE(rig.has("vigil_camera_frames_captured_total{camera=\"door\"} 43"));
  EXPECT_TRUE(rig.has("vigil_camera_up{camera=\"door\"} 1"));
  EXPECT_TRUE(rig.has("vigil_camera_motion_state{camera=\"door\",state=\"idle\"} 1"));
  EXPECT_TRUE(rig.has("vigil_camera_motion_state{camera=\"door\",state=\"motion\"} 0"));
  EXPECT_TRUE(rig.has("vigil_person_present{camera=\"door\"} 0"));
  EXPECT_TRUE(rig.has("vigil_zone_person_present{camera=\"door\",zone=\"porch\"} 0"));
  EXPECT_TRUE(
      rig.has("vigil_line_crossings_total{camera=\"door\",line=\"entrance\",direction=\"in\"} 0"));
  EXPECT_TRUE(
      rig.has("vigil_camera_info{camera=\"door\",source=\"file\",resolution=\"\",fps=\"\",detect_"
              "fps=\"2.5\"} 1"));
  EXPECT_TRUE(rig.has("vigil_camera_decoder_info{camera=\"door\",decoder=\"\"} 1"));
}

TEST(DaemonMetricsTest, TheCamerasInfoFollowsItsResolutionAndItsDecoder) {
  MetricsRig rig;
  rig.addDoor();
  rig.detect({640, 480});
  rig.channel->counters().setDecoder("libjpeg, on demand");
  rig.metrics.updateCameraInfo();
  EXPECT_TRUE(
      rig.has("vigil_camera_info{camera=\"door\",source=\"file\",resolution=\"640x480\",fps=\"\","
              "detect_fps=\"2.5\"} 1"))
      << rig.registry.render();
  EXPECT_TRUE(
      rig.has("vigil_camera_decoder_info{camera=\"door\",decoder=\"libjpeg, on demand\"} 1"));
  const std::string text = rig.registry.render();
  EXPECT_EQ(text.find("resolution=\"\""), std::string::npos) << "replaced, not added";
  EXPECT_EQ(text.find("decoder=\"\""), std::string::npos);
}

TEST(DaemonMetricsTest, ARemovedCameraTakesEveryOneOfItsSeriesAway) {
  MetricsRig rig;
  rig.addDoor();
  rig.detect({640, 480});
  ASSERT_NE(rig.registry.render().find("camera=\"door\""), std::string::npos);
  rig.metrics.removeCamera("door");
  rig.results.removeCamera("door");
  const std::string text = rig.registry.render();
  EXPECT_EQ(text.find("camera=\"door\""), std::string::npos) << text;
}

TEST(DaemonMetricsTest, TheResultPathsFramesAreObservedInTheStageAndCameraHistograms) {
  MetricsRig rig;
  rig.addDoor();
  rig.detect({640, 480});
  rig.detect({640, 480});
  EXPECT_TRUE(rig.has("vigil_stage_duration_seconds_count{stage=\"inference\",backend=\"cpu\"} 2"))
      << rig.registry.render();
  EXPECT_TRUE(rig.has("vigil_capture_to_publish_seconds_count{camera=\"door\"} 2"));
}

TEST(DaemonMetricsTest, TheHttpServersCountersAreReadByClass) {
  MetricsRig rig;
  HttpServerCounters counters;
  rig.metrics.addFigures([&counters](FigureWriter& out) { counters.report(out); });
  counters.responses[1] = 5;  // 2xx
  counters.responses[3] = 2;  // 4xx
  counters.loginFailures = 3;
  EXPECT_TRUE(rig.has("vigil_http_responses_total{code=\"2xx\"} 5")) << rig.registry.render();
  EXPECT_TRUE(rig.has("vigil_http_responses_total{code=\"4xx\"} 2"));
  EXPECT_TRUE(rig.has("vigil_http_responses_total{code=\"5xx\"} 0"));
  EXPECT_TRUE(rig.has("vigil_http_login_failures_total 3"));
}

}  // namespace
}  // namespace vigil
