// A camera as Home Assistant's discovery describes it and the retained topics the publisher keeps
// for it (camera_topics), on their own.
#include "daemon/events/camera_topics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil {
namespace {

using namespace std::chrono_literals;

// "gate" with a porch that says loitering and a path that does not, and a line "entrance" whose
// directions are called "arrive" and "leave".
PublishedCamera gateCamera() {
  PublishedCamera camera;
  camera.name = "gate";
  camera.zones = {ZoneSpec{"porch", {{0, 0}, {0.5F, 0}, {0.5F, 1}}, 1, 30s},
                  ZoneSpec{"path", {{0.5F, 0}, {1, 0}, {1, 1}}}};
  LineSpec line;
  line.name = "entrance";
  line.points = {{0.5, 0}, {0.5, 1}};
  line.inName = "arrive";
  line.outName = "leave";
  camera.lines = {line};
  return camera;
}

TEST(CameraTopicsTest, TheDiscoveredCameraHasItsZonesItsLoiterZonesAndItsLinesNames) {
  const DiscoveredCamera d = discoveredCamera(gateCamera(), true);
  EXPECT_EQ(d.name, "gate");
  EXPECT_EQ(d.zones, (std::vector<std::string>{"porch", "path"}));
  EXPECT_EQ(d.loiterZones, std::vector<std::string>{"porch"}) << "only a zone with loiter_after";
  ASSERT_EQ(d.lines.size(), 1U);
  EXPECT_EQ(d.lines[0].name, "entrance");
  EXPECT_EQ(d.lines[0].inName, "arrive");
  EXPECT_EQ(d.lines[0].outName, "leave");
  EXPECT_TRUE(d.snapshot);
  EXPECT_FALSE(discoveredCamera(gateCamera(), false).snapshot) << "snapshots off: no image";
}

TEST(CameraTopicsTest, ACameraWithoutZonesOrLinesIsTheCameraAlone) {
  PublishedCamera plain;
  plain.name = "yard";
  const DiscoveredCamera d = discoveredCamera(plain, false);
  EXPECT_EQ(d.name, "yard");
  EXPECT_TRUE(d.zones.empty());
  EXPECT_TRUE(d.loiterZones.empty());
  EXPECT_TRUE(d.lines.empty());
  EXPECT_EQ(retainedTopics("vigil", plain),
            (std::vector<std::string>{"vigil/yard/person", "vigil/yard/person/count",
                                      "vigil/yard/person/snapshot", "vigil/yard/status"}));
}

// Every retained topic, so that a camera that goes is cleared everywhere: its zones' loitering
// whether or not they loiter (a zone's loiter_after may have been removed by the reload).
TEST(CameraTopicsTest, TheRetainedTopicsAreTheCamerasItsZonesAndItsLinesDirections) {
  EXPECT_EQ(retainedTopics("home/vigil", gateCamera()), (std::vector<std::string>{
                                                            "home/vigil/gate/person",
                                                            "home/vigil/gate/person/count",
                                                            "home/vigil/gate/person/snapshot",
                                                            "home/vigil/gate/status",
                                                            "home/vigil/gate/porch/person",
                                                            "home/vigil/gate/porch/person/count",
                                                            "home/vigil/gate/porch/loitering",
                                                            "home/vigil/gate/path/person",
                                                            "home/vigil/gate/path/person/count",
                                                            "home/vigil/gate/path/loitering",
                                                            "home/vigil/gate/entrance/in",
                                                            "home/vigil/gate/entrance/out",
                                                        }));
}

}  // namespace
}  // namespace vigil
