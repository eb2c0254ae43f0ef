#include "daemon/config/camera_section.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "daemon/config/camera_source.h"
#include "daemon/config/section_reading.h"

namespace vigil::yaml_config {

namespace {

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

void readPresence(const YamlReader& r, const YAML::Node& camera, const std::string& cameraPath,
                  PresenceSettings& p) {
  YAML::Node node = camera["presence"];
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = YamlReader::join(cameraPath, "presence");
  r.rejectUnknownKeys(
      node, path,
      {"min_frames", "min_score", "confirm_score", "min_area", "clear_after", "update_interval"});
  p.minFrames = static_cast<int>(r.getInt(node, path, "min_frames", 1, 100, 2));
  p.minScore = static_cast<float>(r.getDouble(node, path, "min_score", 0.01, 1, 0.5));
  p.confirmScore = static_cast<float>(r.getDouble(node, path, "confirm_score", 0, 1, 0));
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

// "[[0.5, 0], [0.5, 1]]": points as a user writes them.
std::string pointsText(const std::vector<LinePoint>& points, double xScale = 1, double yScale = 1) {
  std::string out;
  for (const LinePoint& p : points) {
    out += fmt::format("{}[{:.4g}, {:.4g}]", out.empty() ? "" : ", ", p.x * xScale, p.y * yScale);
  }
  return "[" + out + "]";
}

// A line given in pixels (a coordinate above 1; earlier versions took pixels): refused
// with the same line in fractions, exactly when the frame's size is known from the file (a
// V4L2 camera's width and height), else with the rule and an example at 640x480.
std::string pixelLineMessage(const std::vector<LinePoint>& points, const CameraConfig& c) {
  const bool sized = c.kind == SourceKind::kV4l2;
  const int width = sized ? c.width : 640;
  const int height = sized ? c.height : 480;
  const std::string converted = pointsText(points, 1.0 / width, 1.0 / height);
  if (sized) {
    return fmt::format(
        "points are fractions of the frame (0 to 1, as zones and masks), not pixels: {} on this "
        "camera's {}x{} frames is {}",
        pointsText(points), width, height, converted);
  }
  return fmt::format(
      "points are fractions of the frame (0 to 1, as zones and masks), not pixels: divide each x "
      "by the frame's width and each y by its height (the running daemon's /api/status gives "
      "them as frame_size); on 640x480 frames {} would be {}",
      pointsText(points), converted);
}

// [[x, y], ...] in fractions of the frame, at least two points, no segment of zero length.
std::vector<LinePoint> readLinePoints(const YamlReader& r, const YAML::Node& node,
                                      const std::string& path, const CameraConfig& c) {
  r.expectSequence(node, path);
  if (node.size() < 2) {
    r.fail(node, path,
           fmt::format("a line needs at least 2 points [x, y] (fractions of the frame), got {}",
                       node.size()));
  }
  std::vector<LinePoint> points;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string p = YamlReader::index(path, i);
    const YAML::Node point = node[i];
    if (!point.IsSequence() || point.size() != 2) {
      r.fail(point, p, "a point is [x, y] with x and y between 0 and 1 (fractions of the frame)");
    }
    const LinePoint xy{readNumber(r, point[0], YamlReader::index(p, 0)),
                       readNumber(r, point[1], YamlReader::index(p, 1))};
    for (std::size_t k = 0; k < 2; ++k) {
      const double v = k == 0 ? xy.x : xy.y;
      if (v < 0) {
        r.fail(point[k], YamlReader::index(p, k),
               fmt::format("must be between 0 and 1 (a fraction of the frame), got {}", v));
      }
    }
    if (!points.empty() && points.back() == xy) {
      r.fail(point, p,
             fmt::format("the same point as the one before it: the segment from [{}, {}] has "
                         "zero length",
                         xy.x, xy.y));
    }
    points.push_back(xy);
  }
  if (std::any_of(points.begin(), points.end(),
                  [](const LinePoint& xy) { return xy.x > 1 || xy.y > 1; })) {
    r.fail(node, path, pixelLineMessage(points, c));
  }
  return points;
}

// A direction's name (`names: {in: enter, out: leave}`).
std::string readDirectionName(const YamlReader& r, const YAML::Node& names, const std::string& path,
                              const char* key) {
  std::string name = r.getString(names, path, key, key);
  checkName(r, names[key], YamlReader::join(path, key), name);
  return name;
}

LineSpec readLine(const YamlReader& r, const YAML::Node& node, const std::string& path,
                  const CameraConfig& c) {
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
  line.points =
      readLinePoints(r, r.child(node, path, "points"), YamlReader::join(path, "points"), c);
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
    LineSpec line = readLine(r, lines[i], lp, c);
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
  // No section reads as an empty one: gating on, at the built-in defaults
  // (bench/gating-default.md: no person event lost or late on the clips and their darker,
  // noisier and low-bitrate variants).
  const YAML::Node given = camera["motion"];
  const YAML::Node node =
      given.IsDefined() && !given.IsNull() ? given : YAML::Node(YAML::NodeType::Map);
  MotionSettings& m = c.motion;
  const double period = 1.0 / c.detectFps;
  const std::string path = YamlReader::join(cameraPath, "motion");
  r.expectMap(node, path);
  r.rejectUnknownKeys(node, path,
                      {"enabled", "threshold", "min_area", "idle_after", "idle_detect_interval",
                       "still_detect_interval", "idle_keyframes_only", "masks"});
  m.enabled = r.getBool(node, path, "enabled", true);
  m.threshold = static_cast<int>(r.getInt(node, path, "threshold", 1, 254, 25));
  m.minArea = static_cast<float>(r.getDouble(node, path, "min_area", 0.0001, 1, 0.005));
  m.idleAfter = seconds(r.getDouble(node, path, "idle_after", 0, 3600, 5));
  m.idleKeyframesOnly = r.getBool(node, path, "idle_keyframes_only", false);
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

void readRegions(const YamlReader& r, const YAML::Node& camera, const std::string& cameraPath,
                 RegionsConfig& regions) {
  const YAML::Node node = camera["regions"];
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = YamlReader::join(cameraPath, "regions");
  r.expectMap(node, path);
  r.rejectUnknownKeys(node, path, {"mode", "whole_every", "max_regions"});
  const std::string mode = r.getString(node, path, "mode", "auto");
  if (auto named = regionsModeNamed(mode)) {
    regions.mode = *named;
  } else {
    r.fail(node["mode"], YamlReader::join(path, "mode"),
           fmt::format("must be auto, on or off, got '{}'", mode));
  }
  regions.wholeEvery = r.getDouble(node, path, "whole_every", 0, 3600, 1.0);
  regions.maxRegions = static_cast<int>(r.getInt(node, path, "max_regions", 1, 16, 3));
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
// deliver at their own rate and ignore width, height and fps); each one's error collected. False
// when one is wrong: what is checked against them (the picture's shape, the detect period)
// would be checked against a default.
bool readCameraRates(const YamlReader& r, const YAML::Node& node, const std::string& path,
                     CameraConfig& c) {
  const bool width =
      r.collect([&] { c.width = static_cast<int>(r.getInt(node, path, "width", 16, 7680, 640)); });
  const bool height = r.collect(
      [&] { c.height = static_cast<int>(r.getInt(node, path, "height", 16, 4320, 480)); });
  const bool fps = r.collect([&] { c.fps = r.getDouble(node, path, "fps", 0.1, 120, 10); });
  c.fpsSet = node["fps"].IsDefined();
  const bool detectFps =
      r.collect([&] { c.detectFps = r.getDouble(node, path, "detect_fps", 0.01, 120, 5); });
  if (fps && detectFps && c.kind == SourceKind::kV4l2 && c.fpsSet && c.detectFps > c.fps) {
    r.report(node["detect_fps"].IsDefined() ? node["detect_fps"] : node,
             YamlReader::join(path, "detect_fps"),
             fmt::format("must not exceed fps ({}), got {}", c.fps, c.detectFps));
  }
  return width && height && fps && detectFps;
}

// What a camera does with its frames once it has them: each part's error collected, and the
// parts that are checked against another (motion against the rates and presence, tracking
// against motion, lines against tracking) read only when that one was right.
void readCameraParts(const YamlReader& r, const YAML::Node& node, const std::string& path,
                     const std::filesystem::path& base, bool rated, CameraConfig& c) {
  r.collect([&] { readZones(r, node, path, c); });
  const bool presence = r.collect([&] { readPresence(r, node, path, c.presence); });
  const bool motion = rated && presence && r.collect([&] { readMotion(r, node, path, c); });
  r.collect([&] { readRegions(r, node, path, c.regions); });
  const bool tracking = motion && r.collect([&] { readTracking(r, node, path, c); });
  if (tracking) r.collect([&] { readLines(r, node, path, c); });
  r.collect([&] { readCalibrationSamples(r, node, path, base, c); });
}

}  // namespace

// The source comes first and is not collected: what a camera may say next (loop, a V4L2
// device's rates, lines in pixels) depends on its kind, so a wrong source stops the camera.
CameraConfig readCamera(const YamlReader& r, const YAML::Node& node, const std::string& path,
                        const std::filesystem::path& base, const CaptureConfig& capture,
                        std::vector<std::string>& warnings) {
  r.rejectUnknownKeys(node, path, {"name",          "source",         "picture_source",
                                   "picture_width", "picture_height", "password_file",
                                   "format",        "width",          "height",
                                   "fps",           "detect_fps",     "denoise",
                                   "enabled",       "loop",           "zones",
                                   "masks",         "presence",       "motion",
                                   "tracking",      "lines",          "calibration_samples",
                                   "hwaccel",       "regions",        "history"});
  CameraConfig c;
  r.collect([&] {
    c.name = r.getString(node, path, "name");
    checkName(r, node["name"], YamlReader::join(path, "name"), c.name);
  });
  readCameraSources(r, node, path, base, c, warnings);
  r.collect([&] { c.format = readPixelFormat(r, node, path); });
  const bool rated = readCameraRates(r, node, path, c);
  r.collect([&] { c.denoise = r.getBool(node, path, "denoise", false); });
  if (rated) r.collect([&] { checkPictureAspect(r, node, path, c); });
  r.collect([&] { c.enabled = r.getBool(node, path, "enabled", true); });
  r.collect([&] { c.history = r.getBool(node, path, "history", true); });
  r.collect([&] {
    c.loop = r.getBool(node, path, "loop", false);
    if (c.loop && c.kind != SourceKind::kFile) {
      r.fail(node["loop"], YamlReader::join(path, "loop"), "only file: sources can loop");
    }
  });
  readCameraParts(r, node, path, base, rated, c);
  c.hwDecode = capture.hwDecode;
  r.collect([&] { c.hwDecode.accel = readHwAccel(r, node, path, capture.hwDecode.accel); });
  c.skipLoopFilter = capture.skipLoopFilter;
  return c;
}

}  // namespace vigil::yaml_config
