#pragma once

#include <string>
#include <vector>

#include "daemon/settings/tracking_settings.h"
#include "daemon/settings/zones.h"

namespace vigil {

// What the publisher needs to know of one camera.
struct PublishedCamera {
  std::string name;
  PresenceSettings presence;
  std::vector<ZoneSpec> zones;
  std::vector<Polygon> masks;
  std::vector<LineSpec> lines;
  bool history = true;  // its events and their pictures are kept (EventRecorder)

  bool operator==(const PublishedCamera&) const = default;
};

}  // namespace vigil
