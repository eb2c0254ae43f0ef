#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "daemon/settings/settings.h"
#include "foundation/yaml_reader.h"

namespace vigil::yaml_config {

// One entry of `cameras:` (at `path`, e.g. "cameras[1]"): its source, rates, zones, masks,
// lines, presence, motion, tracking and calibration samples, checked key by key. `capture`: the
// top-level capture section, whose hwaccel and loop filter are every camera's defaults.
CameraConfig readCamera(const YamlReader& r, const YAML::Node& node, const std::string& path,
                        const std::filesystem::path& base, const CaptureConfig& capture,
                        std::vector<std::string>& warnings);

}  // namespace vigil::yaml_config
