#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/mqtt/mqtt_settings.h"

namespace mqtt {
class async_client;
class connect_options;
class token;
}  // namespace mqtt

namespace vigil {

// mqtts:// (TLS) rather than mqtt://.
bool isMqttTls(std::string_view url);

// Paho's connect options for `settings`: MQTT 3.1.1, a clean session, the keep-alive, the
// login, the last will, TLS with the server's certificate verified for mqtts://, Paho's own
// reconnecting off (the client reconnects itself: Paho's do not report failures), at most
// `window` messages in flight. Throws mqtt::exception, as Paho does.
mqtt::connect_options pahoConnectOptions(const MqttSettings& settings,
                                         std::chrono::seconds connectTimeout, std::size_t window);

// A Paho client for `serverUri` (tcp:// or ssl://) with no persistence and no sending while
// disconnected (the client's own queue is the only buffer, so it alone is bounded, ordered and
// counted), calling `connectionLost` from Paho's thread. Throws mqtt::exception, as Paho does.
std::unique_ptr<mqtt::async_client> makePahoClient(
    const std::string& serverUri, const std::string& clientId,
    std::function<void(const std::string& cause)> connectionLost);

// Disconnects, waiting at most `wait`, even when not connected: it cancels a connect still in
// progress. Never throws.
void disconnectPaho(mqtt::async_client& client, std::chrono::milliseconds wait);

// Waits for `token` in 100 ms slices, until `limit` if given; false as soon as `stopping` says so
// (a stop disconnects, which cancels what the token waits for).
bool awaitPahoToken(mqtt::token& token, std::optional<std::chrono::milliseconds> limit,
                    const std::function<bool()>& stopping);

// Has Paho call `handler` with each message's topic and payload, from Paho's thread; what the
// handler throws is logged, never passed back into Paho.
void setPahoMessageHandler(mqtt::async_client& client,
                           std::function<void(std::string topic, std::string payload)> handler);

}  // namespace vigil
