#include "daemon/status/status_api.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <opencv2/imgcodecs.hpp>
#include <thread>

#include "daemon/capture/camera/camera_counters.h"
#include "daemon/capture/camera/camera_status.h"
#include "daemon/events/event_publisher.h"
#include "daemon/events/result_path.h"
#include "daemon/web/http_server.h"
#include "tests/http_get.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

CameraSnapshot camera(const std::string& name, CameraState state = CameraState::kStreaming) {
  CameraSnapshot c;
  c.name = name;
  c.source = "file:/clips/" + name + ".mp4";
  c.state = cameraStateName(state);
  c.up = state == CameraState::kStreaming;
  return c;
}

DaemonSnapshot healthyDaemon() {
  DaemonSnapshot s;
  s.detectorLoaded = true;
  s.backend.name = "cpu";
  s.backend.device = "OpenCV DNN";
  s.enabledCameras = {"door", "yard"};
  s.cameras = {camera("door"), camera("yard", CameraState::kReconnecting)};
  return s;
}

TEST(StatusApiTest, HealthNamesEveryThreadPastItsDeadline) {
  DaemonSnapshot s = healthyDaemon();
  HttpResponse ok = healthResponse(s);
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, "ok\n");
  s.workerOverdue = 2500ms;
  s.cameras[1].captureOverdue = 1s;
  HttpResponse late = healthResponse(s);
  EXPECT_EQ(late.status, 503);
  EXPECT_EQ(late.body,
            "inference worker: no sign of life, 2.5 s past its deadline\n"
            "[cam=yard] capture thread: no sign of life, 1.0 s past its deadline\n");
}

TEST(StatusApiTest, ReadyOnlyWithTheDetectorLoadedAndEveryEnabledCameraStarted) {
  DaemonSnapshot s = healthyDaemon();
  HttpResponse ready = readinessResponse(s);
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body,
            "detector: ready (cpu on OpenCV DNN)\n[cam=door] started, streaming\n"
            "[cam=yard] started, reconnecting\n");
  s.cameras.pop_back();
  HttpResponse missing = readinessResponse(s);
  EXPECT_EQ(missing.status, 503);
  EXPECT_NE(missing.body.find("[cam=yard] not started\n"), std::string::npos) << missing.body;
  s = healthyDaemon();
  s.detectorLoaded = false;
  HttpResponse noDetector = readinessResponse(s);
  EXPECT_EQ(noDetector.status, 503);
  EXPECT_EQ(noDetector.body.rfind("detector: not loaded\n", 0), 0U) << noDetector.body;
}

TEST(StatusApiTest, StatusDocumentSaysNullForWhatIsAbsent) {
  DaemonSnapshot s = healthyDaemon();
  s.cameras[1].lastError = "connection refused";
  CameraCounters counters;
  counters.captured = 7;
  counters.decodeErrors = 1;
  counters.report(s.cameras[0].frames);
  s.cameras[0].lastPerson = std::chrono::system_clock::time_point{} + 1'700'000'000s;
  nlohmann::json j = statusJson(s);
  EXPECT_TRUE(j["mqtt"].is_null()) << "no mqtt section";
  ASSERT_EQ(j["cameras"].size(), 2U);
  EXPECT_TRUE(j["cameras"][0]["last_error"].is_null());
  EXPECT_EQ(j["cameras"][1]["last_error"], "connection refused");
  EXPECT_EQ(j["cameras"][0]["frames"]["captured"], 7);
  EXPECT_EQ(j["cameras"][0]["frames"]["decode_errors"], 1);
  EXPECT_EQ(j["cameras"][0]["frames"]["decode_warnings"]["truncated"], 0) << "by kind";
  EXPECT_EQ(j["cameras"][0]["last_person"], "2023-11-14T22:13:20.000Z");
  EXPECT_TRUE(j["cameras"][1]["last_person"].is_null());
  s.mqtt = MqttSnapshot{"mqtt://broker:1883", true, 3, 0, 1, 0, ""};
  j = statusJson(s);
  EXPECT_EQ(j["mqtt"]["url"], "mqtt://broker:1883");
  EXPECT_EQ(j["mqtt"]["buffered"], 1);
  EXPECT_TRUE(j["mqtt"]["last_error"].is_null());
}

// A result path whose publisher knows `cameras`, as the daemon wires it (the stage and camera
// histograms in a registry of its own).
struct ResultsOf {
  explicit ResultsOf(const std::vector<std::string>& cameras) {
    std::vector<PublishedCamera> published;
    for (const std::string& name : cameras) published.push_back({name, {}, {}, {}, {}});
    publisher.setCameras(published);
  }
  void addCamera(const std::string& name, std::shared_ptr<PictureStream> pictures = nullptr) {
    results.addCamera(name, std::make_shared<CameraChannel>(name, 5.0),
                      {registry.histogram("c2p", "c", {"camera"}).labels({name}),
                       registry.histogram("track", "t", {"camera"}).labels({name})},
                      nullptr, std::move(pictures));
  }

  EventPublisher publisher{{}, nullptr};
  Registry registry;
  HistogramFamily* stages = &registry.histogram("stages", "s", {"stage", "backend"});
  ResultPath results{publisher,
                     [this](const std::string& b) -> ResultPath::StageHistograms {
                       return {stages->labels({"a", b}), stages->labels({"b", b}),
                               stages->labels({"c", b}), stages->labels({"d", b}),
                               stages->labels({"e", b})};
                     },
                     0.5F};
};

// A detected frame of `camera`, its picture `size` and filled with `colour`, from `pool`.
FrameResult detectedFrame(const std::string& camera, cv::Size size, const cv::Scalar& colour,
                          FramePool& pool) {
  FrameResult r;
  r.camera = camera;
  r.width = size.width;
  r.height = size.height;
  r.captureTime = r.startTime = r.doneTime = SteadyClock::now();
  r.backend = "cpu";
  r.frame = std::move(*pool.acquire());
  r.frame->picture.bgrForWriting(size).setTo(colour);
  return r;
}

// The status API of `in` served on a loopback port by a thread of its own (the io thread, which
// owns the result path and the API from then on) until stop().
struct ServedApi {
  explicit ServedApi(ResultsOf& in)
      : api({[] { return DaemonSnapshot{}; }, [] { return DaemonSnapshot{}; }, in.registry,
             in.results, [] { return std::vector<std::string>(); }, in.publisher.recentEvents(),
             nullptr}),
        server(io, loopback()) {
    api.addRoutes(server);
    started = server.start().has_value();
    serving = std::thread([this] { io.run(); });
  }
  ~ServedApi() { stop(); }
  void stop() {
    if (!serving.joinable()) return;
    boost::asio::post(io, [this] { server.stop(); });
    serving.join();
  }
  static HttpServerSettings loopback() {
    HttpServerSettings settings;
    settings.listen = "127.0.0.1:0";
    return settings;
  }

  StatusApi api;
  boost::asio::io_context io;
  HttpServer server;
  bool started = false;
  std::thread serving;
};

// The status API keeps each camera's latest picture encoded; a camera a reload removes takes
// its picture with it (a daemon reloaded for months would keep one per camera ever named).
TEST(StatusApiTest, ThePictureOfARemovedCameraIsNotKept) {
  ResultsOf in({"door", "yard"});
  auto pool = FramePool::create(2);
  for (const std::string name : {"door", "yard"}) {
    in.addCamera(name);
    in.results.onResult(detectedFrame(name, {64, 48}, cv::Scalar(1, 2, 3), *pool));
  }
  ServedApi served(in);
  ASSERT_TRUE(served.started);
  const int port = served.server.port();
  for (const std::string name : {"door", "yard"}) {
    auto reply = testing::httpGet(port, "/api/cameras/" + name + "/latest.jpg");
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->status, 200) << reply->body;
  }
  // The reload, on the thread that owns the result path and the API (the io thread).
  std::promise<std::size_t> kept;
  boost::asio::post(served.io, [&] {
    in.results.removeCamera("yard");
    kept.set_value(served.api.encodedPictures());
  });
  EXPECT_EQ(kept.get_future().get(), 2U) << "both cameras' pictures were encoded";
  auto reply = testing::httpGet(port, "/api/cameras/door/latest.jpg");
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 200);
  std::promise<std::size_t> after;
  boost::asio::post(served.io, [&] { after.set_value(served.api.encodedPictures()); });
  EXPECT_EQ(after.get_future().get(), 1U) << "the removed camera's picture is still kept";
}

// A camera detected on a small stream with a picture stream (picture_source) 16 times its size:
// latest.jpg is the picture stream's picture, the person's box drawn where it is on it, and
// asking for it makes the picture stream decode every picture.
TEST(StatusApiTest, APictureStreamsPictureIsServedAtItsSizeWithTheBoxesMappedOntoIt) {
  ResultsOf in({"door"});
  auto pictures = std::make_shared<PictureStream>("door");
  auto picturePool = FramePool::create(2);
  auto full = picturePool->acquire();
  (*full)->picture.bgrForWriting(cv::Size(1280, 960)).setTo(cv::Scalar(0, 0, 0));
  (*full)->captureTime = SteadyClock::now();
  pictures->counters().up = true;
  pictures->offer(std::move(*full));
  in.addCamera("door", pictures);
  auto pool = FramePool::create(2);
  FrameResult r = detectedFrame("door", {80, 60}, cv::Scalar(0, 0, 0), *pool);
  r.detections.push_back(Detection{Box{20, 30, 20, 20}, 0.9F, 0});
  in.results.onResult(r);
  EXPECT_TRUE(in.results.view("door")->latestFromPictureStream);
  EXPECT_TRUE(pictures->keyframesOnly()) << "a person in view, MQTT snapshots off";

  ServedApi served(in);
  ASSERT_TRUE(served.started);
  EXPECT_TRUE(pictures->keyframesOnly()) << "nobody asked yet";
  auto reply = testing::httpGet(served.server.port(), "/api/cameras/door/latest.jpg");
  served.stop();
  ASSERT_TRUE(reply.has_value());
  ASSERT_EQ(reply->status, 200) << reply->body;
  EXPECT_FALSE(pictures->keyframesOnly()) << "asked for: every picture decoded for a while";
  cv::Mat jpeg = cv::imdecode(std::vector<unsigned char>(reply->body.begin(), reply->body.end()),
                              cv::IMREAD_COLOR);
  ASSERT_EQ(jpeg.size(), cv::Size(1280, 960)) << "the picture stream's size";
  auto red = [&](int x, int y) {
    const cv::Vec3b p = jpeg.at<cv::Vec3b>(y, x);
    return p[2] > 150 && p[0] < 110;
  };
  // The box (20, 30)-(40, 50) on the 80x60 frame is (320, 480)-(640, 800) on the picture.
  EXPECT_TRUE(red(480, 800)) << "its bottom edge, scaled";
  EXPECT_TRUE(red(640, 640)) << "its right edge, scaled";
  EXPECT_FALSE(red(30, 50)) << "not where it was on the small frame";
}

}  // namespace
}  // namespace vigil
