#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/base/figure_series.h"
#include "daemon/base/metrics.h"
#include "daemon/events/event_publisher.h"
#include "daemon/events/result_path.h"
#include "daemon/metrics/power.h"
#include "daemon/settings/settings.h"

namespace vigil {

// The series the daemon registers and updates itself, every one declared in one table
// (kDaemonSeries in daemon_series.h: name, type, labels and help side by side), the figures the
// parts report themselves (the detector's, each camera's pipeline's, MQTT's, HTTP's: given as
// FigureSeries::Report by the daemon, which knows the parts), plus the process, heap and power
// series their components declare. The backend's series are BackendStatus's.
//
// Threads: the control (io_context) thread calls everything; the callbacks run in
// Registry::render(), which the daemon calls on that thread too.
class DaemonMetrics {
 public:
  // What the callback series read at render time, borrowed for this object's lifetime.
  struct Sources {
    // The detector's figures (InferenceCounters::report) while one is loaded, and what it
    // reports when it is (a reload replaces it; none before the first load).
    FigureSeries::Report worker;
    FigureSeries::Report workerNames;
    std::function<std::uint64_t()> inferences;  // successful detections so far, for the energy
    const EventPublisher& publisher;
    FigureSeries::Report mqtt;  // the MQTT client's figures (reportMqttFigures); empty without
    std::string node;           // Config::node, for vigil_node_info
  };

  // Registers every family of the table and the series that exist from the start.
  DaemonMetrics(Registry& registry, Sources sources);

  ResultPath::StageHistogramsFor stageHistograms();
  ResultPath::CameraHistograms cameraHistograms(const std::string& camera);

  // A part's figures without labels of their own, read until this object goes: the HTTP
  // server's (HttpServerCounters::report), the history's (EventHistory::report).
  void addFigures(FigureSeries::Report part);
  // What /metrics reads of a camera besides its view: its pipeline's figures (CameraChannel::
  // report, its picture stream's too) and the name of what decodes its pictures.
  struct CameraFigures {
    FigureSeries::Report report;
    std::function<std::string()> decoder;
  };
  // One camera's series (its facts, figures, presence and its zones', gating seconds, tracks);
  // removeCamera() takes them away, before `view` goes.
  void addCamera(const std::string& name, CameraFigures figures, const CameraView& view,
                 const CameraConfig& config);
  void removeCamera(const std::string& name);
  // vigil_camera_info follows the resolution each camera's frames arrive in (every presence
  // tick: a stream says its size only with its first frame, and may change it on reconnect).
  void updateCameraInfo();

  // Package joules per detected frame over the last window (every presence tick).
  void updateEnergyPerInference(std::chrono::steady_clock::time_point now);

 private:
  void addGlobalSeries();
  // vigil_line_crossings_total of the camera's lines, in and out.
  void addLineSeries(const std::string& camera, const CameraConfig& config);

  // What removeCamera() and updateCameraInfo() need of a camera added.
  struct CameraSeries {
    std::vector<std::string> zones;
    const CameraView* view = nullptr;
    LabelValues info;                       // vigil_camera_info's labels now
    LabelValues decoderInfo;                // vigil_camera_decoder_info's: camera, decoder
    std::vector<LabelValues> lineSeries;    // vigil_line_crossings_total's
    std::function<std::string()> decoder;   // CameraFigures::decoder
    std::unique_ptr<FigureSeries> figures;  // CameraFigures::report's
  };
  static constexpr std::size_t kInfoResolution = 2;  // its place in `info`
  static constexpr std::size_t kDecoderLabel = 1;    // its place in `decoderInfo`

  Registry& registry_;
  Sources sources_;
  std::shared_ptr<PowerMonitor> power_;
  std::optional<double> energyPerInference_;
  std::optional<double> energyBase_;
  std::map<std::string, CameraSeries> cameras_;
  std::unique_ptr<FigureSeries> worker_, mqtt_;
  std::vector<std::unique_ptr<FigureSeries>> parts_;  // addFigures
  std::uint64_t inferencesBase_ = 0;
  std::chrono::steady_clock::time_point energySince_{};
};

}  // namespace vigil
