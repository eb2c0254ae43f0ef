#include "daemon/config.h"

#include <fmt/format.h>

#include <set>

#include "detector/yaml_reader.h"

namespace vigil {

std::string_view sourceKindName(SourceKind kind) {
  switch (kind) {
    case SourceKind::kV4l2:
      return "v4l2";
    case SourceKind::kRtsp:
      return "rtsp";
    case SourceKind::kHttp:
      return "http";
    case SourceKind::kFile:
      return "file";
  }
  return "unknown";
}

std::string_view pixelFormatName(PixelFormatChoice format) {
  switch (format) {
    case PixelFormatChoice::kAuto:
      return "auto";
    case PixelFormatChoice::kMjpeg:
      return "mjpeg";
    case PixelFormatChoice::kYuyv:
      return "yuyv";
  }
  return "unknown";
}

namespace {

bool validName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  }
  return true;
}

bool startsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::filesystem::path resolve(const std::filesystem::path& base, const std::string& path) {
  std::filesystem::path p(path);
  return p.is_absolute() ? p : (base / p).lexically_normal();
}

void readDetector(const YamlReader& r, const YAML::Node& root, const std::filesystem::path& base,
                  DetectorConfig& d) {
  YAML::Node node = root["detector"];
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = "detector";
  r.rejectUnknownKeys(node, path, {"model", "backend", "threads", "min_score", "nms", "classes"});
  d.model = r.getString(node, path, "model", "");
  if (!d.model.empty()) d.model = resolve(base, d.model).string();
  d.backend = r.getString(node, path, "backend", "cpu");
  if (d.backend != "cpu" && d.backend != "npu" && d.backend != "auto") {
    r.fail(node["backend"], "detector.backend",
           fmt::format("must be cpu, npu or auto, got '{}'", d.backend));
  }
  d.threads = static_cast<int>(r.getInt(node, path, "threads", 0, 64, 0));
  d.minScore = static_cast<float>(r.getDouble(node, path, "min_score", 0.01, 1, 0.5));
  d.nms = static_cast<float>(r.getDouble(node, path, "nms", 0.05, 1, 0.45));
  if (node["classes"].IsDefined()) {
    d.classes = r.getStringList(node, path, "classes");
    if (d.classes.empty()) r.fail(node["classes"], "detector.classes", "must name at least one");
  }
}

CameraConfig readCamera(const YamlReader& r, const YAML::Node& node, const std::string& path,
                        const std::filesystem::path& base) {
  r.rejectUnknownKeys(
      node, path,
      {"name", "source", "format", "width", "height", "fps", "detect_fps", "enabled", "loop"});
  CameraConfig c;
  c.name = r.getString(node, path, "name");
  if (!validName(c.name)) {
    r.fail(node["name"], YamlReader::join(path, "name"),
           fmt::format("must be 1 to 64 characters of a-z, 0-9, _ and -, got '{}'", c.name));
  }
  c.source = r.getString(node, path, "source");
  const std::string sp = YamlReader::join(path, "source");
  if (startsWith(c.source, "/dev/")) {
    c.kind = SourceKind::kV4l2;
    c.location = c.source;
  } else if (startsWith(c.source, "rtsp://") || startsWith(c.source, "rtsps://")) {
    c.kind = SourceKind::kRtsp;
    c.location = c.source;
  } else if (startsWith(c.source, "http://") || startsWith(c.source, "https://")) {
    c.kind = SourceKind::kHttp;
    c.location = c.source;
  } else if (startsWith(c.source, "file:")) {
    c.kind = SourceKind::kFile;
    std::string file = c.source.substr(5);
    if (file.empty()) r.fail(node["source"], sp, "file: needs a path, e.g. file:/srv/clip.mp4");
    c.location = resolve(base, file).string();
  } else {
    r.fail(node["source"], sp,
           fmt::format("must be a V4L2 device (/dev/videoN, /dev/v4l/by-id/...), rtsp://, "
                       "http(s):// or file:PATH, got '{}'",
                       c.source));
  }
  std::string format = r.getString(node, path, "format", "auto");
  if (format == "auto") {
    c.format = PixelFormatChoice::kAuto;
  } else if (format == "mjpeg") {
    c.format = PixelFormatChoice::kMjpeg;
  } else if (format == "yuyv") {
    c.format = PixelFormatChoice::kYuyv;
  } else {
    r.fail(node["format"], YamlReader::join(path, "format"),
           fmt::format("must be auto, mjpeg or yuyv, got '{}'", format));
  }
  c.width = static_cast<int>(r.getInt(node, path, "width", 16, 7680, 640));
  c.height = static_cast<int>(r.getInt(node, path, "height", 16, 4320, 480));
  c.fps = r.getDouble(node, path, "fps", 0.1, 120, 10);
  c.detectFps = r.getDouble(node, path, "detect_fps", 0.01, 120, 5);
  if (c.detectFps > c.fps) {
    r.fail(node["detect_fps"].IsDefined() ? node["detect_fps"] : node,
           YamlReader::join(path, "detect_fps"),
           fmt::format("must not exceed fps ({}), got {}", c.fps, c.detectFps));
  }
  c.enabled = r.getBool(node, path, "enabled", true);
  c.loop = r.getBool(node, path, "loop", false);
  if (c.loop && c.kind != SourceKind::kFile) {
    r.fail(node["loop"], YamlReader::join(path, "loop"), "only file: sources can loop");
  }
  return c;
}

Config readConfig(const YamlReader& r, const std::filesystem::path& file) {
  const YAML::Node& root = r.root();
  r.rejectUnknownKeys(root, "", {"version", "detector", "cameras"});
  Config config;
  config.file = file;
  config.version = static_cast<int>(r.getInt(root, "", "version", 1, 1));
  const std::filesystem::path base = std::filesystem::absolute(file).parent_path();
  readDetector(r, root, base, config.detector);
  YAML::Node cameras = r.child(root, "", "cameras");
  r.expectSequence(cameras, "cameras");
  std::set<std::string> names;
  for (std::size_t i = 0; i < cameras.size(); ++i) {
    std::string path = YamlReader::index("cameras", i);
    CameraConfig c = readCamera(r, cameras[i], path, base);
    if (!names.insert(c.name).second) {
      r.fail(cameras[i]["name"], YamlReader::join(path, "name"),
             fmt::format("'{}' is already the name of another camera", c.name));
    }
    config.cameras.push_back(std::move(c));
  }
  return config;
}

}  // namespace

Expected<Config> parseConfig(const std::string& text, const std::filesystem::path& file) {
  try {
    YamlReader r = YamlReader::fromString(text, file.string());
    return readConfig(r, file);
  } catch (const YamlError& e) {
    return makeError(ErrorCode::kInvalidData, "{}", e.what());
  }
}

Expected<Config> loadConfig(const std::filesystem::path& file) {
  try {
    YamlReader r = YamlReader::fromFile(file.string());
    return readConfig(r, file);
  } catch (const YamlError& e) {
    return makeError(std::filesystem::exists(file) ? ErrorCode::kInvalidData : ErrorCode::kNotFound,
                     "{}", e.what());
  }
}

}  // namespace vigil
