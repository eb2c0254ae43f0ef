#include "daemon/events/camera_topics.h"

namespace vigil {

DiscoveredCamera discoveredCamera(const PublishedCamera& camera, bool snapshots) {
  DiscoveredCamera d{camera.name, {}, snapshots, {}, {}};
  for (const ZoneSpec& zone : camera.zones) {
    d.zones.push_back(zone.name);
    if (zone.loiterAfter) d.loiterZones.push_back(zone.name);
  }
  for (const LineSpec& line : camera.lines) {
    d.lines.push_back({line.name, line.inName, line.outName});
  }
  return d;
}

std::vector<std::string> retainedTopics(const std::string& prefix, const PublishedCamera& camera) {
  std::vector<std::string> topics{
      personTopic(prefix, camera.name, ""), countTopic(prefix, camera.name, ""),
      snapshotTopic(prefix, camera.name), cameraStatusTopic(prefix, camera.name)};
  for (const ZoneSpec& zone : camera.zones) {
    topics.push_back(personTopic(prefix, camera.name, zone.name));
    topics.push_back(countTopic(prefix, camera.name, zone.name));
    topics.push_back(loiteringTopic(prefix, camera.name, zone.name));
  }
  for (const LineSpec& line : camera.lines) {
    for (const char* direction : {"in", "out"}) {
      topics.push_back(lineCountTopic(prefix, camera.name, line.name, direction));
    }
  }
  return topics;
}

}  // namespace vigil
