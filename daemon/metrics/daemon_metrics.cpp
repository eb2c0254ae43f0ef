#include "daemon/metrics/daemon_metrics.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <vector>

#include "daemon/base/figure_series.h"
#include "daemon/base/log.h"
#include "daemon/metrics/daemon_series.h"
#include "daemon/metrics/heap.h"

namespace vigil {

namespace {

using namespace daemon_series;  // NOLINT(google-build-using-namespace): this file is its user

const SeriesSpec& spec(Series s) { return kDaemonSeries[static_cast<std::size_t>(s)]; }

std::vector<std::string> labelNames(const SeriesSpec& s) {
  std::vector<std::string> out;
  for (const char* l : s.labels) {
    if (l != nullptr) out.emplace_back(l);
  }
  return out;
}

// The family of a callback series (registered by the constructor; looked up again here).
CallbackFamily& callbacks(Registry& registry, Series s) {
  const SeriesSpec& d = spec(s);
  return d.type == kCounter ? registry.callbackCounter(d.name, d.help, labelNames(d))
                            : registry.callbackGauge(d.name, d.help, labelNames(d));
}

// An info series (value 1) with these labels; relabelInfo() changes one of them, replacing the
// series, when `value` differs.
void addInfo(Registry& registry, Series series, const LabelValues& labels) {
  callbacks(registry, series).add(labels, []() -> std::optional<double> { return 1; });
}

void relabelInfo(Registry& registry, Series series, LabelValues& labels, std::size_t at,
                 std::string value) {
  if (labels[at] == value) return;
  callbacks(registry, series).remove(labels);
  labels[at] = std::move(value);
  addInfo(registry, series, labels);
}

// Track durations: a passer-by's seconds to a visitor's hour.
constexpr std::array<double, 10> kTrackDurationBuckets{1, 2, 5, 10, 30, 60, 120, 300, 900, 3600};

HistogramFamily& histograms(Registry& registry, Series s) {
  const SeriesSpec& d = spec(s);
  if (s == Series::kTrackDuration) {
    return registry.histogram(d.name, d.help, labelNames(d), kTrackDurationBuckets);
  }
  return registry.histogram(d.name, d.help, labelNames(d));
}

// vigil_person_present and vigil_persons of a camera (`zone` empty), or their vigil_zone_
// twins of one of its zones: both read the publisher's presence state.
void addPresenceSeries(Registry& registry, const EventPublisher& publisher,
                       const std::string& camera, const std::string& zone) {
  const bool wholeCamera = zone.empty();
  const LabelValues labels = wholeCamera ? LabelValues{camera} : LabelValues{camera, zone};
  callbacks(registry, wholeCamera ? Series::kPersonPresent : Series::kZonePersonPresent)
      .add(labels, [&publisher, camera, zone]() -> std::optional<double> {
        auto state = publisher.state(camera, zone);
        return state ? std::optional<double>(state->present ? 1 : 0) : std::nullopt;
      });
  callbacks(registry, wholeCamera ? Series::kPersons : Series::kZonePersons)
      .add(labels, [&publisher, camera, zone]() -> std::optional<double> {
        auto state = publisher.state(camera, zone);
        return state ? std::optional<double>(state->count) : std::nullopt;
      });
}

constexpr auto kEnergyWindow = std::chrono::seconds(2);

std::optional<double> count(std::uint64_t v) { return static_cast<double>(v); }

}  // namespace

DaemonMetrics::DaemonMetrics(Registry& registry, Sources sources)
    : registry_(registry), sources_(sources) {
  for (const SeriesSpec& s : kDaemonSeries) {
    switch (s.type) {
      case kInfo:
        registry_.info(s.name, s.help,
                       {{s.labels[0], s.id == Series::kNodeInfo ? sources_.node : VIGIL_VERSION}});
        break;
      case kHistogram:
        histograms(registry_, s.id);
        break;
      case kCounter:
      case kGauge:
        callbacks(registry_, s.id);
        break;
    }
  }
  registerProcessMetrics(registry_);
  registerHeapMetrics(registry_);
  power_ = std::make_shared<PowerMonitor>();
  registerPowerMetrics(registry_, power_);
  addGlobalSeries();
  if (sources_.mqtt) {
    mqtt_ = std::make_unique<FigureSeries>(registry_, std::vector<std::string>{}, LabelValues{},
                                           sources_.mqtt);
  }
}

void DaemonMetrics::addGlobalSeries() {
  callbacks(registry_, Series::kEnergyPerInference).add({}, [this]() {
    return energyPerInference_;
  });
  worker_ = std::make_unique<FigureSeries>(registry_, std::vector<std::string>{}, LabelValues{},
                                           sources_.worker, sources_.workerNames);
  const EventPublisher& publisher = sources_.publisher;
  callbacks(registry_, Series::kEventsPublished).add({}, [&publisher]() {
    return count(publisher.eventsPublished());
  });
  callbacks(registry_, Series::kZoneEventsPublished).add({}, [&publisher]() {
    return count(publisher.zoneEventsPublished());
  });
}

ResultPath::StageHistogramsFor DaemonMetrics::stageHistograms() {
  HistogramFamily* stages = &histograms(registry_, Series::kStageDuration);
  return [stages](const std::string& backend) -> ResultPath::StageHistograms {
    return {stages->labels({"capture_to_start", backend}), stages->labels({"preprocess", backend}),
            stages->labels({"inference", backend}), stages->labels({"postprocess", backend}),
            stages->labels({"publish", backend})};
  };
}

ResultPath::CameraHistograms DaemonMetrics::cameraHistograms(const std::string& camera) {
  return {histograms(registry_, Series::kCaptureToPublish).labels({camera}),
          histograms(registry_, Series::kTrackDuration).labels({camera})};
}

void DaemonMetrics::addFigures(FigureSeries::Report part) {
  parts_.push_back(std::make_unique<FigureSeries>(registry_, std::vector<std::string>{},
                                                  LabelValues{}, std::move(part)));
}

void DaemonMetrics::addCamera(const std::string& name, CameraFigures figures,
                              const CameraView& view, const CameraConfig& config) {
  CameraSeries& added = cameras_[name];
  added.zones = zoneNames(config);
  added.view = &view;
  added.decoder = std::move(figures.decoder);
  added.figures.reset();  // a camera added again: its old series go before the new ones come
  added.figures = std::make_unique<FigureSeries>(registry_, std::vector<std::string>{"camera"},
                                                 LabelValues{name}, std::move(figures.report));
  addPresenceSeries(registry_, sources_.publisher, name, "");
  for (const std::string& zone : added.zones) {
    addPresenceSeries(registry_, sources_.publisher, name, zone);
  }
  added.info = {name, std::string(sourceKindName(config.kind)), "",
                config.kind != SourceKind::kV4l2 ? ""
                : config.fpsSet                  ? fmt::format("{}", config.fps)
                                                 : "auto",
                fmt::format("{}", config.detectFps)};
  addInfo(registry_, Series::kCameraInfo, added.info);
  added.decoderInfo = {name, ""};
  addInfo(registry_, Series::kCameraDecoder, added.decoderInfo);
  callbacks(registry_, Series::kGatedSeconds).add({name}, [&view]() -> std::optional<double> {
    return view.gatedSeconds;
  });
  callbacks(registry_, Series::kTracksActive).add({name}, [&view]() -> std::optional<double> {
    if (!view.tracks) return std::nullopt;
    return static_cast<double>(view.tracks->persons().size());
  });
  callbacks(registry_, Series::kTracksStarted).add({name}, [&view]() -> std::optional<double> {
    if (!view.tracks) return std::nullopt;
    return count(view.tracks->personsStarted());
  });
  addLineSeries(name, config);
}

void DaemonMetrics::addLineSeries(const std::string& camera, const CameraConfig& config) {
  const LineCounts& counts = sources_.publisher.lineCounts();
  for (const LineSpec& line : config.lines) {
    for (CrossingDirection d : {CrossingDirection::kIn, CrossingDirection::kOut}) {
      LabelValues labels{camera, line.name, std::string(crossingDirectionName(d))};
      callbacks(registry_, Series::kLineCrossings)
          .add(labels, [&counts, camera, name = line.name, d]() -> std::optional<double> {
            auto n = counts.count(camera, name, d);
            return n ? count(*n) : std::nullopt;
          });
      cameras_[camera].lineSeries.push_back(std::move(labels));
    }
  }
}

void DaemonMetrics::removeCamera(const std::string& name) {
  for (Series s : {Series::kPersonPresent, Series::kPersons, Series::kGatedSeconds,
                   Series::kTracksActive, Series::kTracksStarted}) {
    callbacks(registry_, s).remove({name});
  }
  if (auto it = cameras_.find(name); it != cameras_.end()) {
    for (const std::string& zone : it->second.zones) {
      callbacks(registry_, Series::kZonePersonPresent).remove({name, zone});
      callbacks(registry_, Series::kZonePersons).remove({name, zone});
    }
    for (const LabelValues& labels : it->second.lineSeries) {
      callbacks(registry_, Series::kLineCrossings).remove(labels);
    }
    callbacks(registry_, Series::kCameraInfo).remove(it->second.info);
    callbacks(registry_, Series::kCameraDecoder).remove(it->second.decoderInfo);
    cameras_.erase(it);
  }
  histograms(registry_, Series::kCaptureToPublish).remove({name});
  histograms(registry_, Series::kTrackDuration).remove({name});
}

void DaemonMetrics::updateCameraInfo() {
  for (auto& [name, camera] : cameras_) {
    const CameraView& view = *camera.view;
    relabelInfo(registry_, Series::kCameraInfo, camera.info, kInfoResolution,
                view.hasFrame
                    ? fmt::format("{}x{}", view.latest.size().width, view.latest.size().height)
                    : "");
    relabelInfo(registry_, Series::kCameraDecoder, camera.decoderInfo, kDecoderLabel,
                camera.decoder());
  }
}

// The whole package (every process on the box), so an upper bound on what one inference costs;
// absent without RAPL.
void DaemonMetrics::updateEnergyPerInference(std::chrono::steady_clock::time_point now) {
  if (now - energySince_ < kEnergyWindow) return;
  auto joules = power_->packageEnergyJoules();
  std::uint64_t frames = sources_.inferences();
  if (joules && energyBase_ && frames > inferencesBase_) {
    energyPerInference_ = (*joules - *energyBase_) / static_cast<double>(frames - inferencesBase_);
  } else if (!joules) {
    energyPerInference_.reset();
  }
  energyBase_ = joules;
  inferencesBase_ = frames;
  energySince_ = now;
}

}  // namespace vigil
