#pragma once

#include <string>

namespace vigil {

// Where published messages go: the MQTT client in the daemon, a recorder in tests.
// publish() must not block on the network; the caller's thread owns nothing of the sink.
class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void publish(std::string topic, std::string payload, bool retained) = 0;
};

}  // namespace vigil
