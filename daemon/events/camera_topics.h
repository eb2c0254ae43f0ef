#pragma once

#include <string>
#include <vector>

#include "daemon/events/ha_discovery.h"
#include "daemon/events/published_camera.h"

namespace vigil {

// A camera as Home Assistant's discovery describes it: its zones (those that loiter apart), its
// lines with their directions' names, and a snapshot entity when snapshots are published.
DiscoveredCamera discoveredCamera(const PublishedCamera& camera, bool snapshots);

// Every retained topic the event publisher keeps for a camera under `prefix`: its and its zones'
// person and count states, its snapshot and status, its zones' loitering, its lines' counts. An
// empty retained payload on each clears a camera that goes.
std::vector<std::string> retainedTopics(const std::string& prefix, const PublishedCamera& camera);

}  // namespace vigil
