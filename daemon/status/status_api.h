#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <string>

#include "daemon/base/metrics.h"
#include "daemon/events/recent_events.h"
#include "daemon/events/result_path.h"
#include "daemon/history/event_history.h"
#include "daemon/status/event_pages.h"
#include "daemon/status/status_snapshot.h"
#include "daemon/web/http_server.h"

namespace vigil {

// Liveness (/healthz): every long-running thread kept its last promise to show life
// (heartbeat.h); 503 naming the late ones otherwise. The systemd watchdog asks the same. Reads
// only the heartbeats (takeHeartbeats() is enough).
HttpResponse healthResponse(const DaemonSnapshot& snapshot);
// Readiness (/readyz): the model is loaded and passed its checks, every enabled camera started.
HttpResponse readinessResponse(const DaemonSnapshot& snapshot);
// The /api/status document.
nlohmann::json statusJson(const DaemonSnapshot& snapshot);
// A camera's regions (CameraSnapshot::Regions) as /api/status and the run summary give them.
nlohmann::json regionsJson(const CameraSnapshot::Regions& regions);
// A part's figures as /api/status and --summary-json give them (a camera's "frames"): each by
// its key, those with a label as an object of label values.
nlohmann::json figuresJson(const FigureList& figures);

// The daemon's HTTP face: the status page (/), /metrics, /healthz, /readyz, /api/status,
// /api/cameras/<name>/latest.jpg (the newest detected frame with its boxes drawn) and
// /api/cameras/<name>/stream.mjpeg (those frames as they come, multipart/x-mixed-replace, for Home
// Assistant's MJPEG camera, VLC and browsers).
//
// Threads: its routes run on the control (io_context) thread, which owns every source; the
// sources are borrowed and outlive the server.
class StatusApi {
 public:
  struct Sources {
    std::function<DaemonSnapshot()> snapshot;
    std::function<DaemonSnapshot()> heartbeats;  // takeHeartbeats(): what /healthz reads
    const Registry& metrics;
    const ResultPath& results;  // the latest frames
    // The loaded detector's class names (empty before it loaded), for the boxes' labels.
    std::function<std::vector<std::string>()> classNames;
    const RecentEvents& events;  // /api/events without a history
    EventHistory* history;       // /api/events; nullptr: none (no state directory)
  };

  explicit StatusApi(Sources sources);
  void addRoutes(HttpServer& server);
  // Cameras whose latest picture is kept encoded (for tests: only cameras that still exist).
  std::size_t encodedPictures() const { return encoded_.size(); }

 private:
  HttpResponse metricsText();
  friend class CameraStream;
  // /api/cameras/<name>/latest.jpg or /stream.mjpeg (a CameraStream).
  HttpResponse cameraPicture(const std::string& subpath);
  HttpResponse latestJpeg(const std::string& name);
  // The camera's newest annotated frame as a JPEG, encoded once per frame however many ask:
  // its CameraView::frameVersion and the bytes (valid until the next call); else the answer.
  struct EncodedPicture {
    std::uint64_t version;
    const std::string* jpeg;
  };
  tl::expected<EncodedPicture, HttpResponse> encodedPicture(const std::string& name);
  // Draws the view's latest frame with its persons into annotated_.
  Expected<void> annotate(const CameraView& view);

  Sources sources_;
  EventPages events_;  // /api/events and the events' pictures
  std::string metricsText_;
  SteadyClock::time_point metricsRenderedAt_{};
  cv::Mat annotated_;  // reused by latestJpeg()
  // Each camera's latest frame encoded once, whoever asks for it and however often:
  // (CameraView::frameVersion, the JPEG).
  std::map<std::string, std::pair<std::uint64_t, std::string>, std::less<>> encoded_;
  std::vector<Detection> otherClasses_;  // reused by latestJpeg()
};

}  // namespace vigil
