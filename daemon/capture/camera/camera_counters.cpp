#include "daemon/capture/camera/camera_counters.h"

namespace vigil {

namespace {

// The status API's key, the Prometheus family and its help of each count (FigureName).
constexpr FigureName kCaptured{"captured", "vigil_camera_frames_captured_total",
                               "Frames read from the camera"};
constexpr FigureName kDetected{"detected", "vigil_camera_frames_detected_total",
                               "Frames the detector processed"};
constexpr FigureName kSkipped{
    "skipped", "vigil_camera_frames_skipped_total",
    "Frames replaced by a newer one before the detector took them (by design at detect_fps "
    "below fps)"};
constexpr FigureName kDropped{"dropped", "vigil_camera_frames_dropped_total",
                              "Frames lost because every frame buffer was in use"};
constexpr FigureName kDecodeErrors{
    "decode_errors", "vigil_camera_decode_errors_total",
    "Corrupt frames: refused at capture, or refused when decoded (damaged or cut short)"};
constexpr FigureName kDecodeWarnings{
    "decode_warnings", "vigil_camera_decode_warnings_total",
    "Pictures of which the JPEG decoder said something, by kind (extraneous_bytes and metadata "
    "are harmless; truncated, damaged_data and undecodable make the picture a corrupt frame)",
    "kind"};
constexpr FigureName kLost{
    "lost", "vigil_camera_frames_lost_total",
    "Frames the device produced but never delivered (gaps in V4L2 sequence numbers)"};
constexpr FigureName kReconnects{
    "reconnects", "vigil_camera_reconnects_total",
    "Times the source was reopened after it had streamed and was lost (a camera that never "
    "connected: vigil_camera_open_failures_total)"};
constexpr FigureName kOpenFailures{
    "open_failures", "vigil_camera_open_failures_total",
    "Attempts to open the source that failed (refused, absent, wrong URL), each followed by a "
    "retry with backoff"};
constexpr FigureName kGated{
    "gated", "vigil_camera_frames_gated_total",
    "Frames motion gating held back from the detector (detections that would have run "
    "without it)"};
constexpr FigureName kMotionChecked{
    "motion_checked", "vigil_camera_frames_motion_checked_total",
    "Frames the motion gate looked at (each decoded small and grey; at most one per detect "
    "period)"};
constexpr FigureName kDecoded{
    "decoded", "vigil_camera_frames_decoded_total",
    "Frames turned into pixels (decoded on demand: for the detector, the motion check, the "
    "page or a snapshot); the rest were never decoded or colour-converted"};

}  // namespace

void CameraCounters::report(FigureWriter& out) const {
  const auto read = [](const std::atomic<std::uint64_t>& n) {
    return n.load(std::memory_order_relaxed);
  };
  out.count(kCaptured, {}, read(captured));
  out.count(kDetected, {}, read(detected));
  out.count(kSkipped, {}, read(skipped));
  out.count(kDropped, {}, read(dropped));
  out.count(kDecodeErrors, {}, decodeErrorsTotal());
  for (std::size_t k = 0; k < kJpegMessageKinds; ++k) {
    const auto kind = static_cast<JpegMessageKind>(k);
    out.count(kDecodeWarnings, jpegMessageKindName(kind), decoding->messages(kind));
  }
  out.count(kLost, {}, read(lost));
  out.count(kReconnects, {}, read(reconnects));
  out.count(kOpenFailures, {}, read(openFailures));
  out.count(kGated, {}, read(gated));
  out.count(kMotionChecked, {}, read(motionChecked));
  out.count(kDecoded, {}, read(decoding->frames));
}

void CameraCounters::setDecoder(std::string decoder) {
  std::lock_guard lock(decoderMutex_);
  decoder_ = std::move(decoder);
}

std::string CameraCounters::decoder() const {
  std::lock_guard lock(decoderMutex_);
  return decoder_;
}

}  // namespace vigil
