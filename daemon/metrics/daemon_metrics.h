#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/base/figure_series.h"
#include "daemon/base/metrics.h"
#include "daemon/capture/frame/frame.h"
#include "daemon/events/event_publisher.h"
#include "daemon/events/result_path.h"
#include "daemon/metrics/power.h"
#include "daemon/mqtt/mqtt_client.h"
#include "daemon/pipeline/inference_worker.h"
#include "daemon/settings/settings.h"
#include "daemon/web/http_server.h"

namespace vigil {

// The series the daemon registers and updates itself, every one declared in one table
// (kDaemonSeries in daemon_series.h: name, type, labels and help side by side), plus the
// process, heap and power series their components declare. The backend's series are
// BackendStatus's.
//
// Threads: the control (io_context) thread calls everything; the callbacks run in
// Registry::render(), which the daemon calls on that thread too.
class DaemonMetrics {
 public:
  // What the callback series read at render time, borrowed for this object's lifetime.
  struct Sources {
    const std::unique_ptr<InferenceWorker>& worker;  // the daemon's slot: a reload refills it
    const EventPublisher& publisher;
    const MqttClient* mqtt;  // nullptr without MQTT
    std::string node;        // Config::node, for vigil_node_info
  };

  // Registers every family of the table and the series that exist from the start.
  DaemonMetrics(Registry& registry, Sources sources);

  ResultPath::StageHistogramsFor stageHistograms();
  ResultPath::CameraHistograms cameraHistograms(const std::string& camera);

  // The HTTP server's counters, which outlive this object's use of them.
  void addHttp(const HttpServerCounters& counters);
  // One camera's series (its facts, counters, presence and its zones', gating, tracks);
  // removeCamera() takes them away, before `view` goes.
  void addCamera(const std::string& name, const std::shared_ptr<CameraChannel>& channel,
                 const CameraView& view, const CameraConfig& config);
  void removeCamera(const std::string& name);
  // vigil_camera_info follows the resolution each camera's frames arrive in (every presence
  // tick: a stream says its size only with its first frame, and may change it on reconnect).
  void updateCameraInfo();

  // Package joules per detected frame over the last window (every presence tick).
  void updateEnergyPerInference(SteadyClock::time_point now);

 private:
  void addGlobalSeries();
  void addMqttSeries();
  // vigil_line_crossings_total of the camera's lines, in and out.
  void addLineSeries(const std::string& camera, const CameraConfig& config);

  // What removeCamera() and updateCameraInfo() need of a camera added.
  struct CameraSeries {
    std::vector<std::string> zones;
    const CameraView* view = nullptr;
    LabelValues info;                      // vigil_camera_info's labels now
    LabelValues decoder;                   // vigil_camera_decoder_info's: camera, decoder
    std::vector<LabelValues> lineSeries;   // vigil_line_crossings_total's
    std::unique_ptr<FigureSeries> frames;  // its counters' figures (CameraCounters::report)
  };
  static constexpr std::size_t kInfoResolution = 2;  // its place in `info`
  static constexpr std::size_t kDecoderLabel = 1;    // its place in `decoder`

  Registry& registry_;
  Sources sources_;
  std::shared_ptr<PowerMonitor> power_;
  std::optional<double> energyPerInference_;
  std::optional<double> energyBase_;
  std::map<std::string, CameraSeries> cameras_;
  std::uint64_t inferencesBase_ = 0;
  SteadyClock::time_point energySince_{};
};

}  // namespace vigil
