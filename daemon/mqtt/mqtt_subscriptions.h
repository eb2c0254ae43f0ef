#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mqtt {
class async_client;
class token;
}  // namespace mqtt

namespace vigil {

// What an MQTT client subscribes to, and who hears the messages. Sessions are clean, so the
// broker forgets the subscriptions with each connection: renew() subscribes again after every
// connect. The handler is called from Paho's thread.
// Threads: add() and setHandler() from the owner before the client starts; install() and renew()
// from the client's; guarded by its own mutex.
class MqttSubscriptions {
 public:
  // Waits for a token, until the limit if given; false when the client stops meanwhile.
  using Await = std::function<bool(mqtt::token&, std::optional<std::chrono::milliseconds>)>;

  void add(std::string topicFilter);
  void setHandler(std::function<void(std::string topic, std::string payload)> handler);
  // Has Paho call the handler (if one is set) for every message; once, before any connect.
  void install(mqtt::async_client& client);
  // Subscribes to every filter at `qos`, each SUBACK awaited at most `limit` (a broker that
  // never answers holds a connect that long, a stop not at all); a filter the broker refuses is
  // logged and left. False when a stop cut it short.
  bool renew(mqtt::async_client& client, int qos, std::chrono::milliseconds limit,
             const Await& await);

 private:
  std::mutex mutex_;
  std::vector<std::string> filters_;
  std::function<void(std::string, std::string)> handler_;
};

}  // namespace vigil
