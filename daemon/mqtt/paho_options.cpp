#include "daemon/mqtt/paho_options.h"

#include <mqtt/async_client.h>

#include "daemon/base/log.h"

namespace vigil {

bool isMqttTls(std::string_view url) { return url.starts_with("mqtts://"); }

mqtt::connect_options pahoConnectOptions(const MqttSettings& settings,
                                         std::chrono::seconds connectTimeout, std::size_t window) {
  mqtt::connect_options_builder builder;
  builder.mqtt_version(MQTTVERSION_3_1_1)
      .clean_session(true)
      .keep_alive_interval(settings.keepAlive)
      .connect_timeout(connectTimeout)
      .automatic_reconnect(false)  // reconnects here: Paho's do not report failures
      .max_inflight(static_cast<int>(window));
  if (!settings.username.empty()) builder.user_name(settings.username);
  if (!settings.password.empty()) builder.password(settings.password);
  if (!settings.willTopic.empty()) {
    builder.will(mqtt::will_options(settings.willTopic, settings.willPayload, settings.qos, true));
  }
  if (isMqttTls(settings.url)) {
    mqtt::ssl_options_builder ssl;
    // No ssl error_handler: Paho C++ 1.2 keeps a pointer to the ssl_options copy that
    // connect() takes by value, and calls the handler through it after it is gone.
    ssl.enable_server_cert_auth(true).verify(true);
    if (!settings.caFile.empty()) ssl.trust_store(settings.caFile);
    if (!settings.certFile.empty()) ssl.key_store(settings.certFile);
    if (!settings.keyFile.empty()) ssl.private_key(settings.keyFile);
    builder.ssl(ssl.finalize());
  }
  return builder.finalize();
}

std::unique_ptr<mqtt::async_client> makePahoClient(
    const std::string& serverUri, const std::string& clientId,
    std::function<void(const std::string& cause)> connectionLost) {
  mqtt::create_options createOptions(MQTTVERSION_3_1_1);
  createOptions.set_send_while_disconnected(false);
  auto client = std::make_unique<mqtt::async_client>(serverUri, clientId, createOptions, nullptr);
  client->set_connection_lost_handler(std::move(connectionLost));
  return client;
}

void disconnectPaho(mqtt::async_client& client, std::chrono::milliseconds wait) {
  try {
    client.disconnect(std::chrono::milliseconds(250))->wait_for(wait);
  } catch (const mqtt::exception&) {
    // Not connected: nothing to close.
  }
}

bool awaitPahoToken(mqtt::token& token, std::optional<std::chrono::milliseconds> limit,
                    const std::function<bool()>& stopping) {
  const auto start = std::chrono::steady_clock::now();
  while (!token.wait_for(std::chrono::milliseconds(100)) &&
         (!limit || std::chrono::steady_clock::now() - start < *limit)) {
    if (stopping()) return false;
  }
  return true;
}

void setPahoMessageHandler(mqtt::async_client& client,
                           std::function<void(std::string topic, std::string payload)> handler) {
  client.set_message_callback([handler = std::move(handler)](mqtt::const_message_ptr message) {
    if (!message) return;
    try {
      handler(message->get_topic(), message->to_string());
    } catch (const std::exception& e) {
      logger("mqtt")->error("handling a message on {} failed: {}", message->get_topic(), e.what());
    }
  });
}

}  // namespace vigil
