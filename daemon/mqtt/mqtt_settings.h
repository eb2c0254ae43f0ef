#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "daemon/base/error.h"

namespace vigil {

// What the MQTT client is told: where, who, how securely, how much it buffers and how it retries.
struct MqttSettings {
  std::string url = "mqtt://127.0.0.1:1883";  // mqtt:// (plain TCP) or mqtts:// (TLS)
  std::string clientId = "vigil";
  std::string username;
  std::string password;  // already read from its file by the caller; never logged
  std::string caFile;    // mqtts: trust store (PEM); empty = the system's default paths
  std::string certFile;  // mqtts: optional client certificate (PEM)
  std::string keyFile;   // mqtts: its private key (PEM); empty = inside certFile
  int qos = 1;
  std::chrono::seconds keepAlive{30};
  std::size_t bufferMessages = 1000;  // bound of the offline buffer, in messages
  std::string willTopic;              // empty = no last will
  std::string willPayload = "offline";
  std::chrono::milliseconds minRetry{500};
  std::chrono::milliseconds maxRetry{30000};
};

// Checks the URL scheme (mqtt:// or mqtts://) and its host and port, the QoS, the bounds, and
// that the TLS files exist (and are given only with mqtts://). Errors name the key (mqtt.url).
Expected<void> validateMqttSettings(const MqttSettings& settings);

}  // namespace vigil
