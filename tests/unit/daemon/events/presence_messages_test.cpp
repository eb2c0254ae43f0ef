#include "daemon/events/presence_messages.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/unit/daemon/events/event_test_clock.h"

namespace vigil {
namespace {

using namespace event_test;

struct PresenceMessage {
  std::string topic;
  std::string payload;
  bool retained;
};

class PresenceMessagesSink : public MessageSink {
 public:
  void publish(std::string topic, std::string payload, bool retained) override {
    messages.push_back({std::move(topic), std::move(payload), retained});
  }
  std::vector<std::string> on(const std::string& topic) const {
    std::vector<std::string> out;
    for (const auto& m : messages) {
      if (m.topic == topic) out.push_back(m.payload);
    }
    return out;
  }
  std::vector<PresenceMessage> messages;
};

PresenceEvent presenceEvent(PresenceEventType type, std::string zone, int count,
                            std::uint64_t bestFrame = 1) {
  PresenceEvent e{type, std::move(zone), "door-1", at(0), std::nullopt, count, 0.9F, {},
                  {},   bestFrame};
  if (type == PresenceEventType::kEnd) e.end = at(2000);
  return e;
}

// Frame 7 of the camera, a plain grey picture.
struct GreyFrame {
  GreyFrame() {
    cv::Mat(kHeight, kWidth, CV_8UC3, cv::Scalar(90, 90, 90))
        .copyTo(picture.bgrForWriting({kWidth, kHeight}));
    frame.id = 7;
    frame.width = kWidth;
    frame.height = kHeight;
    frame.picture = &picture;
  }
  CapturedPicture picture;
  ObservedFrame frame;
};

TEST(PresenceMessagesTest, EventsSayStatesCountsAndJsonWithTheFramesLatency) {
  PresenceMessagesSink sink;
  PresenceMessages messages("vigil", "box", false, &sink);
  EventSnapshot snapshot;
  ObservedFrame frame;
  frame.captureTime = at(0);
  messages.publishEvents("door",
                         {presenceEvent(PresenceEventType::kNew, "", 2),
                          presenceEvent(PresenceEventType::kUpdate, "", 1)},
                         snapshot, "cpu", &frame, at(40), true);
  messages.publishEvents("door", {presenceEvent(PresenceEventType::kEnd, "", 0)}, snapshot, "cpu",
                         nullptr, at(3000), true);

  // An update changes the count only; new and end say ON and OFF, all retained.
  EXPECT_EQ(sink.on("vigil/door/person"), (std::vector<std::string>{"ON", "OFF"}));
  EXPECT_EQ(sink.on("vigil/door/person/count"), (std::vector<std::string>{"2", "1", "0"}));
  for (const auto& m : sink.messages) EXPECT_EQ(m.retained, m.topic != "vigil/events") << m.topic;
  auto events = sink.on("vigil/events");
  ASSERT_EQ(events.size(), 3U);
  auto created = nlohmann::json::parse(events[0]);
  EXPECT_EQ(created["type"], "new");
  EXPECT_EQ(created["backend"], "cpu");
  EXPECT_DOUBLE_EQ(created["latency_ms"].get<double>(), 40.0);
  EXPECT_EQ(created["node"], "box");
  EXPECT_EQ(created["max_count"], 2);
  // The update counts 1 person, and the most at once in the event so far is still 2.
  EXPECT_EQ(nlohmann::json::parse(events[1])["count"], 1);
  EXPECT_EQ(nlohmann::json::parse(events[1])["max_count"], 2);
  EXPECT_TRUE(created["snapshot"].is_null()) << "no picture was kept";
  EXPECT_TRUE(nlohmann::json::parse(events[2])["latency_ms"].is_null());
  EXPECT_EQ(messages.eventsPublished(), 3U);
  // The page's list has the one event, ended.
  const RecentEvents::Entry* entry = messages.recentEvents().find("door-1");
  ASSERT_NE(entry, nullptr);
  EXPECT_TRUE(entry->end.has_value());
}

TEST(PresenceMessagesTest, TheBestFrameIsTheSnapshotOfTheListAndWithSnapshotsOnOfMqtt) {
  for (bool snapshots : {false, true}) {
    PresenceMessagesSink sink;
    PresenceMessages messages("vigil", "box", snapshots, &sink);
    GreyFrame grey;
    ObservedFrame& frame = grey.frame;
    EventSnapshot snapshot;
    snapshot.keep(frame);

    // A zone's event makes no snapshot of its own; the camera's does, once per best frame.
    messages.publishEvents("door", {presenceEvent(PresenceEventType::kNew, "left", 1, 7)}, snapshot,
                           "cpu", &frame, at(0), true);
    EXPECT_TRUE(snapshot.jpeg().empty());
    messages.publishEvents("door",
                           {presenceEvent(PresenceEventType::kNew, "", 1, 7),
                            presenceEvent(PresenceEventType::kUpdate, "", 1, 7)},
                           snapshot, "cpu", &frame, at(0), true);
    ASSERT_FALSE(snapshot.jpeg().empty());
    EXPECT_EQ(messages.recentEvents().find("door-1")->snapshotJpeg, snapshot.jpeg());
    const std::size_t sent = snapshots ? 1U : 0U;
    EXPECT_EQ(sink.on("vigil/door/person/snapshot").size(), sent);
    EXPECT_EQ(messages.snapshotsPublished(), sent);

    // announce() sends the latest one again, with snapshots on.
    messages.republishSnapshot("door", snapshot);
    EXPECT_EQ(sink.on("vigil/door/person/snapshot").size(), 2 * sent);
  }
}

TEST(PresenceMessagesTest, StateIsTheCamerasOrTheZonesPersonAndCount) {
  PresenceMessagesSink sink;
  PresenceMessages messages("home", "box", false, &sink);
  messages.publishState("door", "", PresenceTracker::State{true, 3});
  messages.publishState("door", "left", PresenceTracker::State{false, 0});
  EXPECT_EQ(sink.on("home/door/person"), std::vector<std::string>{"ON"});
  EXPECT_EQ(sink.on("home/door/person/count"), std::vector<std::string>{"3"});
  EXPECT_EQ(sink.on("home/door/left/person"), std::vector<std::string>{"OFF"});
  EXPECT_EQ(sink.on("home/door/left/person/count"), std::vector<std::string>{"0"});
  EXPECT_EQ(messages.eventsPublished(), 0U);
}

TEST(PresenceMessagesTest, WithoutASinkTheListIsStillKept) {
  PresenceMessages messages("vigil", "box", true, nullptr);
  EventSnapshot snapshot;
  messages.publishEvents("door", {presenceEvent(PresenceEventType::kNew, "", 1)}, snapshot, "cpu",
                         nullptr, at(0), true);
  EXPECT_NE(messages.recentEvents().find("door-1"), nullptr);
  EXPECT_EQ(messages.eventsPublished(), 1U);
}

// What the publisher hands the history, in order.
class RecorderLog : public EventRecorder {
 public:
  void record(const EventRecord& event) override {
    said.push_back(
        fmt::format("record {} count {} end {}", event.id, event.count, event.end.has_value()));
  }
  void recordPicture(const std::string& eventId, EventPictureKind kind,
                     const std::string& jpeg) override {
    said.push_back(fmt::format("picture {} {} {}", eventId,
                               kind == EventPictureKind::kFirst ? "first" : "best",
                               jpeg.empty() ? "empty" : "jpeg"));
  }
  std::vector<std::string> said;
};

TEST(PresenceMessagesTest, ANewEventsPictureGoesOutBeforeItsOnAndItsNewMessage) {
  PresenceMessagesSink sink;
  PresenceMessages messages("vigil", "box", true, &sink);
  RecorderLog recorder;
  messages.setRecorder(&recorder);
  GreyFrame grey;
  ObservedFrame& frame = grey.frame;
  EventSnapshot snapshot;
  snapshot.keep(frame);
  messages.publishEvents("door", {presenceEvent(PresenceEventType::kNew, "", 1, 7)}, snapshot,
                         "cpu", &frame, at(0), true);

  std::vector<std::string> order;
  for (const auto& m : sink.messages) order.push_back(m.topic);
  EXPECT_EQ(order, (std::vector<std::string>{"vigil/door/person/snapshot", "vigil/door/person",
                                             "vigil/door/person/count", "vigil/events"}));
  auto created = nlohmann::json::parse(sink.on("vigil/events").at(0));
  EXPECT_EQ(created["snapshot"], "/api/events/door-1/snapshot.jpg");
  EXPECT_EQ(recorder.said, (std::vector<std::string>{"record door-1 count 1 end false",
                                                     "picture door-1 first jpeg"}));

  // A camera whose history is off records nothing, and MQTT goes on as before.
  RecorderLog off;
  messages.setRecorder(&off);
  messages.publishEvents("door", {presenceEvent(PresenceEventType::kEnd, "", 0)}, snapshot, "cpu",
                         nullptr, at(3000), false);
  EXPECT_TRUE(off.said.empty());
  EXPECT_EQ(sink.on("vigil/door/person").back(), "OFF");
}

}  // namespace
}  // namespace vigil
