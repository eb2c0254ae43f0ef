#pragma once

#include <array>
#include <cstddef>

// Every series the daemon itself declares (metrics/daemon_metrics.cpp registers and feeds them),
// one row of kDaemonSeries each: name, type, labels and help side by side, in the order /metrics
// renders them. The process, heap and power series are their components' own, and so are the
// figures parts report themselves (a camera's frame counts: CameraCounters::report, shown
// through FigureSeries).
namespace vigil::daemon_series {

enum class SeriesType {
  kInfo,       // one series of value 1, facts as labels
  kHistogram,  // observed by the result path
  kCounter,    // read at render time (a callback)
  kGauge,      // read at render time (a callback)
};

enum class Series : std::size_t {
  kStageDuration,
  kCaptureToPublish,
  kBuildInfo,
  kNodeInfo,
  kEnergyPerInference,
  kDetectionFailures,
  kDetectorBusy,
  kInvalidOutputs,
  kEventsPublished,
  kZoneEventsPublished,
  kMqttConnected,
  kMqttBuffered,
  kMqttPublished,
  kMqttDropped,
  kMqttReconnects,
  kHttpResponses,
  kHttpBadRequests,
  kHttpReadTimeouts,
  kHttpRejected,
  kHttpEvicted,
  kHttpOpen,
  kHttpTlsHandshakeFailures,
  kHttpLoginFailures,
  kHttpLoginsThrottled,
  kHttpRefusedWithoutLogins,
  kHttpStreams,
  kHttpStreamsRefused,
  kDetectorRegions,
  kCaptureCpu,
  kCameraUp,
  kPictureStreamUp,
  kCameraInfo,
  kCameraDecoder,
  kPersonPresent,
  kPersons,
  kZonePersonPresent,
  kZonePersons,
  kMotionState,
  kGatedSeconds,
  kTracksActive,
  kTracksStarted,
  kTrackDuration,
  kLineCrossings,
  kCount
};

struct SeriesSpec {
  Series id;
  SeriesType type;
  const char* name;
  std::array<const char*, 5> labels;  // nullptr: no more labels
  const char* help;
};

using enum SeriesType;

// Every series the daemon itself declares, in the order /metrics renders them.
inline constexpr SeriesSpec kDaemonSeries[] = {
    {Series::kStageDuration,
     kHistogram,
     "vigil_stage_duration_seconds",
     {"stage", "backend"},
     "Time per frame in each pipeline stage: capture_to_start (waiting for the detector), "
     "preprocess, inference, postprocess, publish; by the backend that ran the frame"},
    {Series::kCaptureToPublish,
     kHistogram,
     "vigil_capture_to_publish_seconds",
     {"camera"},
     "End to end: from the capture of a frame to its detections published"},
    {Series::kBuildInfo, kInfo, "vigil_build_info", {"version"}, "Vigil's version (value 1)"},
    {Series::kNodeInfo,
     kInfo,
     "vigil_node_info",
     {"node"},
     "This box's node name (cameras.yaml node, default the host name; value 1)"},
    {Series::kEnergyPerInference,
     kGauge,
     "vigil_package_energy_per_inference_joules",
     {},
     "Package energy (RAPL, every process) per detected frame over the last 2 s; absent "
     "without an energy source"},
    {Series::kDetectionFailures,
     kCounter,
     "vigil_detection_failures_total",
     {},
     "Frames the detector failed on (runtime errors and invalid outputs)"},
    {Series::kDetectorBusy,
     kCounter,
     "vigil_detector_busy_seconds_total",
     {},
     "Seconds the shared detector spent detecting; its rate near 1 means the cameras wait for it "
     "(raise detector.threads)"},
    {Series::kInvalidOutputs,
     kCounter,
     "vigil_invalid_outputs_total",
     {},
     "Inferences the runtime reported as successful whose output was NaN, Inf or malformed"},
    {Series::kEventsPublished,
     kCounter,
     "vigil_events_published_total",
     {},
     "Presence events (new, update, end) published"},
    {Series::kZoneEventsPublished,
     kCounter,
     "vigil_zone_events_published_total",
     {},
     "Zone events of tracked persons (enter, leave, loiter) published"},
    {Series::kMqttConnected,
     kGauge,
     "vigil_mqtt_connected",
     {},
     "1 while connected to the MQTT broker"},
    {Series::kMqttBuffered,
     kGauge,
     "vigil_mqtt_buffered_messages",
     {},
     "Messages queued, not yet acknowledged by the broker"},
    {Series::kMqttPublished,
     kCounter,
     "vigil_mqtt_messages_published_total",
     {},
     "Messages the broker acknowledged"},
    {Series::kMqttDropped,
     kCounter,
     "vigil_mqtt_messages_dropped_total",
     {},
     "Messages lost to a full offline buffer (mqtt.buffer_messages)"},
    {Series::kMqttReconnects,
     kCounter,
     "vigil_mqtt_reconnects_total",
     {},
     "Connection attempts after the first"},
    {Series::kHttpResponses,
     kCounter,
     "vigil_http_responses_total",
     {"code"},
     "HTTP responses by status class"},
    {Series::kHttpBadRequests,
     kCounter,
     "vigil_http_bad_requests_total",
     {},
     "Malformed or oversized requests (400, 413, 431)"},
    {Series::kHttpReadTimeouts,
     kCounter,
     "vigil_http_read_timeouts_total",
     {},
     "Connections closed with a request half received"},
    {Series::kHttpRejected,
     kCounter,
     "vigil_http_connections_rejected_total",
     {},
     "Connections refused with 503 at the connection limit (all being answered)"},
    {Series::kHttpEvicted,
     kCounter,
     "vigil_http_connections_evicted_total",
     {},
     "Connections waiting longest for a request, closed at the limit to make room"},
    {Series::kHttpOpen, kGauge, "vigil_http_connections_open", {}, "HTTP connections open now"},
    {Series::kHttpTlsHandshakeFailures,
     kCounter,
     "vigil_http_tls_handshake_failures_total",
     {},
     "TLS handshakes that failed, plain HTTP sent to the TLS listener included"},
    {Series::kHttpLoginFailures,
     kCounter,
     "vigil_http_login_failures_total",
     {},
     "Requests with a wrong or malformed login (answered 401)"},
    {Series::kHttpLoginsThrottled,
     kCounter,
     "vigil_http_logins_throttled_total",
     {},
     "Login attempts answered 429: too many failures from that address"},
    {Series::kHttpRefusedWithoutLogins,
     kCounter,
     "vigil_http_camera_views_refused_total",
     {},
     "Camera pictures and pages answered 403: not on loopback and no logins configured"},
    {Series::kHttpStreams, kGauge, "vigil_http_streams_open", {}, "Live MJPEG streams open now"},
    {Series::kHttpStreamsRefused,
     kCounter,
     "vigil_http_streams_refused_total",
     {},
     "Live streams answered 503: the most that may be open at once are"},
    {Series::kDetectorRegions,
     kCounter,
     "vigil_detector_regions_total",
     {"camera", "kind"},
     "Inferences the camera's detections ran, by what each looked at: motion and track (a region "
     "around changed pixels or a tracked person, at the camera's resolution), whole (the whole "
     "picture shrunk: every detection of a camera without regions), edge (a person cut by a "
     "region's edge, detected again); per detection: divide by vigil_camera_frames_detected_total"},
    {Series::kCaptureCpu,
     kCounter,
     "vigil_camera_capture_cpu_seconds_total",
     {"camera"},
     "CPU time the camera's capture cost: its capture thread's own CPU clock (reading, FFmpeg's "
     "decoding, the motion check) plus its pictures' decoding on other threads"},
    {Series::kCameraUp,
     kGauge,
     "vigil_camera_up",
     {"camera"},
     "1 while the camera delivers frames"},
    {Series::kPictureStreamUp,
     kGauge,
     "vigil_camera_picture_stream_up",
     {"camera"},
     "1 while the camera's picture stream (picture_source) delivers pictures; 0 while it is lost "
     "(detection goes on, the page shows the detected frames); absent without one"},
    {Series::kCameraInfo,
     kGauge,
     "vigil_camera_info",
     {"camera", "source", "resolution", "fps", "detect_fps"},
     "The camera's facts (value 1): source kind (v4l2, rtsp, http, file), the resolution its "
     "frames arrive in (empty before the first), the capture rate asked of a V4L2 device (\"auto\" "
     "when fps is not set: the lowest it offers at or above detect_fps; empty for streams and "
     "files, which keep their own) and detect_fps"},
    {Series::kCameraDecoder,
     kGauge,
     "vigil_camera_decoder_info",
     {"camera", "decoder"},
     "Who makes the camera's pixels (value 1), as its source said when it last opened: "
     "\"FFmpeg h264, software\", \"FFmpeg hevc, VAAPI\", \"libjpeg, on demand\", \"YUYV, converted "
     "on demand\"; "
     "with hwaccel asked for and not used, why (\"... (hwaccel vaapi: VAAPI device ...: No such "
     "file or directory)\"); empty before the first open"},
    {Series::kPersonPresent,
     kGauge,
     "vigil_person_present",
     {"camera"},
     "1 while a person is present (after min_frames)"},
    {Series::kPersons,
     kGauge,
     "vigil_persons",
     {"camera"},
     "Persons counted in the current presence event"},
    {Series::kZonePersonPresent,
     kGauge,
     "vigil_zone_person_present",
     {"camera", "zone"},
     "1 while a person is present in the zone (after its min_frames)"},
    {Series::kZonePersons,
     kGauge,
     "vigil_zone_persons",
     {"camera", "zone"},
     "Persons counted in the zone's current presence event"},
    {Series::kMotionState,
     kGauge,
     "vigil_camera_motion_state",
     {"camera", "state"},
     "Motion gating state (value 1 for the current one): off (gating disabled), motion (full "
     "detect_fps), person (still, a person present: still_detect_interval), idle (still, "
     "nobody: idle_detect_interval)"},
    {Series::kGatedSeconds,
     kCounter,
     "vigil_camera_gated_detector_seconds_estimate_total",
     {"camera"},
     "Estimated detector time saved by motion gating: each gated frame times the mean "
     "detector wall-clock time per frame (preprocess + inference + postprocess) when it was "
     "gated; an estimate, not a measurement"},
    {Series::kTracksActive,
     kGauge,
     "vigil_tracks_active",
     {"camera"},
     "Persons tracked on the camera now (confirmed tracks, a briefly missed one included); "
     "absent when the camera is not tracked"},
    {Series::kTracksStarted,
     kCounter,
     "vigil_tracks_started_total",
     {"camera"},
     "Person tracks started on the camera since it (re)started"},
    {Series::kTrackDuration,
     kHistogram,
     "vigil_track_duration_seconds",
     {"camera"},
     "How long each ended person track was seen, first to last detection"},
    {Series::kLineCrossings,
     kCounter,
     "vigil_line_crossings_total",
     {"camera", "line", "direction"},
     "Tracked persons who crossed the counting line, by direction (in: from its left-hand "
     "side to its right-hand side); continues across restarts while the line stays the same"},
};

constexpr bool tableInOrder() {
  std::size_t i = 0;
  for (const SeriesSpec& s : kDaemonSeries) {
    if (static_cast<std::size_t>(s.id) != i++) return false;
  }
  return i == static_cast<std::size_t>(Series::kCount);
}
static_assert(tableInOrder(), "kDaemonSeries lists every Series once, in enum order");

}  // namespace vigil::daemon_series
