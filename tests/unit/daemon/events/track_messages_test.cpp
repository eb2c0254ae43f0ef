// The messages about tracked persons that presence does not make (TrackMessages), on their own:
// zone events and each loiter zone's retained loitering state, line crossings with their running
// counts, the retained counts, and counts kept across a restart unless a line's points changed.
#include "daemon/events/track_messages.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/log_capture.h"
#include "tests/temp_dir.h"
#include "tests/unit/daemon/events/event_test_clock.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

struct TrackMessage {
  std::string topic;
  std::string payload;
  bool retained;
};

class TrackMessageSink : public MessageSink {
 public:
  void publish(std::string topic, std::string payload, bool retained) override {
    sent.push_back({std::move(topic), std::move(payload), retained});
  }
  // "topic payload" of every message, retained ones marked "(r)", in the order sent.
  std::vector<std::string> said() const {
    std::vector<std::string> out;
    for (const auto& m : sent) {
      out.push_back(m.topic + (m.retained ? " (r) " : " ") +
                    (m.payload.starts_with("{") ? "{json}" : m.payload));
    }
    return out;
  }
  std::vector<TrackMessage> sent;
};

// "yard" with a zone "gate" that loiters after 10 s, a zone "path" that does not, and a line
// "entrance" whose directions are called "arrive" and "depart".
PublishedCamera yardCamera(std::vector<LinePoint> entrance = {{0.5, 0}, {0.5, 1}}) {
  PublishedCamera camera;
  camera.name = "yard";
  camera.zones = {ZoneSpec{"gate", {{0, 0}, {0.5F, 0}, {0.5F, 1}, {0, 1}}, 1, 10s},
                  ZoneSpec{"path", {{0.5F, 0}, {1, 0}, {1, 1}, {0.5F, 1}}}};
  LineSpec line;
  line.name = "entrance";
  line.points = std::move(entrance);
  line.inName = "arrive";
  line.outName = "depart";
  camera.lines = {line};
  return camera;
}

ZoneEvent yardZoneEvent(ZoneEventType type, const std::string& zone, std::uint64_t track) {
  ZoneEvent e;
  e.type = type;
  e.zone = zone;
  e.trackId = track;
  e.secondsInside = type == ZoneEventType::kEnter ? 0 : 12.34;
  return e;
}

LineCrossingEvent entranceCrossing(CrossingDirection direction, std::uint64_t track,
                                   const std::string& line = "entrance") {
  LineCrossingEvent e;
  e.line = line;
  e.direction = direction;
  e.trackId = track;
  e.box = Box{100, 50, 200, 400};
  e.score = 0.8F;
  return e;
}

TEST(TrackMessagesTest, AZoneEventIsAnEventMessageWithTheTracksBoxWhenItIsKnown) {
  TrackMessageSink sink;
  TrackMessages messages("vigil", &sink, {});
  TrackedPerson person;
  person.id = 7;
  person.box = Box{100, 50, 200, 400};
  person.score = 0.8F;
  messages.publishZoneEvents(yardCamera(),
                             {yardZoneEvent(ZoneEventType::kEnter, "path", 7),
                              yardZoneEvent(ZoneEventType::kLeave, "path", 8)},
                             {person}, event_test::at(0), event_test::kWidth, event_test::kHeight);
  ASSERT_EQ(sink.said(),
            (std::vector<std::string>{"vigil/zone_events {json}", "vigil/zone_events {json}"}));
  const auto enter = nlohmann::json::parse(sink.sent[0].payload);
  EXPECT_EQ(enter["type"], "enter");
  EXPECT_EQ(enter["camera"], "yard");
  EXPECT_EQ(enter["zone"], "path");
  EXPECT_EQ(enter["track_id"], 7);
  EXPECT_EQ(enter["time"], "2023-11-14T22:13:20.000Z");
  ASSERT_TRUE(enter.contains("box"));
  EXPECT_FLOAT_EQ(enter["box"]["x"].get<float>(), 0.1F) << "normalized by the frame's width";
  const auto leave = nlohmann::json::parse(sink.sent[1].payload);
  EXPECT_EQ(leave["type"], "leave");
  EXPECT_EQ(leave["track_id"], 8);
  EXPECT_FALSE(leave.contains("box")) << "track 8 is no longer known";
  EXPECT_EQ(messages.zoneEventsPublished(), 2U);
}

TEST(TrackMessagesTest, ALoiterZoneIsLoiteringFromItsFirstLoitererUntilItsLastLeaves) {
  TrackMessageSink sink;
  TrackMessages messages("vigil", &sink, {});
  const PublishedCamera yard = yardCamera();
  const auto t = event_test::at(0);
  const int w = event_test::kWidth;
  const int h = event_test::kHeight;
  messages.publishZoneEvents(yard, {yardZoneEvent(ZoneEventType::kEnter, "gate", 1)}, {}, t, w, h);
  messages.publishZoneEvents(yard, {yardZoneEvent(ZoneEventType::kLoiter, "gate", 1)}, {}, t, w, h);
  messages.publishZoneEvents(yard, {yardZoneEvent(ZoneEventType::kLoiter, "gate", 2)}, {}, t, w, h);
  messages.publishZoneEvents(yard, {yardZoneEvent(ZoneEventType::kLeave, "gate", 1)}, {}, t, w, h);
  messages.publishZoneEvents(yard, {yardZoneEvent(ZoneEventType::kLeave, "gate", 2)}, {}, t, w, h);
  EXPECT_EQ(sink.said(), (std::vector<std::string>{
                             "vigil/zone_events {json}",  // 1 enters: no state
                             "vigil/zone_events {json}",  // 1 loiters
                             "vigil/yard/gate/loitering (r) ON",
                             "vigil/zone_events {json}",  // 2 loiters too: still ON
                             "vigil/zone_events {json}",  // 1 leaves: 2 still loiters
                             "vigil/zone_events {json}",  // 2 leaves
                             "vigil/yard/gate/loitering (r) OFF",
                         }));
  EXPECT_EQ(messages.zoneEventsPublished(), 5U);
}

TEST(TrackMessagesTest, AZoneWithoutLoiterHasNoLoiteringState) {
  TrackMessageSink sink;
  TrackMessages messages("vigil", &sink, {});
  const PublishedCamera yard = yardCamera();
  EXPECT_TRUE(TrackMessages::hasLoiter(yard, "gate"));
  EXPECT_FALSE(TrackMessages::hasLoiter(yard, "path"));
  EXPECT_FALSE(TrackMessages::hasLoiter(yard, "nowhere"));
  messages.publishZoneEvents(yard, {yardZoneEvent(ZoneEventType::kLoiter, "path", 1)}, {},
                             event_test::at(0), event_test::kWidth, event_test::kHeight);
  messages.publishLoitering(yard, "path");
  EXPECT_EQ(sink.said(), std::vector<std::string>{"vigil/zone_events {json}"});
}

TEST(TrackMessagesTest, TheRetainedLoiteringStateFollowsTheLoiterersAndAForgottenCamerasGo) {
  TrackMessageSink sink;
  TrackMessages messages("vigil", &sink, {});
  const PublishedCamera yard = yardCamera();
  messages.publishLoitering(yard, "gate");
  messages.publishZoneEvents(yard, {yardZoneEvent(ZoneEventType::kLoiter, "gate", 1)}, {},
                             event_test::at(0), event_test::kWidth, event_test::kHeight);
  sink.sent.clear();
  messages.publishLoitering(yard, "gate");
  messages.forget("yard");
  messages.publishLoitering(yard, "gate");
  EXPECT_EQ(sink.said(), (std::vector<std::string>{"vigil/yard/gate/loitering (r) ON",
                                                   "vigil/yard/gate/loitering (r) OFF"}));
}

TEST(TrackMessagesTest, ACrossingIsAnEventAndTheDirectionsRetainedRunningCount) {
  TrackMessageSink sink;
  TrackMessages messages("vigil", &sink, {});
  const PublishedCamera yard = yardCamera();
  messages.configureLines({yard});
  const auto t = event_test::at(0);
  messages.publishCrossings(
      yard,
      {entranceCrossing(CrossingDirection::kIn, 1), entranceCrossing(CrossingDirection::kIn, 2),
       entranceCrossing(CrossingDirection::kOut, 1)},
      t, event_test::kWidth, event_test::kHeight);
  EXPECT_EQ(sink.said(), (std::vector<std::string>{
                             "vigil/line_events {json}",
                             "vigil/yard/entrance/in (r) 1",
                             "vigil/line_events {json}",
                             "vigil/yard/entrance/in (r) 2",
                             "vigil/line_events {json}",
                             "vigil/yard/entrance/out (r) 1",
                         }));
  const auto second = nlohmann::json::parse(sink.sent[2].payload);
  EXPECT_EQ(second["type"], "cross");
  EXPECT_EQ(second["line"], "entrance");
  EXPECT_EQ(second["direction"], "in");
  EXPECT_EQ(second["direction_name"], "arrive");
  EXPECT_EQ(second["count"], 2);
  EXPECT_EQ(second["track_id"], 2);
  EXPECT_EQ(messages.lineCounts().count("yard", "entrance", CrossingDirection::kIn), 2U);
}

TEST(TrackMessagesTest, ACrossingOfALineReloadedAwayIsNeitherSaidNorCounted) {
  TrackMessageSink sink;
  TrackMessages messages("vigil", &sink, {});
  const PublishedCamera yard = yardCamera();
  messages.configureLines({yard});
  messages.publishCrossings(yard, {entranceCrossing(CrossingDirection::kIn, 1, "old line")},
                            event_test::at(0), event_test::kWidth, event_test::kHeight);
  EXPECT_TRUE(sink.sent.empty());
  EXPECT_EQ(messages.lineCounts().count("yard", "old line", CrossingDirection::kIn), std::nullopt);
}

TEST(TrackMessagesTest, TheRetainedCountsAreEveryLinesBothDirections) {
  TrackMessageSink sink;
  TrackMessages messages("vigil", &sink, {});
  const PublishedCamera yard = yardCamera();
  messages.configureLines({yard});
  messages.publishCrossings(yard, {entranceCrossing(CrossingDirection::kOut, 3)}, event_test::at(0),
                            event_test::kWidth, event_test::kHeight);
  sink.sent.clear();
  messages.publishLineCounts(yard);
  EXPECT_EQ(sink.said(), (std::vector<std::string>{"vigil/yard/entrance/in (r) 0",
                                                   "vigil/yard/entrance/out (r) 1"}));
}

TEST(TrackMessagesTest, CountsContinueAfterARestartUnlessTheLinesPointsChanged) {
  TempDir dir;
  const auto file = dir.path() / "line-counts.json";
  {
    TrackMessages messages("vigil", nullptr, file);  // no sink: counted all the same
    messages.configureLines({yardCamera()});
    messages.publishCrossings(
        yardCamera(),
        {entranceCrossing(CrossingDirection::kIn, 1), entranceCrossing(CrossingDirection::kIn, 2)},
        event_test::at(0), event_test::kWidth, event_test::kHeight);
    messages.save();
  }
  {
    TrackMessages restarted("vigil", nullptr, file);
    restarted.configureLines({yardCamera()});
    EXPECT_EQ(restarted.lineCounts().count("yard", "entrance", CrossingDirection::kIn), 2U);
  }
  testing::LogCapture log("events");
  TrackMessages moved("vigil", nullptr, file);
  moved.configureLines({yardCamera({{0.6, 0}, {0.6, 1}})});
  EXPECT_EQ(moved.lineCounts().count("yard", "entrance", CrossingDirection::kIn), 0U);
  EXPECT_EQ(log.text(), "line yard/entrance: its points changed, its counts start again at 0\n");
  // The restart at 0 was saved by configureLines: the old points' 2 are gone from the file.
  TrackMessages back("vigil", nullptr, file);
  back.configureLines({yardCamera()});
  EXPECT_EQ(back.lineCounts().count("yard", "entrance", CrossingDirection::kIn), 0U);
}

}  // namespace
}  // namespace vigil
