// What a busy camera writes to the log (issue 61): at info, a few lines a minute however many
// persons come and go (presence's new and end); each person's zone enter and leave and each line
// crossing at debug, where they still are, one line each. EventPublisher drives presence, zones
// and lines as the daemon's result path does.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/base/log.h"
#include "daemon/events/event_publisher.h"
#include "tests/log_capture.h"
#include "tests/occurrences.h"
#include "tests/unit/daemon/events/event_test_clock.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using namespace event_test;

// "hall": a zone "left" (the left half) and a line "door" across the middle.
PublishedCamera hall() {
  PresenceSettings presence;
  presence.minFrames = 2;
  presence.minScore = 0.5F;
  presence.clearAfter = 2s;
  presence.updateInterval = 1s;
  LineSpec door;
  door.name = "door";
  door.points = {{0.5, 0}, {0.5, 1}};
  return PublishedCamera{
      "hall", presence, {ZoneSpec{"left", {{0, 0}, {0.5F, 0}, {0.5F, 1}, {0, 1}}}}, {}, {door}};
}

// Track `id` with its feet in the left zone.
TrackedPerson personInTheZone(std::uint64_t id) {
  TrackedPerson p;
  p.id = id;
  p.box = Box{150, 100, 100, 300};
  p.score = 0.9F;
  p.firstSeen = std::chrono::duration<double>(kT0.time_since_epoch()).count();
  p.lastSeen = p.firstSeen;
  p.detected = true;
  p.zones = {"left"};
  return p;
}

// One minute at 5 frames a second: a person always in view, a new one every three frames, who
// enters the zone, crosses the line and leaves the zone: 100 persons, 200 zone events and 100
// crossings. What the "events" logger wrote meanwhile at `level`, one message a line.
std::string aBusyMinuteAt(spdlog::level::level_enum level) {
  setLogLevel(level);
  testing::LogCapture log("events");
  EventPublisher publisher({}, nullptr);
  publisher.setCameras({hall()});
  std::vector<Detection> none;
  for (int frame = 0; frame < 300; ++frame) {
    const std::uint64_t id = static_cast<std::uint64_t>(frame / 3) + 1;
    const std::vector<TrackedPerson> persons = {personInTheZone(id)};
    std::vector<ZoneEvent> zoneEvents;
    std::vector<LineCrossingEvent> crossings;
    if (frame % 3 == 0) zoneEvents.push_back({ZoneEventType::kEnter, "left", id, 0, 0});
    if (frame % 3 == 1) {
      crossings.push_back({"door", CrossingDirection::kIn, id, 0, persons[0].box, 0.9F});
    }
    if (frame % 3 == 2) zoneEvents.push_back({ZoneEventType::kLeave, "left", id, 0, 0.4});
    const int ms = frame * 200;
    ObservedFrame f;
    f.camera = "hall";
    f.sequence = static_cast<std::uint64_t>(frame);
    f.id = static_cast<std::uint64_t>(frame) + 1;
    f.width = kWidth;
    f.height = kHeight;
    f.captureTime = at(ms);
    f.captureMonotonic = monotonicAt(ms);
    f.detections = &none;
    f.backend = "cpu";
    f.persons = &persons;
    f.zoneEvents = &zoneEvents;
    f.crossings = &crossings;
    publisher.onFrame(f, at(ms + 100));
  }
  const std::string text = log.text();
  setLogLevel(spdlog::level::info);
  return text;
}

TEST(EventLogVolumeTest, ABusyCameraWritesAFewLinesAMinuteAtInfo) {
  const std::string said = aBusyMinuteAt(spdlog::level::info);
  EXPECT_LE(testing::occurrences(said, "\n"), 5U) << said;
  // What a person reads: the camera's and the zone's presence began.
  EXPECT_NE(said.find("[cam=hall] person present ("), std::string::npos) << said;
  EXPECT_NE(said.find("[cam=hall] zone left person present ("), std::string::npos) << said;
  EXPECT_EQ(said.find(": track "), std::string::npos) << said;
}

TEST(EventLogVolumeTest, EachZoneEventAndCrossingIsADebugLine) {
  const std::string said = aBusyMinuteAt(spdlog::level::debug);
  EXPECT_EQ(testing::occurrences(said, "[cam=hall] zone left: track "), 200U);
  EXPECT_EQ(testing::occurrences(said, " enter ("), 100U) << said.substr(0, 2000);
  EXPECT_EQ(testing::occurrences(said, " leave ("), 100U) << said.substr(0, 2000);
  EXPECT_EQ(testing::occurrences(said, "[cam=hall] line door: track "), 100U);
  EXPECT_NE(said.find("[cam=hall] line door: track 1 crossed in (in), 1 so far\n"),
            std::string::npos)
      << said.substr(0, 2000);
  EXPECT_NE(said.find("[cam=hall] line door: track 100 crossed in (in), 100 so far\n"),
            std::string::npos);
}

}  // namespace
}  // namespace vigil
