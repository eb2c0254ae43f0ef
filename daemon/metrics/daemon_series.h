#pragma once

#include <array>
#include <cstddef>

// Every series the daemon itself declares (metrics/daemon_metrics.cpp registers and feeds them),
// one row of kDaemonSeries each: name, type, labels and help side by side, in the order /metrics
// renders them. The process, heap and power series are their components' own, and so are the
// figures parts report themselves, shown through FigureSeries: the detector's
// (InferenceCounters::report), each camera's pipeline's (CameraChannel::report: its frame
// counts, regions, capture CPU, up, gating state) and picture stream's (PictureStream::report),
// the MQTT client's (reportMqttFigures) and the HTTP server's (HttpServerCounters::report).
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
  kEventsPublished,
  kZoneEventsPublished,
  kCameraInfo,
  kCameraDecoder,
  kPersonPresent,
  kPersons,
  kZonePersonPresent,
  kZonePersons,
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
