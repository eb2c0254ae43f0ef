#include "daemon/events/event_publisher.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/temp_dir.h"
#include "tests/unit/daemon/events/event_test_clock.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using WallClock = std::chrono::system_clock;
using nlohmann::json;

using namespace event_test;

struct Message {
  std::string topic;
  std::string payload;
  bool retained;
};

class RecordingSink : public MessageSink {
 public:
  void publish(std::string topic, std::string payload, bool retained) override {
    messages.push_back({std::move(topic), std::move(payload), retained});
  }
  std::vector<std::string> topics() const {
    std::vector<std::string> out;
    for (const auto& m : messages) out.push_back(m.topic);
    return out;
  }
  std::vector<std::string> on(const std::string& topic) const {
    std::vector<std::string> out;
    for (const auto& m : messages) {
      if (m.topic == topic) out.push_back(m.payload);
    }
    return out;
  }
  std::vector<json> events() const {
    std::vector<json> out;
    for (const auto& m : messages) {
      if (m.topic == "vigil/events") out.push_back(json::parse(m.payload));
    }
    return out;
  }
  const Message* last(const std::string& topic) const {
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
      if (it->topic == topic) return &*it;
    }
    return nullptr;
  }
  std::vector<Message> messages;
};

PublishedCamera door(std::vector<ZoneSpec> zones = {}) {
  PresenceSettings presence;
  presence.minFrames = 2;
  presence.minScore = 0.5F;
  presence.clearAfter = 2s;
  presence.updateInterval = 1s;
  return PublishedCamera{"door", presence, std::move(zones), {}, {}};
}

ZoneSpec leftHalf() { return ZoneSpec{"left", {{0, 0}, {0.5F, 0}, {0.5F, 1}, {0, 1}}}; }

// A person whose feet stand at x (normalized) near the bottom of the frame.
Detection personAt(float footX, float score = 0.9F) {
  return Detection{Box{footX * kWidth - 50, 100, 100, 300}, score, 0};
}

class PublisherRig {
 public:
  explicit PublisherRig(EventPublisherSettings settings = {},
                        std::vector<PublishedCamera> cameras = {door()}, bool withSink = true)
      : publisher(std::move(settings), withSink ? &sink : nullptr) {
    publisher.setCameras(cameras);
  }

  // A frame captured at `ms`, its result published 100 ms later.
  void frame(int ms, std::vector<Detection> detections, const cv::Mat* image = nullptr) {
    detections_ = std::move(detections);
    ObservedFrame f = observed(ms);
    if (image != nullptr) {
      image->copyTo(picture_.bgrForWriting(image->size()));
      f.picture = &picture_;
    }
    publisher.onFrame(f, at(ms + 100));
  }

  // The camera reconnected at `ms`: its source counts frames from 0 again (ids go on growing).
  void reconnect(int ms) { sequenceStart_ = ms; }

  // A frame of a tracked camera: its tracked persons and zone events (no raw detections).
  void trackedFrame(int ms, std::vector<TrackedPerson> persons,
                    std::vector<ZoneEvent> zoneEvents = {},
                    std::vector<LineCrossingEvent> crossings = {}) {
    persons_ = std::move(persons);
    zoneEvents_ = std::move(zoneEvents);
    crossings_ = std::move(crossings);
    detections_.clear();
    ObservedFrame f = observed(ms);
    f.persons = &persons_;
    f.zoneEvents = &zoneEvents_;
    f.crossings = &crossings_;
    publisher.onFrame(f, at(ms + 100));
  }

  RecordingSink sink;
  EventPublisher publisher;

 private:
  // Door's frame captured at `ms`, with detections_.
  ObservedFrame observed(int ms) {
    ObservedFrame f;
    f.camera = "door";
    f.sequence = static_cast<std::uint64_t>(ms - sequenceStart_);
    f.id = static_cast<std::uint64_t>(ms) + 1;
    f.width = kWidth;
    f.height = kHeight;
    f.captureTime = at(ms);
    f.captureMonotonic = monotonicAt(ms);
    f.detections = &detections_;
    f.backend = "cpu";
    return f;
  }

  std::vector<Detection> detections_;
  int sequenceStart_ = 0;    // the source counts frames (sequence) from here: reconnects restart it
  CapturedPicture picture_;  // the frame a test gives, as a BGR source delivers it
  std::vector<TrackedPerson> persons_;
  std::vector<ZoneEvent> zoneEvents_;
  std::vector<LineCrossingEvent> crossings_;
};

// Track `id` standing with its feet at x (normalized), first seen at kT0, last detected at
// `score`.
TrackedPerson trackedAt(std::uint64_t id, float footX, float score = 0.9F, bool detected = true) {
  TrackedPerson p;
  p.id = id;
  p.box = personAt(footX).box;
  p.score = score;
  p.firstSeen = std::chrono::duration<double>(kT0.time_since_epoch()).count();
  p.lastSeen = p.firstSeen;
  p.detected = detected;
  return p;
}

std::vector<json> zoneEventsOf(const RecordingSink& sink) {
  std::vector<json> out;
  for (const std::string& payload : sink.on("vigil/zone_events")) {
    out.push_back(json::parse(payload));
  }
  return out;
}

TEST(EventPublisherTest, FirstSetCamerasAnnouncesOnlineDiscoveryThenOffStates) {
  PublisherRig rig({}, {door({leftHalf()})});
  auto topics = rig.sink.topics();
  ASSERT_FALSE(topics.empty());
  EXPECT_EQ(topics.front(), "vigil/status");
  EXPECT_EQ(rig.sink.messages.front().payload, "online");
  EXPECT_EQ(rig.sink.on("vigil/door/person"), std::vector<std::string>{"OFF"});
  EXPECT_EQ(rig.sink.on("vigil/door/person/count"), std::vector<std::string>{"0"});
  EXPECT_EQ(rig.sink.on("vigil/door/left/person"), std::vector<std::string>{"OFF"});
  EXPECT_EQ(rig.sink.on("vigil/door/left/person/count"), std::vector<std::string>{"0"});
  EXPECT_EQ(rig.sink.on("homeassistant/binary_sensor/vigil/door_person/config").size(), 1U);
  EXPECT_EQ(rig.sink.on("homeassistant/binary_sensor/vigil/door_left_person/config").size(), 1U);
  for (const Message& m : rig.sink.messages) EXPECT_TRUE(m.retained) << m.topic;
  EXPECT_TRUE(rig.sink.events().empty());
}

TEST(EventPublisherTest, PresenceTimelineGivesOnNewUpdateEndOff) {
  PublisherRig rig;
  rig.sink.messages.clear();
  rig.frame(0, {personAt(0.3F, 0.7F)});
  EXPECT_TRUE(rig.sink.messages.empty()) << "min_frames 2: one frame is not presence yet";
  rig.frame(200, {personAt(0.3F, 0.8F)});
  ASSERT_EQ(
      rig.sink.topics(),
      (std::vector<std::string>{"vigil/door/person", "vigil/door/person/count", "vigil/events"}));
  EXPECT_EQ(rig.sink.messages[0].payload, "ON");
  EXPECT_TRUE(rig.sink.messages[0].retained);
  EXPECT_EQ(rig.sink.messages[1].payload, "1");
  EXPECT_FALSE(rig.sink.messages[2].retained);
  json e = rig.sink.events().at(0);
  EXPECT_EQ(e["schema"], 1);
  EXPECT_EQ(e["type"], "new");
  EXPECT_EQ(e["camera"], "door");
  EXPECT_TRUE(e["zone"].is_null());
  EXPECT_EQ(e["event_id"], "door-camera-1700000000000-1");
  EXPECT_EQ(e["start"], "2023-11-14T22:13:20.000Z");
  EXPECT_TRUE(e["end"].is_null());
  EXPECT_EQ(e["count"], 1);
  EXPECT_NEAR(e["max_score"].get<double>(), 0.8, 1e-4);
  EXPECT_EQ(e["backend"], "cpu");
  EXPECT_NEAR(e["latency_ms"].get<double>(), 100.0, 0.05);
  ASSERT_EQ(e["boxes"].size(), 1U);
  EXPECT_NEAR(e["boxes"][0]["x"].get<double>(), 0.25, 1e-4);
  EXPECT_NEAR(e["boxes"][0]["y"].get<double>(), 0.2, 1e-4);
  EXPECT_NEAR(e["boxes"][0]["w"].get<double>(), 0.1, 1e-4);
  EXPECT_NEAR(e["boxes"][0]["h"].get<double>(), 0.6, 1e-4);
  EXPECT_NEAR(e["boxes"][0]["score"].get<double>(), 0.8, 1e-4);

  // A second person within update_interval: no update yet; after it: one update, count 2.
  rig.frame(400, {personAt(0.3F), personAt(0.7F)});
  EXPECT_EQ(rig.sink.events().size(), 1U);
  rig.frame(1300, {personAt(0.3F), personAt(0.7F)});
  ASSERT_EQ(rig.sink.events().size(), 2U);
  EXPECT_EQ(rig.sink.events()[1]["type"], "update");
  EXPECT_EQ(rig.sink.events()[1]["count"], 2);
  EXPECT_EQ(rig.sink.events()[1]["event_id"], e["event_id"]);
  EXPECT_EQ(rig.sink.last("vigil/door/person/count")->payload, "2");
  EXPECT_EQ(rig.sink.on("vigil/door/person").size(), 1U) << "an update does not repeat ON";

  // Nobody for clear_after (2 s): the tick ends the event at the last frame with a person.
  rig.frame(1500, {});
  rig.publisher.tick(monotonicAt(3299));
  EXPECT_EQ(rig.sink.events().size(), 2U);
  rig.publisher.tick(monotonicAt(3300));
  ASSERT_EQ(rig.sink.events().size(), 3U);
  json end = rig.sink.events()[2];
  EXPECT_EQ(end["type"], "end");
  EXPECT_EQ(end["end"], "2023-11-14T22:13:21.300Z");
  EXPECT_EQ(end["count"], 0);
  EXPECT_TRUE(end["latency_ms"].is_null());
  EXPECT_EQ(end["backend"], "cpu") << "an event ended by time names the backend that saw it";
  EXPECT_TRUE(end["boxes"].empty());
  EXPECT_EQ(rig.sink.last("vigil/door/person")->payload, "OFF");
  EXPECT_EQ(rig.sink.last("vigil/door/person/count")->payload, "0");
  EXPECT_EQ(rig.publisher.eventsPublished(), 3U);
}

TEST(EventPublisherTest, ZoneHasItsOwnTopicsAndEvents) {
  PublisherRig rig({}, {door({leftHalf()})});
  rig.sink.messages.clear();
  rig.frame(0, {personAt(0.8F)});
  rig.frame(200, {personAt(0.8F)});
  EXPECT_EQ(rig.sink.last("vigil/door/person")->payload, "ON");
  EXPECT_EQ(rig.sink.last("vigil/door/left/person"), nullptr) << "the person stands on the right";
  rig.frame(400, {personAt(0.2F)});
  rig.frame(600, {personAt(0.2F)});
  ASSERT_NE(rig.sink.last("vigil/door/left/person"), nullptr);
  EXPECT_EQ(rig.sink.last("vigil/door/left/person")->payload, "ON");
  EXPECT_EQ(rig.sink.last("vigil/door/left/person/count")->payload, "1");
  json zoneNew = rig.sink.events().back();
  EXPECT_EQ(zoneNew["zone"], "left");
  EXPECT_EQ(zoneNew["event_id"], "door-left-1700000000400-1");
  EXPECT_EQ(rig.publisher.state("door", "left")->present, true);
  EXPECT_EQ(rig.publisher.state("door")->count, 1);
  EXPECT_FALSE(rig.publisher.state("garage").has_value());
}

TEST(EventPublisherTest, AnnounceRepublishesCurrentStateAndHomeAssistantBirthTriggersIt) {
  PublisherRig rig;
  rig.frame(0, {personAt(0.3F)});
  rig.frame(200, {personAt(0.3F)});
  rig.sink.messages.clear();
  rig.publisher.onHomeAssistantStatus("offline");
  EXPECT_TRUE(rig.sink.messages.empty());
  rig.publisher.onHomeAssistantStatus("online");
  EXPECT_EQ(rig.sink.on("vigil/status"), std::vector<std::string>{"online"});
  EXPECT_EQ(rig.sink.on("vigil/door/person"), std::vector<std::string>{"ON"});
  EXPECT_EQ(rig.sink.on("vigil/door/person/count"), std::vector<std::string>{"1"});
  EXPECT_EQ(rig.sink.on("homeassistant/binary_sensor/vigil/door_person/config").size(), 1U);
  EXPECT_TRUE(rig.sink.events().empty()) << "announcing is not an event";
}

TEST(EventPublisherTest, DiscoveryPayloadsDescribeOneDevicePerCameraViaTheNode) {
  EventPublisherSettings settings;
  settings.instance = "garage-box";
  settings.version = "1.2.3";
  settings.snapshots = true;
  settings.configurationUrl = "http://garage-box:9842/";
  PublisherRig rig(settings, {door({leftHalf()})});
  std::set<std::string> uniqueIds;
  std::map<std::string, json> byTopic;
  // The node's device: named after the node, the status page one click away, its connectivity.
  const Message* node = rig.sink.last("homeassistant/binary_sensor/garage-box/status/config");
  ASSERT_NE(node, nullptr);
  EXPECT_TRUE(node->retained);
  const json n = json::parse(node->payload);
  EXPECT_EQ(n["device"]["identifiers"], json::array({"vigil_garage-box"}));
  EXPECT_EQ(n["device"]["name"], "Vigil garage-box");
  EXPECT_EQ(n["device"]["configuration_url"], "http://garage-box:9842/");
  EXPECT_EQ(n["device_class"], "connectivity");
  EXPECT_EQ(n["state_topic"], "vigil/status");
  EXPECT_EQ(n["payload_on"], "online");
  EXPECT_TRUE(uniqueIds.insert(n["unique_id"].get<std::string>()).second);
  for (const Message& m : rig.sink.messages) {
    if (m.topic.rfind("homeassistant/", 0) != 0) continue;
    if (m.topic == node->topic) continue;
    json p = json::parse(m.payload);
    byTopic[m.topic] = p;
    EXPECT_TRUE(uniqueIds.insert(p["unique_id"].get<std::string>()).second) << m.topic;
    EXPECT_EQ(p["availability_mode"], "all");
    ASSERT_EQ(p["availability"].size(), 2U) << m.topic;
    EXPECT_EQ(p["availability"][0]["topic"], "vigil/status");
    EXPECT_EQ(p["availability"][1]["topic"], "vigil/door/status");
    for (const json& a : p["availability"]) {
      EXPECT_EQ(a["payload_available"], "online");
      EXPECT_EQ(a["payload_not_available"], "offline");
    }
    // The camera's own device, so that Home Assistant can put it in its own area.
    EXPECT_EQ(p["device"]["identifiers"], json::array({"vigil_garage-box_door"}));
    EXPECT_EQ(p["device"]["name"], "door");
    EXPECT_EQ(p["device"]["via_device"], "vigil_garage-box");
    EXPECT_EQ(p["origin"]["sw_version"], "1.2.3");
    EXPECT_FALSE(p["name"].get<std::string>().empty());
    EXPECT_EQ(p["name"].get<std::string>().find("door"), std::string::npos)
        << "the device names the camera; the entity says what it is: " << p["name"];
  }
  ASSERT_EQ(byTopic.size(), 5U);  // camera: occupancy, count, image; zone: occupancy, count
  const json& occupancy = byTopic.at("homeassistant/binary_sensor/garage-box/door_person/config");
  EXPECT_EQ(occupancy["name"], "person");
  EXPECT_EQ(occupancy["device_class"], "occupancy");
  EXPECT_EQ(occupancy["state_topic"], "vigil/door/person");
  EXPECT_EQ(occupancy["payload_on"], "ON");
  EXPECT_EQ(occupancy["payload_off"], "OFF");
  const json& count = byTopic.at("homeassistant/sensor/garage-box/door_person_count/config");
  EXPECT_EQ(count["state_topic"], "vigil/door/person/count");
  EXPECT_EQ(count["state_class"], "measurement");
  const json& image = byTopic.at("homeassistant/image/garage-box/door_snapshot/config");
  EXPECT_EQ(image["image_topic"], "vigil/door/person/snapshot");
  EXPECT_EQ(image["content_type"], "image/jpeg");
  EXPECT_EQ(
      byTopic.at("homeassistant/binary_sensor/garage-box/door_left_person/config")["state_topic"],
      "vigil/door/left/person");
}

TEST(EventPublisherTest, StatusAttributesAreRetainedAndEveryEntityNamesThem) {
  EventPublisherSettings settings;
  settings.snapshots = true;
  PublisherRig rig(settings, {door({leftHalf()})});
  EXPECT_TRUE(rig.sink.on("vigil/status/attributes").empty()) << "none set yet";
  int entities = 0;
  for (const Message& m : rig.sink.messages) {
    if (m.topic.rfind("homeassistant/", 0) != 0) continue;
    EXPECT_EQ(json::parse(m.payload)["json_attributes_topic"], "vigil/status/attributes")
        << m.topic;
    ++entities;
  }
  EXPECT_EQ(entities, 6) << "the node's status and the camera's five";

  const std::string cpu = R"({"name":"cpu","last_fallback_reason":"canary_failed"})";
  rig.publisher.setStatusAttributes(cpu);
  const Message* sent = rig.sink.last("vigil/status/attributes");
  ASSERT_NE(sent, nullptr);
  EXPECT_EQ(sent->payload, cpu);
  EXPECT_TRUE(sent->retained);
  rig.sink.messages.clear();
  rig.publisher.setStatusAttributes(cpu);
  EXPECT_TRUE(rig.sink.messages.empty()) << "unchanged attributes are not sent again";
  rig.publisher.announce();  // a reconnect: the broker may have lost them
  EXPECT_EQ(rig.sink.on("vigil/status/attributes"), std::vector<std::string>{cpu});
}

TEST(EventPublisherTest, CameraStatusFollowsTheCameraAndIsRepublishedAndCleared) {
  PublisherRig rig(EventPublisherSettings{});
  EXPECT_TRUE(rig.sink.on("vigil/door/status").empty()) << "nothing known before the first report";
  rig.publisher.setCameraAvailable("door", true);
  rig.publisher.setCameraAvailable("door", true);  // unchanged: not sent again
  rig.publisher.setCameraAvailable("door", false);
  rig.publisher.setCameraAvailable("door", true);
  rig.publisher.setCameraAvailable("no-such-camera", false);
  EXPECT_EQ(rig.sink.on("vigil/door/status"),
            (std::vector<std::string>{"online", "offline", "online"}));
  EXPECT_TRUE(rig.sink.last("vigil/door/status")->retained);
  EXPECT_TRUE(rig.sink.on("vigil/no-such-camera/status").empty());

  rig.sink.messages.clear();
  rig.publisher.announce();  // a reconnect: the broker may have lost it
  EXPECT_EQ(rig.sink.on("vigil/door/status"), std::vector<std::string>{"online"});

  rig.sink.messages.clear();
  rig.publisher.setCameras({});  // removed: its retained status is deleted
  EXPECT_EQ(rig.sink.on("vigil/door/status"), std::vector<std::string>{""});
}

TEST(EventPublisherTest, SnapshotIsTheBestFrameAsJpegOncePerBestFrame) {
  EventPublisherSettings settings;
  settings.snapshots = true;
  PublisherRig rig(settings);
  cv::Mat dim(kHeight, kWidth, CV_8UC3, cv::Scalar(10, 10, 10));
  cv::Mat bright(kHeight, kWidth, CV_8UC3, cv::Scalar(200, 200, 200));
  rig.frame(0, {personAt(0.3F, 0.6F)}, &dim);
  rig.frame(200, {personAt(0.3F, 0.9F)}, &bright);  // the best: published with `new`
  auto snapshots = rig.sink.on("vigil/door/person/snapshot");
  ASSERT_EQ(snapshots.size(), 1U);
  EXPECT_TRUE(rig.sink.last("vigil/door/person/snapshot")->retained);
  cv::Mat decoded = cv::imdecode(
      std::vector<unsigned char>(snapshots[0].begin(), snapshots[0].end()), cv::IMREAD_COLOR);
  ASSERT_FALSE(decoded.empty()) << "not a JPEG";
  EXPECT_EQ(decoded.cols, kWidth);
  // Away from the drawn box and the caption the picture is the bright frame, not the dim one.
  EXPECT_GT(decoded.at<cv::Vec3b>(kHeight - 10, kWidth - 10)[0], 150);
  // Worse frames change nothing; a better one goes out with the next update.
  rig.frame(1400, {personAt(0.3F, 0.7F)}, &dim);
  EXPECT_EQ(rig.sink.on("vigil/door/person/snapshot").size(), 1U);
  rig.frame(2600, {personAt(0.3F, 0.95F)}, &dim);
  EXPECT_EQ(rig.sink.on("vigil/door/person/snapshot").size(), 2U);
  EXPECT_EQ(rig.publisher.snapshotsPublished(), 2U);
}

// A reconnect restarts the source's frame counter: an event after it whose best frame has the
// number the last snapshot had still gets its own picture, not none and not the earlier one.
TEST(EventPublisherTest, AfterAReconnectTheNextEventGetsItsOwnSnapshot) {
  EventPublisherSettings settings;
  settings.snapshots = true;
  PublisherRig rig(settings);
  cv::Mat dim(kHeight, kWidth, CV_8UC3, cv::Scalar(10, 10, 10));
  cv::Mat bright(kHeight, kWidth, CV_8UC3, cv::Scalar(200, 200, 200));
  rig.frame(0, {personAt(0.3F, 0.6F)}, &bright);
  rig.frame(200, {personAt(0.3F, 0.9F)}, &bright);  // sequence 200: the first snapshot
  ASSERT_EQ(rig.sink.on("vigil/door/person/snapshot").size(), 1U);
  rig.frame(3000, {}, &dim);  // gone for clear_after: the event ends
  ASSERT_EQ(rig.sink.last("vigil/door/person")->payload, "OFF");
  rig.reconnect(5000);
  rig.frame(5000, {personAt(0.3F, 0.6F)}, &dim);
  rig.frame(5200, {personAt(0.3F, 0.9F)}, &dim);  // sequence 200 again
  ASSERT_EQ(rig.sink.last("vigil/door/person")->payload, "ON");
  auto snapshots = rig.sink.on("vigil/door/person/snapshot");
  ASSERT_EQ(snapshots.size(), 2U) << "the second event's snapshot was taken for already sent";
  cv::Mat decoded = cv::imdecode(
      std::vector<unsigned char>(snapshots[1].begin(), snapshots[1].end()), cv::IMREAD_COLOR);
  ASSERT_FALSE(decoded.empty());
  EXPECT_LT(decoded.at<cv::Vec3b>(kHeight - 10, kWidth - 10)[0], 50)
      << "the first event's picture went out again";
}

TEST(EventPublisherTest, NoSnapshotsWhenOff) {
  PublisherRig rig;
  cv::Mat image(kHeight, kWidth, CV_8UC3, cv::Scalar(200, 200, 200));
  rig.frame(0, {personAt(0.3F)}, &image);
  rig.frame(200, {personAt(0.3F)}, &image);
  EXPECT_TRUE(rig.sink.on("vigil/door/person/snapshot").empty());
  for (const Message& m : rig.sink.messages) {
    EXPECT_EQ(m.topic.find("/image/"), std::string::npos) << "no image entity: " << m.topic;
  }
  EXPECT_EQ(rig.publisher.snapshotsPublished(), 0U);
}

TEST(EventPublisherTest, RecentEventsListEachEventNewestFirstWithItsBestFrame) {
  PublisherRig rig({}, {door({leftHalf()})});  // snapshots off: the list has them all the same
  cv::Mat image(kHeight, kWidth, CV_8UC3, cv::Scalar(200, 200, 200));
  rig.frame(0, {personAt(0.3F, 0.6F)}, &image);
  rig.frame(200, {personAt(0.3F, 0.9F)}, &image);
  json list = rig.publisher.recentEvents().json();
  ASSERT_EQ(list.size(), 2U) << list.dump() << ": the camera's event and the zone's";
  const json* camera = nullptr;
  for (const json& e : list) {
    if (e["zone"].is_null()) camera = &e;
  }
  ASSERT_NE(camera, nullptr) << list.dump();
  EXPECT_EQ((*camera)["camera"], "door");
  EXPECT_EQ((*camera)["start"], "2023-11-14T22:13:20.000Z");
  EXPECT_TRUE((*camera)["end"].is_null()) << "going on";
  EXPECT_EQ((*camera)["max_count"], 1);
  EXPECT_NEAR((*camera)["max_score"].get<double>(), 0.9, 1e-4);
  const std::string id = (*camera)["id"];
  EXPECT_EQ((*camera)["snapshot"], "api/events/" + id + "/snapshot.jpg");
  const RecentEvents::Entry* entry = rig.publisher.recentEvents().find(id);
  ASSERT_NE(entry, nullptr);
  cv::Mat decoded = cv::imdecode(
      std::vector<unsigned char>(entry->snapshotJpeg.begin(), entry->snapshotJpeg.end()),
      cv::IMREAD_COLOR);
  EXPECT_EQ(decoded.cols, kWidth) << "the best frame, as JPEG";

  rig.frame(400, {personAt(0.3F), personAt(0.7F)}, &image);
  rig.frame(1600, {personAt(0.3F), personAt(0.7F)}, &image);
  rig.frame(1800, {}, &image);
  rig.publisher.tick(monotonicAt(5000));
  list = rig.publisher.recentEvents().json();
  for (const json& e : list) {
    EXPECT_FALSE(e["end"].is_null()) << "ended: " << e.dump();
  }
  const RecentEvents::Entry* ended = rig.publisher.recentEvents().find(id);
  ASSERT_NE(ended, nullptr);
  EXPECT_EQ(ended->maxCount, 2);
  EXPECT_EQ(ended->count, 0);
}

TEST(EventPublisherTest, RecentEventsKeepOnlyTheNewest) {
  RecentEvents recent(2);
  for (int i = 1; i <= 3; ++i) {
    PresenceEvent e{};
    e.type = PresenceEventType::kNew;
    e.eventId = "door-" + std::to_string(i);
    e.count = 1;
    recent.onEvent("door", e, "cpu");
  }
  const json list = recent.json();
  ASSERT_EQ(list.size(), 2U);
  EXPECT_EQ(list[0]["id"], "door-3") << "newest first";
  EXPECT_EQ(list[1]["id"], "door-2");
  EXPECT_EQ(recent.find("door-1"), nullptr) << "the oldest went";
  PresenceEvent update{};
  update.type = PresenceEventType::kUpdate;
  update.eventId = "door-1";
  recent.onEvent("door", update, "cpu");
  EXPECT_EQ(recent.json().size(), 2U) << "an update of a forgotten event adds nothing";
}

TEST(EventPublisherTest, RemovedCameraEndsItsEventAndClearsItsTopics) {
  PublisherRig rig({}, {door({leftHalf()})});
  rig.frame(0, {personAt(0.3F)});
  rig.frame(200, {personAt(0.3F)});
  rig.sink.messages.clear();
  rig.publisher.setCameras({});
  auto events = rig.sink.events();
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0]["type"], "end");
  EXPECT_EQ(events[1]["type"], "end");
  EXPECT_EQ(events[1]["zone"], "left");
  // Empty retained payloads delete the entities and the retained state.
  EXPECT_EQ(rig.sink.last("homeassistant/binary_sensor/vigil/door_person/config")->payload, "");
  EXPECT_EQ(rig.sink.last("homeassistant/sensor/vigil/door_left_person_count/config")->payload, "");
  EXPECT_EQ(rig.sink.last("vigil/door/person")->payload, "");
  EXPECT_TRUE(rig.sink.last("vigil/door/person")->retained);
  EXPECT_FALSE(rig.publisher.state("door").has_value());
}

TEST(EventPublisherTest, ChangedCameraStartsAfreshAndAnnouncesItsNewZones) {
  PublisherRig rig;
  rig.frame(0, {personAt(0.3F)});
  rig.frame(200, {personAt(0.3F)});
  rig.sink.messages.clear();
  rig.publisher.setCameras({door({leftHalf()})});
  ASSERT_EQ(rig.sink.events().size(), 1U);
  EXPECT_EQ(rig.sink.events()[0]["type"], "end");
  EXPECT_EQ(rig.sink.last("vigil/door/person")->payload, "OFF");
  EXPECT_EQ(rig.sink.last("vigil/door/left/person")->payload, "OFF");
  EXPECT_NE(rig.sink.last("homeassistant/binary_sensor/vigil/door_left_person/config"), nullptr);
  // Unchanged cameras are left alone.
  rig.sink.messages.clear();
  rig.publisher.setCameras({door({leftHalf()})});
  EXPECT_TRUE(rig.sink.messages.empty());
}

TEST(EventPublisherTest, WithoutASinkStateIsStillKept) {
  PublisherRig rig({}, {door()}, /*withSink=*/false);
  rig.frame(0, {personAt(0.5F)});
  rig.frame(200, {personAt(0.5F)});
  EXPECT_TRUE(rig.publisher.state("door")->present);
  EXPECT_EQ(rig.publisher.eventsPublished(), 1U);
  EXPECT_TRUE(rig.sink.messages.empty());
}

TEST(EventPublisherTest, TrackedPersonsAreWhoCountsAndEventsNameTheirIds) {
  PublisherRig rig;
  rig.sink.messages.clear();
  // Tracking's own rule decided these are persons: a low latest score still counts.
  rig.trackedFrame(0, {trackedAt(7, 0.3F, 0.35F)});
  rig.trackedFrame(200, {trackedAt(7, 0.3F, 0.35F)});
  ASSERT_EQ(rig.sink.events().size(), 1U);
  json created = rig.sink.events().back();
  EXPECT_EQ(created["type"], "new");
  EXPECT_EQ(created["count"], 1);
  ASSERT_EQ(created["persons"].size(), 1U);
  EXPECT_EQ(created["persons"][0]["id"], 7);
  EXPECT_EQ(created["persons"][0]["first_seen"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(created["persons"][0]["stationary"], false);
  EXPECT_DOUBLE_EQ(created["persons"][0]["x"].get<double>(), 0.25);
  // Track 7 missed on this frame (predicted) and track 9 arrives: two persons, no flicker.
  rig.trackedFrame(1400, {trackedAt(7, 0.3F, 0.35F, false), trackedAt(9, 0.8F)});
  json update = rig.sink.events().back();
  EXPECT_EQ(update["type"], "update");
  EXPECT_EQ(update["count"], 2);
  EXPECT_EQ(update["persons"][1]["id"], 9);
  EXPECT_EQ(rig.sink.last("vigil/door/person/count")->payload, "2");
  EXPECT_EQ(rig.publisher.state("door")->count, 2);
}

TEST(EventPublisherTest, ZoneEventsOfTracksAndLoiteringGoToTheirTopics) {
  ZoneSpec left = leftHalf();
  left.loiterAfter = 30s;
  PublisherRig rig({}, {door({left, ZoneSpec{"right", {{0.5F, 0}, {1, 0}, {1, 1}, {0.5F, 1}}}})});
  EXPECT_EQ(rig.sink.on("vigil/door/left/loitering"), std::vector<std::string>{"OFF"});
  EXPECT_TRUE(rig.sink.on("vigil/door/right/loitering").empty()) << "no loiter_after";
  const auto discovery =
      rig.sink.on("homeassistant/binary_sensor/vigil/door_left_loitering/config");
  ASSERT_EQ(discovery.size(), 1U);
  EXPECT_EQ(json::parse(discovery[0])["state_topic"], "vigil/door/left/loitering");
  EXPECT_TRUE(rig.sink.on("homeassistant/binary_sensor/vigil/door_right_loitering/config").empty());
  rig.sink.messages.clear();

  rig.trackedFrame(0, {trackedAt(3, 0.2F)}, {{ZoneEventType::kEnter, "left", 3, 0, 0}});
  rig.trackedFrame(30000, {trackedAt(3, 0.2F)}, {{ZoneEventType::kLoiter, "left", 3, 30, 30}});
  EXPECT_EQ(rig.sink.last("vigil/door/left/loitering")->payload, "ON");
  EXPECT_TRUE(rig.sink.last("vigil/door/left/loitering")->retained);
  // The camera stops: its track leaves without a frame.
  rig.publisher.onZoneEvents("door", {{ZoneEventType::kLeave, "left", 3, 40, 40}}, {}, at(40000));
  EXPECT_EQ(rig.sink.last("vigil/door/left/loitering")->payload, "OFF");

  std::vector<json> events = zoneEventsOf(rig.sink);
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(events[0]["type"], "enter");
  EXPECT_EQ(events[0]["camera"], "door");
  EXPECT_EQ(events[0]["zone"], "left");
  EXPECT_EQ(events[0]["track_id"], 3);
  EXPECT_EQ(events[0]["time"], "2023-11-14T22:13:20.000Z");
  EXPECT_DOUBLE_EQ(events[0]["box"]["x"].get<double>(), 0.15);
  EXPECT_EQ(events[1]["type"], "loiter");
  EXPECT_EQ(events[1]["seconds_inside"], 30);
  EXPECT_EQ(events[2]["type"], "leave");
  EXPECT_FALSE(events[2].contains("box")) << "the track is gone";
  for (const Message& m : rig.sink.messages) {
    if (m.topic == "vigil/zone_events") {
      EXPECT_FALSE(m.retained);
    }
  }
  EXPECT_EQ(rig.publisher.zoneEventsPublished(), 3U);
}

// The door camera with a line across its lower half ("entry": enter downwards, leave upwards)
// and a second one ("side").
PublishedCamera doorWithLines(std::vector<LinePoint> entry = {{0, 0.8}, {1, 0.8}}) {
  PublishedCamera camera = door();
  LineSpec line;
  line.name = "entry";
  line.points = std::move(entry);
  line.inName = "enter";
  line.outName = "leave";
  camera.lines.push_back(line);
  line = LineSpec{};
  line.name = "side";
  line.points = {{0.5, 0}, {0.5, 1}};
  camera.lines.push_back(line);
  return camera;
}

LineCrossingEvent crossing(const std::string& line, CrossingDirection d, std::uint64_t track) {
  return {line, d, track, 0, personAt(0.3F).box, 0.8F};
}

TEST(EventPublisherTest, LineCrossingsAreEventsAndRetainedCountsWithTotalIncreasingSensors) {
  PublisherRig rig({}, {doorWithLines()});
  EXPECT_EQ(rig.sink.on("vigil/door/entry/in"), std::vector<std::string>{"0"});
  EXPECT_EQ(rig.sink.on("vigil/door/entry/out"), std::vector<std::string>{"0"});
  EXPECT_TRUE(rig.sink.last("vigil/door/entry/in")->retained);
  const auto sensor = rig.sink.on("homeassistant/sensor/vigil/door_entry_in/config");
  ASSERT_EQ(sensor.size(), 1U);
  const json config = json::parse(sensor[0]);
  EXPECT_EQ(config["name"], "entry enter");
  EXPECT_EQ(config["state_topic"], "vigil/door/entry/in");
  EXPECT_EQ(config["state_class"], "total_increasing");
  EXPECT_EQ(
      json::parse(rig.sink.on("homeassistant/sensor/vigil/door_entry_out/config").at(0))["name"],
      "entry leave");
  EXPECT_EQ(
      json::parse(rig.sink.on("homeassistant/sensor/vigil/door_side_in/config").at(0))["name"],
      "side in");
  rig.sink.messages.clear();

  rig.trackedFrame(
      0, {trackedAt(3, 0.3F)}, {},
      {crossing("entry", CrossingDirection::kIn, 3), crossing("side", CrossingDirection::kOut, 3)});
  rig.trackedFrame(200, {trackedAt(4, 0.3F)}, {}, {crossing("entry", CrossingDirection::kIn, 4)});
  EXPECT_EQ(rig.sink.on("vigil/door/entry/in"), (std::vector<std::string>{"1", "2"}));
  EXPECT_TRUE(rig.sink.last("vigil/door/entry/in")->retained);
  EXPECT_EQ(rig.sink.on("vigil/door/side/out"), std::vector<std::string>{"1"});
  EXPECT_EQ(rig.publisher.lineCounts().count("door", "entry", CrossingDirection::kIn), 2U);
  EXPECT_EQ(rig.publisher.lineCounts().count("door", "entry", CrossingDirection::kOut), 0U);
  const auto events = rig.sink.on("vigil/line_events");
  ASSERT_EQ(events.size(), 3U);
  EXPECT_FALSE(rig.sink.last("vigil/line_events")->retained);
  const json first = json::parse(events[0]);
  EXPECT_EQ(first["schema"], 1);
  EXPECT_EQ(first["type"], "cross");
  EXPECT_EQ(first["camera"], "door");
  EXPECT_EQ(first["line"], "entry");
  EXPECT_EQ(first["direction"], "in");
  EXPECT_EQ(first["direction_name"], "enter");
  EXPECT_EQ(first["count"], 1);
  EXPECT_EQ(first["track_id"], 3);
  EXPECT_EQ(first["time"], "2023-11-14T22:13:20.000Z");
  EXPECT_DOUBLE_EQ(first["box"]["x"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(first["box"]["score"].get<double>(), 0.8);
  EXPECT_EQ(json::parse(events[1])["direction_name"], "out");
  EXPECT_EQ(json::parse(events[2])["count"], 2);

  // A reconnect republishes the counts.
  rig.sink.messages.clear();
  rig.publisher.announce();
  EXPECT_EQ(rig.sink.on("vigil/door/entry/in"), std::vector<std::string>{"2"});
}

TEST(EventPublisherTest, LineCountsContinueAfterARestartAndAChangedLineStartsAgain) {
  TempDir dir;
  EventPublisherSettings settings;
  settings.lineCountsFile = dir.path() / "line-counts.json";
  {
    PublisherRig rig(settings, {doorWithLines()});
    rig.trackedFrame(0, {trackedAt(3, 0.3F)}, {},
                     {crossing("entry", CrossingDirection::kIn, 3),
                      crossing("entry", CrossingDirection::kOut, 3),
                      crossing("side", CrossingDirection::kIn, 3)});
    rig.publisher.tick(monotonicAt(300));  // saves
  }
  ASSERT_TRUE(std::filesystem::exists(settings.lineCountsFile));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "line-counts.json.partial"));
  // A restart: the retained counts start where they were.
  PublisherRig restarted(settings, {doorWithLines()});
  EXPECT_EQ(restarted.sink.on("vigil/door/entry/in"), std::vector<std::string>{"1"});
  EXPECT_EQ(restarted.sink.on("vigil/door/side/in"), std::vector<std::string>{"1"});
  restarted.trackedFrame(0, {trackedAt(5, 0.3F)}, {},
                         {crossing("entry", CrossingDirection::kIn, 5)});
  EXPECT_EQ(restarted.sink.last("vigil/door/entry/in")->payload, "2");
  // A reload that moves the entry line: its counts start again at 0, the side line keeps its.
  restarted.sink.messages.clear();
  restarted.publisher.setCameras({doorWithLines({{0, 0.6}, {1, 0.6}})});
  EXPECT_EQ(restarted.sink.last("vigil/door/entry/in")->payload, "0");
  EXPECT_EQ(restarted.sink.last("vigil/door/entry/out")->payload, "0");
  EXPECT_EQ(restarted.sink.last("vigil/door/side/in")->payload, "1");
  EXPECT_EQ(restarted.publisher.lineCounts().count("door", "entry", CrossingDirection::kIn), 0U);
  // And the file says so for the next start.
  restarted.publisher.endAll(at(1000));
  LineCounts reread(settings.lineCountsFile);
  reread.configure(
      {{"door", "entry", {{0, 0.6}, {1, 0.6}}}, {"door", "side", {{0.5, 0}, {0.5, 1}}}});
  EXPECT_EQ(reread.count("door", "entry", CrossingDirection::kIn), 0U);
  EXPECT_EQ(reread.count("door", "side", CrossingDirection::kIn), 1U);
}

TEST(EventPublisherTest, AnUnreadableLineCountFileStartsTheCountsAtZero) {
  TempDir dir;
  std::ofstream(dir.path() / "line-counts.json") << "{not json";
  LineCounts counts(dir.path() / "line-counts.json");
  counts.configure({{"door", "entry", {{0, 0.8}, {1, 0.8}}}});
  EXPECT_EQ(counts.count("door", "entry", CrossingDirection::kIn), 0U);
  EXPECT_EQ(counts.add("door", "entry", CrossingDirection::kIn), 1U);
  EXPECT_EQ(counts.add("door", "nowhere", CrossingDirection::kIn), 0U) << "not configured";
  counts.save();
  LineCounts reread(dir.path() / "line-counts.json");
  reread.configure({{"door", "entry", {{0, 0.8}, {1, 0.8}}}});
  EXPECT_EQ(reread.count("door", "entry", CrossingDirection::kIn), 1U);
}

TEST(EventPublisherTest, IsoUtcHasMillisecondsAndZ) {
  EXPECT_EQ(isoUtc(kT0), "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(isoUtc(at(1234)), "2023-11-14T22:13:21.234Z");
  EXPECT_EQ(isoUtc(WallClock::time_point{}), "1970-01-01T00:00:00.000Z");
}

}  // namespace
}  // namespace vigil
