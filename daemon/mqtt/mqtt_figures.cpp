#include "daemon/mqtt/mqtt_figures.h"

namespace vigil {

namespace {

constexpr FigureName kConnected{"connected", "vigil_mqtt_connected",
                                "1 while connected to the MQTT broker"};
constexpr FigureName kBuffered{"buffered", "vigil_mqtt_buffered_messages",
                               "Messages queued, not yet acknowledged by the broker"};
constexpr FigureName kPublished{"published", "vigil_mqtt_messages_published_total",
                                "Messages the broker acknowledged"};
constexpr FigureName kDropped{"dropped", "vigil_mqtt_messages_dropped_total",
                              "Messages lost to a full offline buffer (mqtt.buffer_messages)"};
constexpr FigureName kReconnects{"reconnects", "vigil_mqtt_reconnects_total",
                                 "Connection attempts after the first"};

}  // namespace

void reportMqttFigures(const MqttClient& client, FigureWriter& out) {
  out.level(kConnected, {}, client.connected() ? 1 : 0);
  out.level(kBuffered, {}, static_cast<double>(client.bufferedNow()));
  out.count(kPublished, {}, client.published());
  out.count(kDropped, {}, client.dropped());
  out.count(kReconnects, {}, client.reconnects());
}

}  // namespace vigil
