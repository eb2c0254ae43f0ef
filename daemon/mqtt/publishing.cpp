#include "daemon/mqtt/publishing.h"

#include <unistd.h>

#include "daemon/base/log.h"

namespace vigil {

namespace {

// The status page as another machine (Home Assistant's) reaches it: none while HTTP listens on
// loopback only; the host name for a wildcard address.
std::string statusPageUrl(const HttpConfig& http) {
  if (!http.enabled) return "";
  const auto colon = http.listen.rfind(':');
  std::string host = http.listen.substr(0, colon);
  const std::string port = http.listen.substr(colon + 1);
  if (http.listensOnLoopback()) return "";
  if (http.listensOnEveryAddress()) {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "";
    host = name;
  }
  const bool tls = http.web && http.web->tlsContext;
  return (tls ? "https://" : "http://") + host + ":" + port + "/";
}

EventPublisherSettings publisherSettings(const MqttConfig& c, const std::string& node,
                                         const HttpConfig& http) {
  EventPublisherSettings s;
  s.topicPrefix = c.topicPrefix;
  s.haDiscovery = c.enabled && c.haDiscovery;
  s.haPrefix = c.haPrefix;
  s.snapshots = c.enabled && c.snapshots;
  s.instance = node;
  s.configurationUrl = statusPageUrl(http);
  s.version = VIGIL_VERSION;
  s.qos = c.qos;
  return s;
}

void wire(MqttClient& mqtt, EventPublisher& publisher, const MqttConfig& config,
          const PostToControl& post) {
  auto connects = std::make_shared<int>(0);  // touched on the control thread only
  mqtt.setOnConnected([post, connects, p = &publisher] {
    post([connects, p] {
      // The first connect sends what setCameras() queued; later ones announce again.
      if ((*connects)++ > 0) p->announce();
    });
  });
  if (!config.haDiscovery) return;
  const std::string haStatus = publisher.homeAssistantStatusTopic();
  mqtt.subscribe(haStatus);
  mqtt.setOnMessage([post, haStatus, p = &publisher](std::string topic, std::string payload) {
    if (topic != haStatus) return;
    post([p, payload = std::move(payload)] { p->onHomeAssistantStatus(payload); });
  });
}

}  // namespace

MqttSettings mqttSettings(const MqttConfig& c) {
  MqttSettings s;
  s.url = c.url;
  s.clientId = c.clientId;
  s.username = c.username;
  s.password = c.password;
  s.caFile = c.caFile;
  s.certFile = c.certFile;
  s.keyFile = c.keyFile;
  s.qos = c.qos;
  s.keepAlive = std::chrono::seconds(c.keepAlive);
  s.bufferMessages = c.bufferMessages;
  s.willTopic = statusTopic(c.topicPrefix);
  s.willPayload = "offline";
  return s;
}

Expected<Publishing> makePublishing(const Config& whole, PostToControl post,
                                    std::filesystem::path lineCountsFile) {
  const MqttConfig& config = whole.mqtt;
  auto log = logger("daemon");
  Publishing out;
  if (config.enabled) {
    MqttSettings settings = mqttSettings(config);
    if (auto ok = validateMqttSettings(settings); !ok) return tl::unexpected(ok.error());
    out.mqtt = std::make_unique<MqttClient>(std::move(settings));
    log->info("MQTT: {} as '{}'{}, topics under {}/, Home Assistant discovery {}", config.url,
              config.clientId, config.username.empty() ? "" : " user " + config.username,
              config.topicPrefix, config.haDiscovery ? "under " + config.haPrefix + "/" : "off");
  } else {
    log->info("MQTT: off (no mqtt section in {})", whole.file.string());
  }
  EventPublisherSettings settings = publisherSettings(config, whole.node, whole.http);
  settings.lineCountsFile = std::move(lineCountsFile);
  out.publisher = std::make_unique<EventPublisher>(std::move(settings), out.mqtt.get());
  if (out.mqtt) wire(*out.mqtt, *out.publisher, config, post);
  return out;
}

}  // namespace vigil
