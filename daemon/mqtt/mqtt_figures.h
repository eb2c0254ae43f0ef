#pragma once

#include "daemon/base/figures.h"
#include "daemon/mqtt/mqtt_client.h"

namespace vigil {

// The MQTT client's figures, each named once for /metrics (vigil_mqtt_*): connected, messages
// buffered, published, dropped, reconnects. Any thread (the client's counters are atomic).
void reportMqttFigures(const MqttClient& client, FigureWriter& out);

}  // namespace vigil
