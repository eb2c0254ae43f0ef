#include "daemon/config.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "daemon/url_credentials.h"
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

std::string_view hwAccelName(HwAccel accel) { return accel == HwAccel::kVaapi ? "vaapi" : "none"; }

namespace {

bool validName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  }
  return true;
}

// Node names go into the MQTT client id "vigil-<node>", which stays within 64 characters.
constexpr std::size_t kMaxNodeName = 58;

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
  r.rejectUnknownKeys(
      node, path,
      {"model", "backend", "threads", "min_score", "nms", "classes", "onnxruntime", "vitisai"});
  d.model = r.getString(node, path, "model", "");
  if (!d.model.empty()) d.model = resolve(base, d.model).string();
  d.backend = r.getString(node, path, "backend", d.backend);
  if (d.backend != "cpu" && d.backend != "cpu-ort" && d.backend != "npu" && d.backend != "auto") {
    r.fail(node["backend"], "detector.backend",
           fmt::format("must be cpu, cpu-ort, npu or auto, got '{}'", d.backend));
  }
  d.threads = static_cast<int>(r.getInt(node, path, "threads", 0, 64, d.threads));
  d.minScore = static_cast<float>(r.getDouble(node, path, "min_score", 0.01, 1, 0.5));
  d.nms = static_cast<float>(r.getDouble(node, path, "nms", 0.05, 1, 0.45));
  if (node["classes"].IsDefined()) {
    d.classes = r.getStringList(node, path, "classes");
    if (d.classes.empty()) r.fail(node["classes"], "detector.classes", "must name at least one");
  }
  d.vitisai.onnxRuntime = r.getString(node, path, "onnxruntime", "");
  if (!d.vitisai.onnxRuntime.empty())
    d.vitisai.onnxRuntime = resolve(base, d.vitisai.onnxRuntime).string();
  if (YAML::Node v = node["vitisai"]; v.IsDefined() && !v.IsNull()) {
    const std::string vp = "detector.vitisai";
    r.expectMap(v, vp);
    r.rejectUnknownKeys(v, vp, {"target", "xclbin", "cache_dir"});
    d.vitisai.target = r.getString(v, vp, "target", "");
    if (d.vitisai.target != "" && d.vitisai.target != "X1" && d.vitisai.target != "X2") {
      r.fail(v["target"], vp + ".target",
             fmt::format("must be X1 (XDNA: Phoenix, Hawk Point) or X2 (XDNA2: Strix, Krackan), "
                         "got '{}'",
                         d.vitisai.target));
    }
    if (std::string x = r.getString(v, vp, "xclbin", ""); !x.empty()) {
      d.vitisai.xclbin = resolve(base, x);
    }
    if (std::string c = r.getString(v, vp, "cache_dir", ""); !c.empty()) {
      d.vitisai.cacheDir = resolve(base, c);
    }
  }
}

double readNumber(const YamlReader& r, const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) r.fail(node, path, "expected a number");
  const std::string text = node.Scalar();
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
    r.fail(node, path, fmt::format("expected a number, got '{}'", text));
  }
  return value;
}

// [[x, y], ...] in normalized coordinates, at least three points.
Polygon readPolygon(const YamlReader& r, const YAML::Node& node, const std::string& path) {
  r.expectSequence(node, path);
  if (node.size() < 3) {
    r.fail(node, path,
           fmt::format("a polygon needs at least 3 points [x, y], got {}", node.size()));
  }
  Polygon polygon;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string p = YamlReader::index(path, i);
    const YAML::Node point = node[i];
    if (!point.IsSequence() || point.size() != 2) {
      r.fail(point, p, "a point is [x, y] with x and y between 0 and 1");
    }
    Point xy{};
    for (std::size_t k = 0; k < 2; ++k) {
      double v = readNumber(r, point[k], YamlReader::index(p, k));
      if (v < 0 || v > 1) {
        r.fail(point[k], YamlReader::index(p, k),
               fmt::format("must be between 0 and 1 (a fraction of the frame), got {}", v));
      }
      (k == 0 ? xy.x : xy.y) = static_cast<float>(v);
    }
    polygon.push_back(xy);
  }
  return polygon;
}

std::chrono::milliseconds seconds(double value) {
  return std::chrono::milliseconds(std::llround(value * 1000));
}

void readPresence(const YamlReader& r, const YAML::Node& camera, const std::string& cameraPath,
                  PresenceSettings& p) {
  YAML::Node node = camera["presence"];
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = YamlReader::join(cameraPath, "presence");
  r.rejectUnknownKeys(node, path,
                      {"min_frames", "min_score", "min_area", "clear_after", "update_interval"});
  p.minFrames = static_cast<int>(r.getInt(node, path, "min_frames", 1, 100, 2));
  p.minScore = static_cast<float>(r.getDouble(node, path, "min_score", 0.01, 1, 0.5));
  p.minArea = static_cast<float>(r.getDouble(node, path, "min_area", 0, 1, 0));
  p.clearAfter = seconds(r.getDouble(node, path, "clear_after", 0.1, 3600, 5));
  p.updateInterval = seconds(r.getDouble(node, path, "update_interval", 0, 3600, 1));
}

void readZones(const YamlReader& r, const YAML::Node& camera, const std::string& cameraPath,
               CameraConfig& c) {
  if (YAML::Node zones = camera["zones"]; zones.IsDefined() && !zones.IsNull()) {
    const std::string path = YamlReader::join(cameraPath, "zones");
    r.expectSequence(zones, path);
    std::set<std::string> names;
    for (std::size_t i = 0; i < zones.size(); ++i) {
      const std::string zp = YamlReader::index(path, i);
      r.expectMap(zones[i], zp);
      r.rejectUnknownKeys(zones[i], zp, {"name", "polygon", "min_frames", "loiter_after"});
      ZoneSpec zone;
      zone.name = r.getString(zones[i], zp, "name");
      if (!validName(zone.name) || zone.name == "person" || zone.name == "camera") {
        r.fail(zones[i]["name"], YamlReader::join(zp, "name"),
               fmt::format("must be 1 to 64 characters of a-z, 0-9, _ and -, and not 'person' or "
                           "'camera' (they name the whole camera's topics), got '{}'",
                           zone.name));
      }
      if (!names.insert(zone.name).second) {
        r.fail(zones[i]["name"], YamlReader::join(zp, "name"),
               fmt::format("'{}' is already the name of another zone of this camera", zone.name));
      }
      zone.polygon =
          readPolygon(r, r.child(zones[i], zp, "polygon"), YamlReader::join(zp, "polygon"));
      zone.minFrames = static_cast<int>(r.getInt(zones[i], zp, "min_frames", 1, 100, 1));
      if (YAML::Node loiter = zones[i]["loiter_after"]; loiter.IsDefined() && !loiter.IsNull()) {
        zone.loiterAfter = seconds(r.getDouble(zones[i], zp, "loiter_after", 1, 86400, 60));
      }
      c.zones.push_back(std::move(zone));
    }
  }
  if (YAML::Node masks = camera["masks"]; masks.IsDefined() && !masks.IsNull()) {
    const std::string path = YamlReader::join(cameraPath, "masks");
    r.expectSequence(masks, path);
    for (std::size_t i = 0; i < masks.size(); ++i) {
      c.masks.push_back(readPolygon(r, masks[i], YamlReader::index(path, i)));
    }
  }
}

// [[x, y], ...] in pixels, at least two points, no segment of zero length.
std::vector<LinePoint> readLinePoints(const YamlReader& r, const YAML::Node& node,
                                      const std::string& path) {
  r.expectSequence(node, path);
  if (node.size() < 2) {
    r.fail(node, path,
           fmt::format("a line needs at least 2 points [x, y] (pixels), got {}", node.size()));
  }
  std::vector<LinePoint> points;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string p = YamlReader::index(path, i);
    const YAML::Node point = node[i];
    if (!point.IsSequence() || point.size() != 2) {
      r.fail(point, p, "a point is [x, y] in pixels of the frame");
    }
    const LinePoint xy{readNumber(r, point[0], YamlReader::index(p, 0)),
                       readNumber(r, point[1], YamlReader::index(p, 1))};
    if (!points.empty() && points.back() == xy) {
      r.fail(point, p,
             fmt::format("the same point as the one before it: the segment from [{}, {}] has "
                         "zero length",
                         xy.x, xy.y));
    }
    points.push_back(xy);
  }
  return points;
}

// A direction's name (`names: {in: enter, out: leave}`).
std::string readDirectionName(const YamlReader& r, const YAML::Node& names, const std::string& path,
                              const char* key) {
  std::string name = r.getString(names, path, key, key);
  if (!validName(name)) {
    r.fail(names[key], YamlReader::join(path, key),
           fmt::format("must be 1 to 64 characters of a-z, 0-9, _ and -, got '{}'", name));
  }
  return name;
}

LineSpec readLine(const YamlReader& r, const YAML::Node& node, const std::string& path) {
  r.expectMap(node, path);
  r.rejectUnknownKeys(node, path, {"name", "points", "names", "min_frames", "band"});
  LineSpec line;
  line.name = r.getString(node, path, "name");
  if (!validName(line.name) || line.name == "person" || line.name == "status") {
    r.fail(node["name"], YamlReader::join(path, "name"),
           fmt::format("must be 1 to 64 characters of a-z, 0-9, _ and -, and not 'person' or "
                       "'status' (they name the camera's own topics), got '{}'",
                       line.name));
  }
  line.points = readLinePoints(r, r.child(node, path, "points"), YamlReader::join(path, "points"));
  if (YAML::Node names = node["names"]; names.IsDefined() && !names.IsNull()) {
    const std::string np = YamlReader::join(path, "names");
    r.expectMap(names, np);
    r.rejectUnknownKeys(names, np, {"in", "out"});
    line.inName = readDirectionName(r, names, np, "in");
    line.outName = readDirectionName(r, names, np, "out");
    if (line.inName == line.outName) {
      r.fail(names, np, fmt::format("in and out are both called '{}'", line.inName));
    }
  }
  line.minFrames = static_cast<int>(r.getInt(node, path, "min_frames", 1, 100, 1));
  line.band = r.getDouble(node, path, "band", 0, 10000, kDefaultLineBandPixels);
  return line;
}

// After tracking: counting needs identities, so a line on an untracked camera is refused.
void readLines(const YamlReader& r, const YAML::Node& camera, const std::string& cameraPath,
               CameraConfig& c) {
  YAML::Node lines = camera["lines"];
  if (!lines.IsDefined() || lines.IsNull()) return;
  const std::string path = YamlReader::join(cameraPath, "lines");
  r.expectSequence(lines, path);
  if (lines.size() > 0 && !c.tracking.enabled) {
    r.fail(lines, path,
           "counting lines need tracking (the identities of persons), which is off for this "
           "camera (tracking.enabled: false)");
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string lp = YamlReader::index(path, i);
    LineSpec line = readLine(r, lines[i], lp);
    if (!names.insert(line.name).second) {
      r.fail(lines[i]["name"], YamlReader::join(lp, "name"),
             fmt::format("'{}' is already the name of another line of this camera", line.name));
    }
    c.lines.push_back(std::move(line));
  }
}

// After presence: still_detect_interval must leave the presence tracker a person frame within
// clear_after, or a person standing still would end their own event.
void readMotion(const YamlReader& r, const YAML::Node& camera, const std::string& cameraPath,
                CameraConfig& c) {
  YAML::Node node = camera["motion"];
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = YamlReader::join(cameraPath, "motion");
  r.expectMap(node, path);
  r.rejectUnknownKeys(node, path,
                      {"enabled", "threshold", "min_area", "idle_after", "idle_detect_interval",
                       "still_detect_interval", "idle_keyframes_only", "masks"});
  MotionSettings& m = c.motion;
  m.enabled = r.getBool(node, path, "enabled", true);
  m.threshold = static_cast<int>(r.getInt(node, path, "threshold", 1, 254, 25));
  m.minArea = static_cast<float>(r.getDouble(node, path, "min_area", 0.0001, 1, 0.005));
  m.idleAfter = seconds(r.getDouble(node, path, "idle_after", 0, 3600, 5));
  m.idleKeyframesOnly = r.getBool(node, path, "idle_keyframes_only", true);
  const double period = 1.0 / c.detectFps;
  auto interval = [&](const char* key, double min, double fallback) {
    double value = r.getDouble(node, path, key, 0, 3600, fallback);
    if (value != 0 && value < min) {
      r.fail(node[key].IsDefined() ? node[key] : node, YamlReader::join(path, key),
             fmt::format("must be 0 or at least one detect period ({:.3g} s at detect_fps {}), "
                         "got {}",
                         min, c.detectFps, value));
    }
    return value;
  };
  double idle = interval("idle_detect_interval", period, std::max(2.0, period));
  if (idle == 0) {
    r.fail(node["idle_detect_interval"], YamlReader::join(path, "idle_detect_interval"),
           fmt::format("must be at least one detect period ({:.3g} s), got 0", period));
  }
  m.idleDetectInterval = seconds(idle);
  double still = interval("still_detect_interval", period, 0);
  const double clearAfter = std::chrono::duration<double>(c.presence.clearAfter).count();
  if (still >= clearAfter) {
    r.fail(node["still_detect_interval"], YamlReader::join(path, "still_detect_interval"),
           fmt::format("must be below presence.clear_after ({} s), or a person standing still "
                       "would end their own event; got {}",
                       clearAfter, still));
  }
  m.stillDetectInterval = seconds(still);
  if (YAML::Node masks = node["masks"]; masks.IsDefined() && !masks.IsNull()) {
    const std::string mp = YamlReader::join(path, "masks");
    r.expectSequence(masks, mp);
    m.masks.emplace();
    for (std::size_t i = 0; i < masks.size(); ++i) {
      m.masks->push_back(readPolygon(r, masks[i], YamlReader::index(mp, i)));
    }
  }
}

// After motion: a person standing still is detected once per still_detect_interval, so a track
// must outlive that gap, or each sighting would start a new one.
void readTracking(const YamlReader& r, const YAML::Node& camera, const std::string& cameraPath,
                  CameraConfig& c) {
  TrackingSettings& t = c.tracking;
  const double still =
      c.motion.enabled ? std::chrono::duration<double>(c.motion.stillDetectInterval).count() : 0;
  const double defaultLost = std::max(1.0, 2 * still);
  t.lostAfter = seconds(defaultLost);
  YAML::Node node = camera["tracking"];
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = YamlReader::join(cameraPath, "tracking");
  r.expectMap(node, path);
  r.rejectUnknownKeys(node, path, {"enabled", "lost_after", "stationary"});
  t.enabled = r.getBool(node, path, "enabled", true);
  const double lost = r.getDouble(node, path, "lost_after", 0.1, 600, defaultLost);
  if (still > 0 && lost <= still) {
    r.fail(node["lost_after"], YamlReader::join(path, "lost_after"),
           fmt::format("must be above motion.still_detect_interval ({} s), or a person standing "
                       "still would get a new track id at every detection; got {}",
                       still, lost));
  }
  t.lostAfter = seconds(lost);
  if (YAML::Node st = node["stationary"]; st.IsDefined() && !st.IsNull()) {
    const std::string sp = YamlReader::join(path, "stationary");
    r.expectMap(st, sp);
    r.rejectUnknownKeys(st, sp, {"max_move", "after"});
    t.stationary.maxMoveFraction = r.getDouble(st, sp, "max_move", 0.01, 1, 0.1);
    t.stationary.afterSeconds = r.getDouble(st, sp, "after", 1, 3600, 10);
  }
}

// An MQTT topic level sequence of our own: no wildcards, no empty levels.
void checkTopicPrefix(const YamlReader& r, const YAML::Node& node, const std::string& path,
                      const std::string& value) {
  bool bad = value.empty() || value.front() == '/' || value.back() == '/' ||
             value.find("//") != std::string::npos ||
             value.find_first_of("+#") != std::string::npos ||
             value.find('\0') != std::string::npos;
  if (bad) {
    r.fail(node, path,
           fmt::format("must be topic levels like 'vigil' or 'home/vigil': not empty, no '+' or "
                       "'#', no leading, trailing or double '/', got '{}'",
                       value));
  }
}

std::string readSecretFile(const YamlReader& r, const YAML::Node& node, const std::string& path,
                           const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    r.fail(node, path, fmt::format("cannot read '{}': {}", file.string(), std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string secret = text.str();
  // One line, as `echo secret > file` writes it.
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.empty()) r.fail(node, path, fmt::format("'{}' is empty", file.string()));
  return secret;
}

// A secret that every local user can read is not one. Not refused: the daemon keeps working
// while the owner fixes it, but every start and reload says so.
void warnIfWorldReadable(const YamlReader& r, const YAML::Node& node, const std::string& path,
                         const std::filesystem::path& file, std::vector<std::string>& warnings) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0 || (info.st_mode & S_IROTH) == 0) return;
  warnings.push_back(r.describeLocation(
      node, path,
      fmt::format("'{}' is readable by every user (mode {:04o}); chmod 600 or 640 it",
                  file.string(), info.st_mode & 07777)));
}

void readMqtt(const YamlReader& r, const YAML::Node& root, const std::filesystem::path& base,
              MqttConfig& m, std::vector<std::string>& warnings) {
  YAML::Node node = root["mqtt"];
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = "mqtt";
  r.expectMap(node, path);
  r.rejectUnknownKeys(node, path,
                      {"url", "client_id", "username", "password_file", "ca_file", "cert_file",
                       "key_file", "topic_prefix", "qos", "keepalive", "buffer_messages",
                       "ha_discovery", "ha_prefix", "snapshots"});
  m.enabled = true;
  m.url = r.getString(node, path, "url", m.url);
  if (!startsWith(m.url, "mqtt://") && !startsWith(m.url, "mqtts://")) {
    r.fail(node["url"], "mqtt.url",
           fmt::format("must be mqtt://host:port or mqtts://host:port, got '{}'", m.url));
  }
  m.clientId = r.getString(node, path, "client_id", m.clientId);
  if (!validName(m.clientId)) {
    r.fail(node["client_id"], "mqtt.client_id",
           fmt::format("must be 1 to 64 characters of a-z, 0-9, _ and -, got '{}'", m.clientId));
  }
  m.username = r.getString(node, path, "username", "");
  m.passwordFile = r.getString(node, path, "password_file", "");
  if (!m.passwordFile.empty()) {
    m.passwordFile = resolve(base, m.passwordFile).string();
    m.password = readSecretFile(r, node["password_file"], "mqtt.password_file", m.passwordFile);
    warnIfWorldReadable(r, node["password_file"], "mqtt.password_file", m.passwordFile, warnings);
  } else if (const char* env = std::getenv(kMqttPasswordEnv); env != nullptr && *env != 0) {
    m.password = env;
  }
  if (!m.password.empty() && m.username.empty()) {
    r.fail(node, "mqtt.username", "a password is set but no username (MQTT needs both)");
  }
  const std::pair<const char*, std::string*> files[] = {
      {"ca_file", &m.caFile}, {"cert_file", &m.certFile}, {"key_file", &m.keyFile}};
  for (const auto& [key, value] : files) {
    *value = r.getString(node, path, key, "");
    if (value->empty()) continue;
    *value = resolve(base, *value).string();
    const std::string keyPath = YamlReader::join(path, key);
    if (!startsWith(m.url, "mqtts://")) {
      r.fail(node[key], keyPath, fmt::format("set, but mqtt.url '{}' is not mqtts://", m.url));
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*value, ec)) {
      r.fail(node[key], keyPath, fmt::format("no such file '{}'", *value));
    }
  }
  if (!m.keyFile.empty() && m.certFile.empty()) {
    r.fail(node["key_file"], "mqtt.key_file", "set without mqtt.cert_file");
  }
  if (!m.keyFile.empty())
    warnIfWorldReadable(r, node["key_file"], "mqtt.key_file", m.keyFile, warnings);
  m.topicPrefix = r.getString(node, path, "topic_prefix", m.topicPrefix);
  checkTopicPrefix(r, node["topic_prefix"], "mqtt.topic_prefix", m.topicPrefix);
  m.qos = static_cast<int>(r.getInt(node, path, "qos", 0, 2, 1));
  m.keepAlive = static_cast<int>(r.getInt(node, path, "keepalive", 5, 3600, 30));
  m.bufferMessages =
      static_cast<std::size_t>(r.getInt(node, path, "buffer_messages", 1, 1000000, 1000));
  m.haDiscovery = r.getBool(node, path, "ha_discovery", true);
  m.haPrefix = r.getString(node, path, "ha_prefix", m.haPrefix);
  checkTopicPrefix(r, node["ha_prefix"], "mqtt.ha_prefix", m.haPrefix);
  m.snapshots = r.getBool(node, path, "snapshots", false);
}

void readHttp(const YamlReader& r, const YAML::Node& root, const std::filesystem::path& base,
              HttpConfig& h, std::vector<std::string>& warnings) {
  YAML::Node node = root["http"];
  if (!node.IsDefined() || node.IsNull()) return;
  r.expectMap(node, "http");
  r.rejectUnknownKeys(node, "http", {"enabled", "listen", "web_config", "metrics_need_login"});
  h.enabled = r.getBool(node, "http", "enabled", true);
  h.listen = r.getString(node, "http", "listen", h.listen);
  // The server parses it fully at start; catch the obvious here so check-config does.
  auto colon = h.listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == h.listen.size() || colon == 0) {
    r.fail(node["listen"], "http.listen",
           fmt::format("must be host:port, e.g. 127.0.0.1:9842 or [::]:9842, got '{}'", h.listen));
  }
  h.metricsNeedLogin = r.getBool(node, "http", "metrics_need_login", false);
  const std::string webConfig = r.getString(node, "http", "web_config", "");
  if (!webConfig.empty()) {
    h.webConfigFile = resolve(base, webConfig).string();
    auto web = loadWebConfig(h.webConfigFile);
    if (!web) r.fail(node["web_config"], "http.web_config", web.error().message);
    warnings.insert(warnings.end(), web->warnings.begin(), web->warnings.end());
    h.web = std::make_shared<const WebConfig>(std::move(*web));
  }
  if (h.metricsNeedLogin && !h.hasLogins()) {
    r.fail(node["metrics_need_login"], "http.metrics_need_login",
           "needs logins: http.web_config with basic_auth_users");
  }
}

// `hwaccel` of a camera or of the capture section; `fallback` when absent.
HwAccel readHwAccel(const YamlReader& r, const YAML::Node& node, const std::string& path,
                    HwAccel fallback) {
  if (!node["hwaccel"].IsDefined()) return fallback;
  const std::string accel = r.getString(node, path, "hwaccel");
  if (accel == "none") return HwAccel::kNone;
  if (accel == "vaapi") return HwAccel::kVaapi;
  r.fail(node["hwaccel"], YamlReader::join(path, "hwaccel"),
         fmt::format("must be none or vaapi, got '{}'", accel));
}

void readCapture(const YamlReader& r, const YAML::Node& root, CaptureConfig& c) {
  YAML::Node node = root["capture"];
  if (!node.IsDefined() || node.IsNull()) return;
  r.expectMap(node, "capture");
  r.rejectUnknownKeys(node, "capture",
                      {"scaled_decode", "skip_loop_filter", "hwaccel", "vaapi_device"});
  c.scaledDecode = r.getBool(node, "capture", "scaled_decode", c.scaledDecode);
  c.skipLoopFilter = r.getBool(node, "capture", "skip_loop_filter", c.skipLoopFilter);
  c.hwDecode.accel = readHwAccel(r, node, "capture", c.hwDecode.accel);
  c.hwDecode.device = r.getString(node, "capture", "vaapi_device", c.hwDecode.device);
}

void readCalibrationSamples(const YamlReader& r, const YAML::Node& camera,
                            const std::string& cameraPath, const std::filesystem::path& base,
                            CameraConfig& c) {
  YAML::Node node = camera["calibration_samples"];
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = YamlReader::join(cameraPath, "calibration_samples");
  r.expectMap(node, path);
  r.rejectUnknownKeys(node, path, {"dir", "interval_s", "max_frames"});
  CalibrationSampleSettings& s = c.calibrationSamples;
  const std::string dir = r.getString(node, path, "dir");
  if (dir.empty()) r.fail(node["dir"], YamlReader::join(path, "dir"), "must not be empty");
  s.dir = resolve(base, dir);
  s.intervalS = r.getDouble(node, path, "interval_s", 1, 86400, 60);
  s.maxFrames = static_cast<int>(r.getInt(node, path, "max_frames", 1, 100000, 200));
}

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

// source: its kind by prefix, and the location the capture code opens.
void readCameraSource(const YamlReader& r, const YAML::Node& node, const std::string& path,
                      const std::filesystem::path& base, CameraConfig& c,
                      std::vector<std::string>& warnings) {
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
    checkFileSource(r, node["source"], sp, c.location, warnings);
  } else {
    r.fail(node["source"], sp,
           fmt::format("must be a V4L2 device (/dev/videoN, /dev/v4l/by-id/...), rtsp://, "
                       "http(s):// or file:PATH, got '{}'",
                       c.source));
  }
}

// password_file: a network source's password, put into its URL.
void readCameraPassword(const YamlReader& r, const YAML::Node& node, const std::string& path,
                        const std::filesystem::path& base, CameraConfig& c,
                        std::vector<std::string>& warnings) {
  const std::string passwordFile = r.getString(node, path, "password_file", "");
  if (passwordFile.empty()) return;
  const std::string pp = YamlReader::join(path, "password_file");
  if (c.kind != SourceKind::kRtsp && c.kind != SourceKind::kHttp) {
    r.fail(node["password_file"], pp, "only rtsp:// and http(s):// sources take a password");
  }
  c.passwordFile = resolve(base, passwordFile).string();
  const std::string password = readSecretFile(r, node["password_file"], pp, c.passwordFile);
  warnIfWorldReadable(r, node["password_file"], pp, c.passwordFile, warnings);
  c.location = withPassword(c.location, password);
}

PixelFormatChoice readPixelFormat(const YamlReader& r, const YAML::Node& node,
                                  const std::string& path) {
  std::string format = r.getString(node, path, "format", "auto");
  if (format == "auto") return PixelFormatChoice::kAuto;
  if (format == "mjpeg") return PixelFormatChoice::kMjpeg;
  if (format == "yuyv") return PixelFormatChoice::kYuyv;
  r.fail(node["format"], YamlReader::join(path, "format"),
         fmt::format("must be auto, mjpeg or yuyv, got '{}'", format));
}

// width, height, fps and detect_fps, which must not exceed a V4L2 device's fps (the others
// deliver at their own rate and ignore width, height and fps).
void readCameraRates(const YamlReader& r, const YAML::Node& node, const std::string& path,
                     CameraConfig& c) {
  c.width = static_cast<int>(r.getInt(node, path, "width", 16, 7680, 640));
  c.height = static_cast<int>(r.getInt(node, path, "height", 16, 4320, 480));
  c.fps = r.getDouble(node, path, "fps", 0.1, 120, 10);
  c.fpsSet = node["fps"].IsDefined();
  c.detectFps = r.getDouble(node, path, "detect_fps", 0.01, 120, 5);
  if (c.kind == SourceKind::kV4l2 && c.fpsSet && c.detectFps > c.fps) {
    r.fail(node["detect_fps"].IsDefined() ? node["detect_fps"] : node,
           YamlReader::join(path, "detect_fps"),
           fmt::format("must not exceed fps ({}), got {}", c.fps, c.detectFps));
  }
}

CameraConfig readCamera(const YamlReader& r, const YAML::Node& node, const std::string& path,
                        const std::filesystem::path& base, const CaptureConfig& capture,
                        std::vector<std::string>& warnings) {
  r.rejectUnknownKeys(node, path,
                      {"name", "source", "password_file", "format", "width", "height", "fps",
                       "detect_fps", "enabled", "loop", "zones", "masks", "presence", "motion",
                       "tracking", "lines", "calibration_samples", "hwaccel"});
  CameraConfig c;
  c.name = r.getString(node, path, "name");
  if (!validName(c.name)) {
    r.fail(node["name"], YamlReader::join(path, "name"),
           fmt::format("must be 1 to 64 characters of a-z, 0-9, _ and -, got '{}'", c.name));
  }
  readCameraSource(r, node, path, base, c, warnings);
  readCameraPassword(r, node, path, base, c, warnings);
  c.format = readPixelFormat(r, node, path);
  readCameraRates(r, node, path, c);
  c.enabled = r.getBool(node, path, "enabled", true);
  c.loop = r.getBool(node, path, "loop", false);
  if (c.loop && c.kind != SourceKind::kFile) {
    r.fail(node["loop"], YamlReader::join(path, "loop"), "only file: sources can loop");
  }
  readZones(r, node, path, c);
  readPresence(r, node, path, c.presence);
  readMotion(r, node, path, c);
  readTracking(r, node, path, c);
  readLines(r, node, path, c);
  readCalibrationSamples(r, node, path, base, c);
  c.hwDecode = capture.hwDecode;
  c.hwDecode.accel = readHwAccel(r, node, path, capture.hwDecode.accel);
  c.skipLoopFilter = capture.skipLoopFilter;
  return c;
}

// Runs `read`; its error (the first of that part) joins `errors` instead of stopping the
// file there, so one check-config run names a mistake in every part.
void collectError(std::vector<std::string>& errors, const std::function<void()>& read) {
  try {
    read();
  } catch (const YamlError& e) {
    errors.emplace_back(e.what());
  }
}

void readNode(const YamlReader& r, Config& config) {
  const YAML::Node& root = r.root();
  config.node = r.getString(root, "", "node", hostNodeName());
  if (!validName(config.node) || config.node.size() > kMaxNodeName) {
    r.fail(root["node"], "node",
           fmt::format("must be 1 to {} characters of a-z, 0-9, _ and -, got '{}'", kMaxNodeName,
                       config.node));
  }
  // Every box on one broker has its own client id and topics without a setting changed.
  config.mqtt.clientId = "vigil-" + config.node;
  config.mqtt.topicPrefix = "vigil/" + config.node;
}

void readCameras(const YamlReader& r, const std::filesystem::path& base, Config& config,
                 std::vector<std::string>& errors) {
  YAML::Node cameras = r.child(r.root(), "", "cameras");
  r.expectSequence(cameras, "cameras");
  std::set<std::string> names;
  for (std::size_t i = 0; i < cameras.size(); ++i) {
    collectError(errors, [&] {
      std::string path = YamlReader::index("cameras", i);
      CameraConfig c = readCamera(r, cameras[i], path, base, config.capture, config.warnings);
      if (!names.insert(c.name).second) {
        r.fail(cameras[i]["name"], YamlReader::join(path, "name"),
               fmt::format("'{}' is already the name of another camera", c.name));
      }
      config.cameras.push_back(std::move(c));
    });
  }
}

Config readConfig(const YamlReader& r, const std::filesystem::path& file) {
  const YAML::Node& root = r.root();
  r.rejectUnknownKeys(root, "",
                      {"version", "node", "detector", "mqtt", "http", "capture", "cameras"});
  Config config;
  config.file = file;
  config.version = static_cast<int>(r.getInt(root, "", "version", 1, 1));
  const std::filesystem::path base = std::filesystem::absolute(file).parent_path();
  std::vector<std::string> errors;
  collectError(errors, [&] { readNode(r, config); });
  collectError(errors, [&] { readDetector(r, root, base, config.detector); });
  collectError(errors, [&] { readMqtt(r, root, base, config.mqtt, config.warnings); });
  collectError(errors, [&] { readHttp(r, root, base, config.http, config.warnings); });
  collectError(errors, [&] { readCapture(r, root, config.capture); });
  collectError(errors, [&] { readCameras(r, base, config, errors); });
  if (errors.size() == 1) throw YamlError(errors.front());
  if (!errors.empty()) {
    throw YamlError(fmt::format("{} errors:\n{}", errors.size(), fmt::join(errors, "\n")));
  }
  return config;
}

}  // namespace

bool HttpConfig::listensOnLoopback() const {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  return host == "localhost" || host.starts_with("127.") || host == "::1";
}

std::string nodeNameOf(std::string_view hostName) {
  std::string name(hostName.substr(0, hostName.find('.')));  // the short name
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) c = '-';
  }
  if (name.size() > kMaxNodeName) name.resize(kMaxNodeName);
  return name.empty() ? "vigil" : name;
}

std::vector<std::string> zoneNames(const CameraConfig& camera) {
  std::vector<std::string> names;
  for (const ZoneSpec& zone : camera.zones) names.push_back(zone.name);
  return names;
}

std::string hostNodeName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "vigil";
  return nodeNameOf(host);
}

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
