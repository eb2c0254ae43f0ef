#pragma once

#include <filesystem>
#include <functional>
#include <memory>

#include "daemon/base/error.h"
#include "daemon/events/event_publisher.h"
#include "daemon/mqtt/mqtt_client.h"
#include "daemon/settings/settings.h"

namespace vigil {

// The daemon's publishing side: the MQTT client (with an mqtt section) and the event publisher
// that speaks through it. The publisher exists without MQTT too: it keeps the presence state
// that metrics and the status API read.
struct Publishing {
  std::unique_ptr<MqttClient> mqtt;  // nullptr without MQTT
  std::unique_ptr<EventPublisher>
      publisher;  // after mqtt: destroyed first, it publishes through it
};

// Runs a function on the control (io_context) thread.
using PostToControl = std::function<void(std::function<void()>)>;

// The client's settings from the configuration's mqtt section (its last will: the status
// topic, "offline").
MqttSettings mqttSettings(const MqttConfig& config);

// Validates the settings and makes both, wired: on every reconnect after the first the
// publisher announces again (a restarted broker may have lost the retained state), and Home
// Assistant's birth message makes it announce too. The client's callbacks come from its own
// threads and reach the publisher through `post`. The client is not started (MqttClient::start).
// From the configuration's mqtt section, its node (the Home Assistant device) and its http
// section (the status page's address for Home Assistant). `lineCountsFile`: where the line
// counts continue from (EventPublisherSettings::lineCountsFile).
Expected<Publishing> makePublishing(const Config& config, PostToControl post,
                                    std::filesystem::path lineCountsFile = {});

}  // namespace vigil
