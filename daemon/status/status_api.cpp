#include "daemon/status/status_api.h"

#include <fmt/format.h>

#include <opencv2/imgcodecs.hpp>
#include <variant>

#include "daemon/status/history_page.h"
#include "daemon/status/status_page.h"
#include "daemon/status/status_responses.h"
#include "detector/annotate.h"

namespace vigil {

namespace {

// Rendered at most this often: a scraper gone wild (or wrk) then costs socket work only, not a
// render per request on the thread that also publishes events.
constexpr auto kMetricsMaxAge = std::chrono::milliseconds(500);

// The page: its live view, the history view (#history), its end.
std::string statusPage() {
  std::string page;
  page.reserve(kStatusPage.size() + kHistoryView.size() + kStatusPageEnd.size());
  return page.append(kStatusPage).append(kHistoryView).append(kStatusPageEnd);
}

nlohmann::json nullIfEmpty(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

// The camera's tracked persons, boxes in pixels of its latest frame.
nlohmann::json tracksJson(const CameraSnapshot& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const TrackedPerson& p : c.tracks) {
    out.push_back(
        {{"id", p.id},
         {"box", {{"x", p.box.x}, {"y", p.box.y}, {"w", p.box.width}, {"h", p.box.height}}},
         {"score", p.score},
         {"first_seen", isoUtcOfUnixSeconds(p.firstSeen)},
         {"detected", p.detected},
         {"stationary", p.stationary},
         {"zones", p.zones}});
  }
  return out;
}

nlohmann::json polygonJson(const Polygon& polygon) {
  nlohmann::json points = nlohmann::json::array();
  for (const Point& p : polygon) points.push_back({p.x, p.y});
  return points;
}

nlohmann::json areasJson(const CameraSnapshot& c, nlohmann::json& masks) {
  nlohmann::json zones = nlohmann::json::array();
  for (const CameraSnapshot::Zone& z : c.zones) {
    zones.push_back({{"name", z.name},
                     {"polygon", polygonJson(z.polygon)},
                     {"present", z.present},
                     {"persons", z.persons}});
  }
  masks = nlohmann::json::array();
  for (const Polygon& m : c.masks) masks.push_back(polygonJson(m));
  return zones;
}

// The counting lines: points in fractions of the frame (as configured), the directions' names and
// their running counts.
nlohmann::json linesJson(const CameraSnapshot& c) {
  nlohmann::json lines = nlohmann::json::array();
  for (const CameraSnapshot::Line& l : c.lines) {
    nlohmann::json points = nlohmann::json::array();
    for (const LinePoint& p : l.spec.points) points.push_back({p.x, p.y});
    lines.push_back({{"name", l.spec.name},
                     {"points", points},
                     {"names", {{"in", l.spec.inName}, {"out", l.spec.outName}}},
                     {"counts", {{"in", l.in}, {"out", l.out}}}});
  }
  return lines;
}

// A camera's picture stream (picture_source); null without one.
nlohmann::json pictureStreamJson(const CameraSnapshot& c) {
  if (!c.pictureStream) return nullptr;
  const CameraSnapshot::PictureStream& p = *c.pictureStream;
  return {{"source", p.source},
          {"state", p.state},
          {"up", p.up},
          {"last_error", nullIfEmpty(p.lastError)},
          {"width", p.width},
          {"height", p.height},
          {"decoding", p.decodingAll ? "every picture" : "keyframes only"},
          {"shown", p.shown},
          {"refused", nullIfEmpty(p.refused)},
          {"frames", figuresJson(p.frames)}};
}

}  // namespace

nlohmann::json regionsJson(const CameraSnapshot::Regions& r) {
  nlohmann::json last = nlohmann::json::array();
  for (const Region& region : r.last) {
    last.push_back({{"kind", regionKindName(region.kind)},
                    {"x", region.rect.x},
                    {"y", region.rect.y},
                    {"width", region.rect.width},
                    {"height", region.rect.height}});
  }
  nlohmann::json inferences = nlohmann::json::object();
  for (std::size_t k = 0; k < kRegionKinds; ++k) {
    inferences[std::string(regionKindName(static_cast<RegionKind>(k)))] = r.inferences[k];
  }
  return {{"mode", regionsModeName(r.config.mode)},
          {"active", r.active},
          {"whole_every_s", r.config.wholeEvery},
          {"max_regions", r.config.maxRegions},
          {"last", last},
          {"inferences", inferences}};
}

namespace {

nlohmann::json cameraJson(const CameraSnapshot& c) {
  nlohmann::json masks;
  nlohmann::json zones = areasJson(c, masks);
  return {
      {"name", c.name},
      {"source", c.source},
      {"state", c.state},
      {"up", c.up},
      {"last_error", nullIfEmpty(c.lastError)},
      {"detect_fps", c.detectFps},
      {"fps_captured", c.fpsCaptured},
      {"fps_detected", c.fpsDetected},
      {"capture_cpu_seconds", c.captureCpuSeconds},
      {"decoder", nullIfEmpty(c.decoder)},
      {"capture_cpu_share", c.captureCpuShare},
      {"present", c.present},
      {"persons", c.persons},
      {"last_person",
       c.lastPerson ? nlohmann::json(isoUtc(*c.lastPerson)) : nlohmann::json(nullptr)},
      {"has_frame", c.hasFrame},
      {"latency_ms",
       {{"p50", c.latencyMs.p50}, {"p99", c.latencyMs.p99}, {"samples", c.latencyMs.samples}}},
      {"frames", figuresJson(c.frames)},
      {"motion",
       {{"enabled", c.motionEnabled},
        {"state", c.motion},
        {"idle_detect_interval_s", c.idleDetectIntervalS},
        {"still_detect_interval_s", c.stillDetectIntervalS},
        {"gated_detector_seconds_estimate", c.gatedSeconds}}},
      {"regions", regionsJson(c.regions)},
      {"tracks", c.tracking ? tracksJson(c) : nlohmann::json(nullptr)},
      {"zones", zones},
      {"masks", masks},
      {"lines", linesJson(c)},
      {"frame_size", {{"width", c.detectWidth}, {"height", c.detectHeight}}},
      {"picture_stream", pictureStreamJson(c)},
  };
}

// {"state": "writing" | "paused" | "off", "reason" (why it is paused, else null), and its
// figures (events_written, pictures_written, dropped, pruned, paused, bytes)}.
nlohmann::json historyJson(const std::optional<DaemonSnapshot::History>& h) {
  if (!h)
    return {{"state", "off"},
            {"reason", "no state directory, or it cannot be used (the log says which)"}};
  nlohmann::json out = figuresJson(h->figures);
  out["state"] = h->pausedReason.empty() ? "writing" : "paused";
  out["reason"] = nullIfEmpty(h->pausedReason);
  return out;
}

}  // namespace

nlohmann::json figuresJson(const FigureList& figures) {
  nlohmann::json out = nlohmann::json::object();
  for (const FigureList::Figure& f : figures.figures()) {
    nlohmann::json value = std::visit([](auto v) { return nlohmann::json(v); }, f.value);
    const std::string key(f.name->key);
    if (f.name->label.empty()) {
      out[key] = std::move(value);
    } else {
      out[key][f.labelValue] = std::move(value);
    }
  }
  return out;
}

HttpResponse healthResponse(const DaemonSnapshot& s) {
  std::string problems;
  auto describe = [&](const std::string& who,
                      const std::optional<Heartbeat::Clock::duration>& late) {
    if (late) {
      problems += fmt::format("{}: no sign of life, {:.1f} s past its deadline\n", who,
                              std::chrono::duration<double>(*late).count());
    }
  };
  describe("inference worker", s.workerOverdue);
  for (const CameraSnapshot& c : s.cameras) {
    describe(fmt::format("[cam={}] capture thread", c.name), c.captureOverdue);
  }
  if (!problems.empty()) return plainResponse(503, problems);
  return plainResponse(200, "ok\n");
}

HttpResponse readinessResponse(const DaemonSnapshot& s) {
  std::string body = s.detectorLoaded ? fmt::format("detector: ready ({} on {})\n", s.backend.name,
                                                    s.backend.device)
                                      : "detector: not loaded\n";
  bool ready = s.detectorLoaded;
  for (const std::string& name : s.enabledCameras) {
    auto it = std::find_if(s.cameras.begin(), s.cameras.end(),
                           [&](const CameraSnapshot& c) { return c.name == name; });
    if (it == s.cameras.end()) {
      ready = false;
      body += fmt::format("[cam={}] not started\n", name);
      continue;
    }
    body += fmt::format("[cam={}] started, {}\n", name, it->state);
  }
  return plainResponse(ready ? 200 : 503, body);
}

nlohmann::json statusJson(const DaemonSnapshot& s) {
  nlohmann::json cameras = nlohmann::json::array();
  for (const CameraSnapshot& c : s.cameras) cameras.push_back(cameraJson(c));
  nlohmann::json mqtt = nullptr;
  if (s.mqtt) {
    mqtt = {{"url", s.mqtt->url},
            {"connected", s.mqtt->connected},
            {"published", s.mqtt->published},
            {"dropped", s.mqtt->dropped},
            {"buffered", s.mqtt->buffered},
            {"last_error", nullIfEmpty(s.mqtt->lastError)}};
  }
  return {
      {"node", s.node},
      {"version", VIGIL_VERSION},
      {"uptime_seconds", s.uptimeSeconds},
      {"backend", s.backendJson},
      {"detector",
       {{"model", s.model},
        {"failures", s.detectionFailures},
        {"invalid_outputs", s.invalidOutputs}}},
      {"mqtt", mqtt},
      {"events_published", s.eventsPublished},
      {"history", historyJson(s.history)},
      {"cameras", cameras},
  };
}

StatusApi::StatusApi(Sources sources)
    : sources_(std::move(sources)), events_(sources_.history, sources_.events) {}

void StatusApi::addRoutes(HttpServer& server) {
  // Monitoring keeps working on a listener without logins; the rest shows or describes what the
  // cameras see (RouteAccess::kCameraView, the default).
  server.route(
      "GET", "/metrics", [this](const HttpRequest&) { return metricsText(); },
      RouteAccess::kMonitoring);
  server.route(
      "GET", "/healthz",
      [this](const HttpRequest&) { return healthResponse(sources_.heartbeats()); },
      RouteAccess::kMonitoring);
  server.route(
      "GET", "/readyz",
      [this](const HttpRequest&) { return readinessResponse(sources_.snapshot()); },
      RouteAccess::kMonitoring);
  server.route("GET", "/api/status", [this](const HttpRequest&) {
    return jsonResponse(statusJson(sources_.snapshot()));
  });
  server.routePrefix("GET", "/api/cameras/",
                     [this](const HttpRequest& request) { return cameraPicture(request.subpath); });
  // The query (camera, zone, since, until, limit, before: the history's paging) is ignored: the
  // in-memory list has only its last events, newest first, and the page filters them again.
  server.route("GET", "/api/events",
               [this](const HttpRequest& request) { return events_.list(request.query); });
  server.routePrefix("GET", "/api/events/",
                     [this](const HttpRequest& request) { return events_.event(request.subpath); });
  server.route("GET", "/", [](const HttpRequest&) {
    HttpResponse r;
    r.contentType = "text/html; charset=utf-8";
    r.body = statusPage();
    return r;
  });
}

HttpResponse StatusApi::metricsText() {
  const auto now = SteadyClock::now();
  if (metricsText_.empty() || now - metricsRenderedAt_ >= kMetricsMaxAge) {
    metricsText_ = sources_.metrics.render();
    metricsRenderedAt_ = now;
  }
  HttpResponse r;
  r.contentType = "text/plain; version=0.0.4; charset=utf-8";
  r.body = metricsText_;
  return r;
}

// A camera's live stream: each newly detected frame, annotated, as one part. At most the
// camera's detection rate (a part only when the frame changed, asked every kStreamPoll); a viewer
// slower than that gets the newest frame when it is ready for one.
class CameraStream : public HttpStream {
 public:
  CameraStream(StatusApi& api, std::string name) : api_(api), name_(std::move(name)) {}
  std::optional<std::string> next() override {
    auto picture = api_.encodedPicture(name_);
    if (!picture || picture->version == sent_) return std::nullopt;
    sent_ = picture->version;
    return fmt::format("--vigil-frame\r\nContent-Type: image/jpeg\r\nContent-Length: {}\r\n\r\n",
                       picture->jpeg->size()) +
           *picture->jpeg + "\r\n";
  }
  bool open() const override { return api_.sources_.results.view(name_) != nullptr; }

 private:
  StatusApi& api_;
  std::string name_;
  std::uint64_t sent_ = 0;
};

HttpResponse StatusApi::cameraPicture(const std::string& subpath) {
  constexpr std::string_view kLatest = "/latest.jpg";
  constexpr std::string_view kStream = "/stream.mjpeg";
  if (subpath.ends_with(kLatest))
    return latestJpeg(subpath.substr(0, subpath.size() - kLatest.size()));
  if (!subpath.ends_with(kStream)) {
    return plainResponse(404, "try /api/cameras/<name>/latest.jpg or /stream.mjpeg\n");
  }
  const std::string name = subpath.substr(0, subpath.size() - kStream.size());
  if (sources_.results.view(name) == nullptr) {
    return plainResponse(404, fmt::format("no camera named '{}'\n", name));
  }
  HttpResponse r;
  r.contentType = "multipart/x-mixed-replace; boundary=vigil-frame";
  r.headers.emplace_back("Cache-Control", "no-store");
  r.stream = std::make_shared<CameraStream>(*this, name);
  return r;
}

HttpResponse StatusApi::latestJpeg(const std::string& name) {
  auto picture = encodedPicture(name);
  if (!picture) return picture.error();
  HttpResponse r;
  r.contentType = "image/jpeg";
  r.body = *picture->jpeg;
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

tl::expected<StatusApi::EncodedPicture, HttpResponse> StatusApi::encodedPicture(
    const std::string& name) {
  const CameraView* view = sources_.results.view(name);
  if (view == nullptr) {
    return tl::unexpected(plainResponse(404, fmt::format("no camera named '{}'\n", name)));
  }
  if (!view->hasFrame) {
    return tl::unexpected(
        plainResponse(404, fmt::format("[cam={}] no frame detected yet\n", name)));
  }
  // Pictures of cameras a reload removed go with them.
  std::erase_if(encoded_,
                [this](const auto& kept) { return sources_.results.view(kept.first) == nullptr; });
  // Somebody looks: the picture stream (picture_source) decodes every picture for a while.
  if (view->pictures) view->pictures->want(SteadyClock::now());
  auto& [version, jpeg] = encoded_[name];
  if (version != view->frameVersion || jpeg.empty()) {
    // The full-size picture is decoded here, when somebody looks, once per frame.
    if (auto annotated = annotate(*view); !annotated) {
      return tl::unexpected(plainResponse(500, fmt::format("[cam={}] cannot decode the frame: {}\n",
                                                           name, annotated.error().message)));
    }
    std::vector<unsigned char> bytes;
    if (!cv::imencode(".jpg", annotated_, bytes, {cv::IMWRITE_JPEG_QUALITY, 80})) {
      return tl::unexpected(plainResponse(500, "cannot encode the frame\n"));
    }
    jpeg.assign(bytes.begin(), bytes.end());
    version = view->frameVersion;
  }
  return EncodedPicture{version, &jpeg};
}

Expected<void> StatusApi::annotate(const CameraView& view) {
  auto pixels = view.latest.bgr();
  if (!pixels) return tl::unexpected(pixels.error());
  pixels->copyTo(annotated_);
  const std::vector<std::string> classNames = sources_.classNames();
  // Boxes are in the detected frame's pixels: scaled onto a picture stream's larger pictures.
  const cv::Size pictureSize = annotated_.size();
  const cv::Point2d scale = scaleBetween(view.detectSize, pictureSize);
  if (view.tracks) {
    // Tracked persons with their ids (a briefly missed one where tracking predicts it), the
    // other classes as detected; labelled together so that their labels avoid each other.
    otherClasses_.clear();
    for (const Detection& d : view.latestDetections) {
      if (d.classId != 0) otherClasses_.push_back(d);
    }
    std::vector<LabelledBox> boxes =
        labelledDetections(scaledTo(otherClasses_, view.detectSize, pictureSize), classNames);
    for (const TrackedPerson& p : view.latestTracks) {
      boxes.push_back({scaledBox(p.box, scale.x, scale.y),
                       p.detected ? cv::Scalar(40, 40, 230) : cv::Scalar(40, 160, 230),
                       fmt::format("#{} {:.2f}{}", p.id, p.score, p.stationary ? " still" : "")});
    }
    drawLabelledBoxes(annotated_, boxes);
  } else {
    drawDetections(annotated_, scaledTo(view.latestDetections, view.detectSize, pictureSize),
                   classNames);
  }
  return {};
}

}  // namespace vigil
