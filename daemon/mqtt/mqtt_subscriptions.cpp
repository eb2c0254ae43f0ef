#include "daemon/mqtt/mqtt_subscriptions.h"

#include <mqtt/async_client.h>

#include "daemon/base/log.h"
#include "daemon/mqtt/paho_options.h"

namespace vigil {

void MqttSubscriptions::add(std::string topicFilter) {
  std::lock_guard lock(mutex_);
  filters_.push_back(std::move(topicFilter));
}

void MqttSubscriptions::setHandler(std::function<void(std::string, std::string)> handler) {
  std::lock_guard lock(mutex_);
  handler_ = std::move(handler);
}

void MqttSubscriptions::install(mqtt::async_client& client) {
  std::function<void(std::string, std::string)> handler;
  {
    std::lock_guard lock(mutex_);
    handler = handler_;
  }
  if (handler) setPahoMessageHandler(client, std::move(handler));
}

bool MqttSubscriptions::renew(mqtt::async_client& client, int qos, std::chrono::milliseconds limit,
                              const Await& await) {
  std::vector<std::string> filters;
  {
    std::lock_guard lock(mutex_);
    filters = filters_;
  }
  for (const std::string& filter : filters) {
    try {
      if (!await(*client.subscribe(filter, qos), limit)) return false;
    } catch (const mqtt::exception& e) {
      logger("mqtt")->warn("cannot subscribe to {}: {}", filter, e.what());
    }
  }
  return true;
}

}  // namespace vigil
