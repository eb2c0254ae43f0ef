#include "daemon/events/presence_messages.h"

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

TEST(PresenceMessagesTest, EventsSayStatesCountsAndJsonWithTheFramesLatency) {
  PresenceMessagesSink sink;
  PresenceMessages messages("vigil", false, &sink);
  EventSnapshot snapshot;
  ObservedFrame frame;
  frame.captureTime = at(0);
  messages.publishEvents("door",
                         {presenceEvent(PresenceEventType::kNew, "", 2),
                          presenceEvent(PresenceEventType::kUpdate, "", 1)},
                         snapshot, "cpu", &frame, at(40));
  messages.publishEvents("door", {presenceEvent(PresenceEventType::kEnd, "", 0)}, snapshot, "cpu",
                         nullptr, at(3000));

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
    PresenceMessages messages("vigil", snapshots, &sink);
    CapturedPicture picture;
    cv::Mat(kHeight, kWidth, CV_8UC3, cv::Scalar(90, 90, 90))
        .copyTo(picture.bgrForWriting({kWidth, kHeight}));
    ObservedFrame frame;
    frame.id = 7;
    frame.width = kWidth;
    frame.height = kHeight;
    frame.picture = &picture;
    EventSnapshot snapshot;
    snapshot.keep(frame);

    // A zone's event makes no snapshot of its own; the camera's does, once per best frame.
    messages.publishEvents("door", {presenceEvent(PresenceEventType::kNew, "left", 1, 7)}, snapshot,
                           "cpu", &frame, at(0));
    EXPECT_TRUE(snapshot.jpeg().empty());
    messages.publishEvents("door",
                           {presenceEvent(PresenceEventType::kNew, "", 1, 7),
                            presenceEvent(PresenceEventType::kUpdate, "", 1, 7)},
                           snapshot, "cpu", &frame, at(0));
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
  PresenceMessages messages("home", false, &sink);
  messages.publishState("door", "", PresenceTracker::State{true, 3});
  messages.publishState("door", "left", PresenceTracker::State{false, 0});
  EXPECT_EQ(sink.on("home/door/person"), std::vector<std::string>{"ON"});
  EXPECT_EQ(sink.on("home/door/person/count"), std::vector<std::string>{"3"});
  EXPECT_EQ(sink.on("home/door/left/person"), std::vector<std::string>{"OFF"});
  EXPECT_EQ(sink.on("home/door/left/person/count"), std::vector<std::string>{"0"});
  EXPECT_EQ(messages.eventsPublished(), 0U);
}

TEST(PresenceMessagesTest, WithoutASinkTheListIsStillKept) {
  PresenceMessages messages("vigil", true, nullptr);
  EventSnapshot snapshot;
  messages.publishEvents("door", {presenceEvent(PresenceEventType::kNew, "", 1)}, snapshot, "cpu",
                         nullptr, at(0));
  EXPECT_NE(messages.recentEvents().find("door-1"), nullptr);
  EXPECT_EQ(messages.eventsPublished(), 1U);
}

}  // namespace
}  // namespace vigil
