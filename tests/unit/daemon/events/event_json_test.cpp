// The MQTT event payloads (schema 1), as Home Assistant automations and the README read them.
#include "daemon/events/event_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace vigil {
namespace {

using namespace std::chrono_literals;

const std::chrono::system_clock::time_point kAt{1'700'000'000s + 123ms};

TEST(EventJsonTest, TimesAreUtcWithMilliseconds) {
  EXPECT_EQ(isoUtc(kAt), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(isoUtcOfUnixSeconds(1'700'000'000.5), "2023-11-14T22:13:20.500Z");
}

TEST(EventJsonTest, ALineCrossingSaysItsDirectionByBothNamesItsCountAndItsNormalizedBox) {
  LineSpec line;
  line.name = "gate";
  line.inName = "arriving";
  line.outName = "leaving";
  LineCrossingEvent crossing;
  crossing.line = "gate";
  crossing.direction = CrossingDirection::kOut;
  crossing.trackId = 7;
  crossing.box = Box{64, 48, 32, 96};
  crossing.score = 0.75F;
  const auto j = nlohmann::json::parse(lineEventJson("yard", line, crossing, 3, kAt, 640, 480));
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["type"], "cross");
  EXPECT_EQ(j["camera"], "yard");
  EXPECT_EQ(j["line"], "gate");
  EXPECT_EQ(j["direction"], "out");
  EXPECT_EQ(j["direction_name"], "leaving");
  EXPECT_EQ(j["count"], 3);
  EXPECT_EQ(j["track_id"], 7);
  EXPECT_EQ(j["time"], "2023-11-14T22:13:20.123Z");
  EXPECT_NEAR(j["box"]["x"].get<double>(), 0.1, 1e-6);
  EXPECT_NEAR(j["box"]["h"].get<double>(), 0.2, 1e-6);
  EXPECT_NEAR(j["box"]["score"].get<double>(), 0.75, 1e-6);
}

}  // namespace
}  // namespace vigil
