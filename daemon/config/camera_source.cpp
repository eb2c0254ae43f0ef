#include "daemon/config/camera_source.h"

#include <fmt/format.h>

#include "daemon/base/url_credentials.h"
#include "daemon/config/section_reading.h"

namespace vigil::yaml_config {

namespace {

struct SourceEntry {
  std::string source;
  SourceKind kind = SourceKind::kV4l2;
  std::string location;
};

// The daemon retries a missing file like a camera that is not plugged in, but the user
// deserves to know now: a warning. Anything but a regular file is an error.
void checkFileSource(const YamlReader& r, const YAML::Node& source, const std::string& sp,
                     const std::string& location, std::vector<std::string>& warnings) {
  std::error_code ec;
  const auto status = std::filesystem::status(location, ec);
  if (!std::filesystem::exists(status)) {
    warnings.push_back(r.describeLocation(
        source, sp,
        fmt::format("'{}' does not exist (yet); the camera retries until it does", location)));
  } else if (!std::filesystem::is_regular_file(status)) {
    r.fail(source, sp,
           fmt::format("'{}' is not a regular file (a FIFO, device or directory): file: sources "
                       "are video files; a V4L2 device is /dev/videoN without file:",
                       location));
  }
}

// `key` (source or picture_source): its kind by prefix, and the location the capture code opens.
SourceEntry readSource(const YamlReader& r, const YAML::Node& node, const std::string& path,
                       const char* key, const std::filesystem::path& base,
                       std::vector<std::string>& warnings) {
  SourceEntry s;
  s.source = r.getString(node, path, key);
  const std::string sp = YamlReader::join(path, key);
  s.location = s.source;
  if (startsWith(s.source, "/dev/")) {
    s.kind = SourceKind::kV4l2;
  } else if (startsWith(s.source, "rtsp://") || startsWith(s.source, "rtsps://")) {
    s.kind = SourceKind::kRtsp;
  } else if (startsWith(s.source, "http://") || startsWith(s.source, "https://")) {
    s.kind = SourceKind::kHttp;
  } else if (startsWith(s.source, "file:")) {
    s.kind = SourceKind::kFile;
    std::string file = s.source.substr(5);
    if (file.empty()) r.fail(node[key], sp, "file: needs a path, e.g. file:/srv/clip.mp4");
    s.location = resolve(base, file).string();
    checkFileSource(r, node[key], sp, s.location, warnings);
  } else {
    r.fail(node[key], sp,
           fmt::format("must be a V4L2 device (/dev/videoN, /dev/v4l/by-id/...), rtsp://, "
                       "http(s):// or file:PATH, got '{}'",
                       s.source));
  }
  return s;
}

bool takesPassword(SourceKind kind) {
  return kind == SourceKind::kRtsp || kind == SourceKind::kHttp;
}

// password_file: the password of the camera's network sources, put into their URLs.
void readCameraPassword(const YamlReader& r, const YAML::Node& node, const std::string& path,
                        const std::filesystem::path& base, CameraConfig& c,
                        std::vector<std::string>& warnings) {
  const std::string passwordFile = r.getString(node, path, "password_file", "");
  if (passwordFile.empty()) return;
  const std::string pp = YamlReader::join(path, "password_file");
  const bool picture = c.picture.enabled() && takesPassword(c.picture.kind);
  if (!takesPassword(c.kind) && !picture) {
    r.fail(node["password_file"], pp, "only rtsp:// and http(s):// sources take a password");
  }
  c.passwordFile = resolve(base, passwordFile).string();
  const std::string password = readSecretFile(r, node["password_file"], pp, c.passwordFile);
  warnIfWorldReadable(r, node["password_file"], pp, c.passwordFile, warnings);
  if (takesPassword(c.kind)) c.location = withPassword(c.location, password);
  if (picture) c.picture.location = withPassword(c.picture.location, password);
}

// picture_source, picture_width and picture_height.
void readPictureSource(const YamlReader& r, const YAML::Node& node, const std::string& path,
                       const std::filesystem::path& base, CameraConfig& c,
                       std::vector<std::string>& warnings) {
  const bool sized = node["picture_width"].IsDefined() || node["picture_height"].IsDefined();
  if (!node["picture_source"].IsDefined()) {
    if (sized) {
      r.fail(node["picture_width"].IsDefined() ? node["picture_width"] : node["picture_height"],
             YamlReader::join(path, "picture_width"),
             "picture_width and picture_height size a V4L2 picture_source; there is none");
    }
    return;
  }
  SourceEntry s = readSource(r, node, path, "picture_source", base, warnings);
  const std::string pp = YamlReader::join(path, "picture_source");
  if (s.source == c.source) {
    r.fail(node["picture_source"], pp,
           "is the camera's source itself: leave picture_source out and the pictures come from "
           "the detected frames");
  }
  if (sized && s.kind != SourceKind::kV4l2) {
    r.fail(node["picture_width"].IsDefined() ? node["picture_width"] : node["picture_height"],
           YamlReader::join(path, "picture_width"),
           "only a V4L2 picture_source is asked for a size; network streams and files deliver "
           "their own");
  }
  c.picture.source = std::move(s.source);
  c.picture.kind = s.kind;
  c.picture.location = std::move(s.location);
  c.picture.width = static_cast<int>(r.getInt(node, path, "picture_width", 16, 7680, 1920));
  c.picture.height = static_cast<int>(r.getInt(node, path, "picture_height", 16, 4320, 1080));
}

}  // namespace

void readCameraSources(const YamlReader& r, const YAML::Node& node, const std::string& path,
                       const std::filesystem::path& base, CameraConfig& c,
                       std::vector<std::string>& warnings) {
  SourceEntry s = readSource(r, node, path, "source", base, warnings);
  c.source = std::move(s.source);
  c.kind = s.kind;
  c.location = std::move(s.location);
  readPictureSource(r, node, path, base, c, warnings);
  readCameraPassword(r, node, path, base, c, warnings);
}

void checkPictureAspect(const YamlReader& r, const YAML::Node& node, const std::string& path,
                        const CameraConfig& c) {
  if (!c.picture.enabled() || c.kind != SourceKind::kV4l2 || c.picture.kind != SourceKind::kV4l2) {
    return;
  }
  if (sameAspectRatio(c.width, c.height, c.picture.width, c.picture.height)) return;
  r.fail(node["picture_source"], YamlReader::join(path, "picture_source"),
         fmt::format("its pictures ({}x{}, picture_width x picture_height) and the detect "
                     "stream's ({}x{}, width x height) differ in aspect ratio: boxes found on "
                     "one could not be drawn on the other; give both streams the same shape",
                     c.picture.width, c.picture.height, c.width, c.height));
}

}  // namespace vigil::yaml_config
