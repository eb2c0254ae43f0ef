#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "daemon/base/figures.h"
#include "daemon/base/heartbeat.h"
#include "daemon/events/camera_view.h"
#include "daemon/events/person_tracks.h"
#include "daemon/settings/settings.h"
#include "detector/regions.h"

namespace vigil {

struct CameraSnapshot {
  std::string name;
  std::string source;             // as configured, credentials redacted
  std::string state = "stopped";  // cameraStateName
  std::string lastError;          // empty while streaming
  bool up = false;
  FigureList frames;  // its counts at one moment, as CameraCounters::report gives them
  bool motionEnabled = false;
  std::string motion = "off";  // motionStateName
  double gatedSeconds = 0;
  double fpsCaptured = 0;
  double fpsDetected = 0;
  double captureCpuSeconds = 0;  // so far (CameraCounters::captureCpuSeconds)
  std::string decoder;           // CameraChannel::decoder
  double captureCpuShare = 0;    // of one core, over the last rate window
  bool present = false;
  int persons = 0;
  std::optional<std::chrono::system_clock::time_point> lastPerson;
  bool hasFrame = false;
  LatencySummary latencyMs;
  bool tracking = false;
  std::vector<TrackedPerson> tracks;  // first and last seen in Unix seconds
  // What the page draws and explains: the configured rate, the zones with their state, the
  // masks, and the gating intervals that slow detection down.
  struct Zone {
    std::string name;
    Polygon polygon;
    bool present = false;
    int persons = 0;
  };
  // A counting line with its running counts.
  struct Line {
    LineSpec spec;
    std::uint64_t in = 0;
    std::uint64_t out = 0;
  };
  double detectFps = 0;
  std::vector<Zone> zones;
  std::vector<Line> lines;
  std::vector<Polygon> masks;
  double idleDetectIntervalS = 0;
  double stillDetectIntervalS = 0;
  std::optional<Heartbeat::Clock::duration> captureOverdue;  // the capture thread's heartbeat
  int detectWidth = 0;  // the latest detected frame's size: what boxes and lines are in pixels of
  int detectHeight = 0;
  // Its picture stream (picture_source), when it has one.
  struct PictureStream {
    std::string source;             // credentials redacted
    std::string state = "stopped";  // cameraStateName
    std::string lastError;          // empty while streaming
    bool up = false;
    int width = 0;  // of its newest picture; 0 before the first
    int height = 0;
    bool decodingAll = false;  // every picture decoded (wanted), or keyframes only
    bool shown = false;        // the latest picture people see is one of its
    std::string refused;       // why its pictures are not shown although they come
    FigureList frames;
  };
  std::optional<PictureStream> pictureStream;
  // Where its detections look (CameraRegions): the setting, whether regions run, the latest
  // detection's regions in the detected frame's pixels, and the inferences so far by kind.
  struct Regions {
    RegionsConfig config;
    bool active = false;
    std::vector<Region> last;
    RegionCounts inferences{};
  };
  Regions regions;
};

struct MqttSnapshot {
  std::string url;
  bool connected = false;
  std::uint64_t published = 0;
  std::uint64_t dropped = 0;
  std::uint64_t buffered = 0;
  std::uint64_t reconnects = 0;
  std::string lastError;
};

// The daemon's state at one moment, as health, readiness, /api/status and the summary read it.
struct DaemonSnapshot {
  std::string node;  // Config::node
  double uptimeSeconds = 0;
  bool detectorLoaded = false;
  struct Backend {
    std::string name;    // the backend answering now (BackendStatus::InUse)
    std::string device;  // what runs it
  };
  Backend backend;
  nlohmann::json backendJson;  // BackendStatus::json()
  std::string model;
  std::uint64_t detectionFailures = 0;
  std::uint64_t invalidOutputs = 0;
  std::optional<Heartbeat::Clock::duration> workerOverdue;
  std::optional<MqttSnapshot> mqtt;  // nullopt without MQTT
  std::uint64_t eventsPublished = 0;
  // The history on disk (EventHistory): nullopt when there is none (no state directory).
  struct History {
    std::string pausedReason;  // empty while it writes
    FigureList figures;        // EventHistory::report
  };
  std::optional<History> history;
  std::vector<std::string> enabledCameras;  // in the configuration, in its order
  std::vector<CameraSnapshot> cameras;      // running, by name
};

}  // namespace vigil
