#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "daemon/base/log.h"
#include "daemon/settings/calibration_settings.h"
#include "daemon/settings/motion_settings.h"
#include "daemon/settings/regions_settings.h"
#include "daemon/settings/tracking_settings.h"
#include "daemon/settings/web_settings.h"
#include "daemon/settings/zones.h"
#include "detector/npu/vitisai_plan.h"

namespace vigil {

// The daemon's settings as plain structs: what cameras.yaml says, read and checked by
// config/config_file.h (the only reader of the file). config/cameras.yaml is the documented
// example; every key below is named there.

enum class SourceKind { kV4l2, kRtsp, kHttp, kFile };
enum class PixelFormatChoice { kAuto, kMjpeg, kYuyv };
// Hardware decoding of the pictures FFmpeg decodes (H.264, H.265 streams and files): none, or
// VAAPI (AMD's radeonsi on Ryzen AI boxes). A camera whose hardware decode cannot be had decodes
// in software, and says so.
enum class HwAccel { kNone, kVaapi };

// FFmpeg's hardware decoding for one camera.
struct HwDecode {
  HwAccel accel = HwAccel::kNone;
  std::string device = "/dev/dri/renderD128";  // VAAPI's DRM render node

  bool operator==(const HwDecode&) const = default;
};

// A camera's picture stream (picture_source): its full-size stream, for the pictures people see
// (the page, latest.jpg, the MJPEG stream, snapshots), when `source` is a small detect stream.
// An empty source: none, the pictures come from the detected frames.
struct PictureSourceConfig {
  std::string source;  // as written in the file
  SourceKind kind = SourceKind::kV4l2;
  std::string location;  // what is opened, as CameraConfig::location
  int width = 1920;      // picture_width/picture_height: asked of a V4L2 device only
  int height = 1080;

  bool enabled() const { return !source.empty(); }
  bool operator==(const PictureSourceConfig&) const = default;
};

// Two frame sizes of one shape (aspect ratios within 1 %): boxes found on one map onto the other
// by scaling x and y alike.
bool sameAspectRatio(int width, int height, int otherWidth, int otherHeight);

struct CameraConfig {
  std::string name;    // unique, [a-z0-9_-]+
  std::string source;  // as written in the file
  SourceKind kind = SourceKind::kV4l2;
  // Device path, URL, or absolute file path (file: sources): what is opened. With
  // password_file, the URL carries that password; print it only through redactCredentials.
  std::string location;
  std::string passwordFile;  // rtsp/http: the file the URL's password was read from
  PixelFormatChoice format = PixelFormatChoice::kAuto;
  int width = 640;
  int height = 480;
  double fps = 10;  // capture rate asked of the device, when fpsSet
  // fps was written: without it a V4L2 device is asked for the lowest rate it offers at or
  // above detect_fps (fps when it offers none).
  bool fpsSet = false;
  double detectFps = 5;  // how often a frame of this camera goes to the detector
  // A 3x3 median on this camera's letterboxed pictures before inference (Letterbox): for a
  // camera whose night pictures are noisy (bench/night.md).
  bool denoise = false;
  bool enabled = true;
  bool loop = false;            // file sources: start again at the end
  bool history = true;          // its events and their pictures are kept (Config::history)
  std::vector<ZoneSpec> zones;  // named regions with their own presence state
  std::vector<Polygon> masks;   // a person standing in one of these is ignored
  std::vector<LineSpec> lines;  // counting lines (tracked cameras only), fractions
  PresenceSettings presence;
  MotionSettings motion;      // motion gating; cameras.yaml: on without a section
  RegionsConfig regions;      // detection on regions; auto without a section
  TrackingSettings tracking;  // person tracking; on without a section
  CalibrationSampleSettings calibrationSamples;  // off without a calibration_samples section
  HwDecode hwDecode;            // hwaccel, or capture.hwaccel; capture.vaapi_device
  bool skipLoopFilter = true;   // capture.skip_loop_filter
  PictureSourceConfig picture;  // picture_source; none without it
  // Not read from the file: this capture feeds a camera's picture stream (pictureCameraConfig).
  bool picturesOnly = false;

  bool operator==(const CameraConfig&) const = default;
};

struct DetectorConfig {
  std::string model;  // empty: the built-in default model directory
  // auto: the NPU for a bundle with an NPU stage, else the fastest CPU backend that loads
  // (cpu-ort, then the OpenCV reference).
  std::string backend = "auto";
  // One thread spends the least CPU per frame (bench/cpu-threads.md); 0: every hardware thread.
  int threads = 1;
  // Detections below this are not reported (status page, untracked cameras); tracking sees
  // persons down to ByteTrack's low score (kTrackingLowScore) whatever this says.
  float minScore = 0.5F;
  float nms = 0.45F;
  std::vector<std::string> classes{"person"};
  // Every picture padded to the model's square, also where cpu-ort fits it to the picture
  // (DetectorOptions::fitInput).
  bool squareInput = false;
  // `onnxruntime` (the ONNX Runtime with the Vitis AI EP) and `vitisai: {target, xclbin,
  // cache_dir}`, for bundles whose NPU stage runs on ONNX Runtime's Vitis AI EP.
  VitisAiSettings vitisai;

  bool operator==(const DetectorConfig&) const = default;
};

// The `mqtt` section. Absent: no MQTT at all.
struct MqttConfig {
  bool enabled = false;
  std::string url = "mqtt://127.0.0.1:1883";
  std::string clientId = "vigil";  // parseConfig: vigil-<node> unless client_id says otherwise
  std::string username;
  std::string passwordFile;  // where the password came from, for messages; never the password
  std::string password;      // from password_file, else $VIGIL_MQTT_PASSWORD; never logged
  std::string caFile;
  std::string certFile;
  std::string keyFile;
  std::string topicPrefix = "vigil";  // parseConfig: vigil/<node> unless topic_prefix says so
  int qos = 1;
  int keepAlive = 30;  // seconds
  std::size_t bufferMessages = 1000;
  bool haDiscovery = true;
  std::string haPrefix = "homeassistant";
  bool snapshots = false;

  bool operator==(const MqttConfig&) const = default;
};

// The `http` section: /metrics, health, status API and page.
struct HttpConfig {
  bool enabled = true;
  std::string listen = "127.0.0.1:9842";  // host:port; loopback unless configured otherwise
  // `web_config`: exporter-toolkit's web configuration (TLS, basic_auth_users, headers), made
  // absolute; empty: plain HTTP without logins. `web` is what it held when the file was read.
  std::string webConfigFile;
  std::shared_ptr<const WebConfig> web;
  // With logins: /metrics, /healthz and /readyz need one too (camera views always do).
  bool metricsNeedLogin = false;

  // The host of `listen`, an IPv6 one without its brackets ("::1", "0.0.0.0", "hall.lan").
  std::string listenHost() const;
  // The host of `listen` is a loopback address (127.0.0.0/8, ::1, localhost).
  bool listensOnLoopback() const;
  // The host of `listen` is every address (0.0.0.0, ::, or none given).
  bool listensOnEveryAddress() const;
  // The web configuration has basic_auth_users.
  bool hasLogins() const { return web && !web->basicAuthUsers.empty(); }
  // Camera views answer 403: not on loopback and no logins (RouteAccess::kCameraView).
  bool refusesCameraViews() const { return !listensOnLoopback() && !hasLogins(); }

  // Where and how it listens; what the web configuration says is compared by reading it again.
  bool sameListener(const HttpConfig& other) const {
    return enabled == other.enabled && listen == other.listen;
  }
};

// The top-level `history:` section: how long events and their pictures are kept on disk (under
// the state directory), oldest first.
struct HistoryConfig {
  int retainDays = 14;
  int maxMegabytes = 1024;

  bool operator==(const HistoryConfig&) const = default;
};

// The top-level `capture:` section: how every camera's pictures become pixels.
struct CaptureConfig {
  // The detector's pictures decoded at the smallest size that covers its input (a JPEG at 1/2,
  // 1/4 or 1/8 scale, an FFmpeg picture scaled in its colour conversion); false: at full size.
  bool scaledDecode = true;
  // hwaccel: every camera's default (a camera's own hwaccel wins); vaapi_device.
  HwDecode hwDecode;
  // FFmpeg's software decoders (H.264, H.265) skip their loop filter (deblocking) on every
  // picture: 30 % of a 1080p H.264 decode, detections about as close to the deblocked picture's
  // as those of the stream at half its bitrate are (bench/capture.md, "The loop filter").
  bool skipLoopFilter = true;

  bool operator==(const CaptureConfig&) const = default;
};

// The `log:` section.
struct LogConfig {
  // What the log shows, from this level up (`vigil run --log-level` overrides it). At info a
  // busy camera says a few lines a minute: state changes and presence events; each person's zone
  // and line events are debug (they are on MQTT and in the history).
  spdlog::level::level_enum level = spdlog::level::info;

  bool operator==(const LogConfig&) const = default;
};

struct Config {
  std::filesystem::path file;
  int version = 1;
  // Names this box among others on one broker, Home Assistant and Prometheus: the MQTT client id
  // vigil-<node>, the topics vigil/<node>/..., the Home Assistant device, vigil_node_info.
  // Default: the host's short name, made [a-z0-9_-].
  std::string node;
  DetectorConfig detector;
  MqttConfig mqtt;
  HttpConfig http;
  CaptureConfig capture;
  HistoryConfig history;
  LogConfig log;
  std::vector<CameraConfig> cameras;
  // What works but should be fixed, e.g. a secret other users can read; each says where
  // ("cameras.yaml:8:18: mqtt.password_file: ..."). Logged at warn by check-config and run.
  std::vector<std::string> warnings;
};

// The names of the camera's zones, in the file's order.
std::vector<std::string> zoneNames(const CameraConfig& camera);

std::string_view sourceKindName(SourceKind kind);
std::string_view pixelFormatName(PixelFormatChoice format);
std::string_view hwAccelName(HwAccel accel);

}  // namespace vigil
