#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "daemon/settings/settings.h"
#include "foundation/yaml_reader.h"

namespace vigil::yaml_config {

// A camera entry's `source` (what the detector sees), its optional `picture_source` (the full-size
// stream people see) with `picture_width`/`picture_height`, and `password_file` (the password of
// whichever of them are rtsp:// or http(s)://): their kinds by prefix and the locations the
// capture code opens.
void readCameraSources(const YamlReader& r, const YAML::Node& node, const std::string& path,
                       const std::filesystem::path& base, CameraConfig& c,
                       std::vector<std::string>& warnings);

// After width and height are read: a picture stream whose size is known here (a V4L2 device asked
// for picture_width x picture_height, beside one asked for width x height) must have the detect
// stream's aspect ratio, or boxes could not be mapped onto it. Other pairs are checked by the
// daemon once both streams said their sizes.
void checkPictureAspect(const YamlReader& r, const YAML::Node& node, const std::string& path,
                        const CameraConfig& c);

}  // namespace vigil::yaml_config
