#pragma once

#include "daemon/capture/camera/camera.h"
#include "daemon/events/event_publisher.h"
#include "daemon/events/result_path.h"
#include "daemon/history/event_history.h"
#include "daemon/mqtt/mqtt_client.h"
#include "daemon/pipeline/backend_status.h"
#include "daemon/pipeline/camera_set.h"
#include "daemon/pipeline/inference_worker.h"
#include "daemon/settings/settings.h"
#include "daemon/status/status_snapshot.h"

namespace vigil {

// The daemon's state read from its parts into the plain DaemonSnapshot the status API, the
// page and the run summary render: the wiring floor knows every part, so the views need not.
// What a snapshot is taken from: the daemon's parts, borrowed for the call.
struct SnapshotSources {
  const CameraSet& cameras;
  const ResultPath& results;
  const EventPublisher& publisher;
  const InferenceWorker* worker;  // nullptr before the detector loaded
  const MqttClient* mqtt;         // nullptr without MQTT
  const EventHistory* history;    // nullptr without a history
  const BackendStatus& backend;
  const Config& config;
  SteadyClock::time_point startedAt;
};

// On the control thread, which owns every source.
DaemonSnapshot takeSnapshot(const SnapshotSources& sources);
// Only what liveness reads (the worker's and each capture thread's heartbeat, with the
// cameras' names): the systemd watchdog and /healthz ask often and need nothing else.
DaemonSnapshot takeHeartbeats(const SnapshotSources& sources);

}  // namespace vigil
