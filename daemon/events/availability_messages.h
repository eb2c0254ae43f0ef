#pragma once

#include <map>
#include <string>
#include <string_view>

#include "daemon/events/message_sink.h"

namespace vigil {

// Who is there (EventPublisher's status topics, all retained): <prefix>/status online (offline
// is the client's will and stop), the daemon's status attributes at <prefix>/status/attributes,
// and each camera's <prefix>/<camera>/status, online while it delivers frames. What is set
// before the publisher announces is kept and published by announce(). Topics under
// `topicPrefix`; messages go to `sink` (nullptr: none).
// Threads: the control thread.
class AvailabilityMessages {
 public:
  AvailabilityMessages(std::string topicPrefix, MessageSink* sink);

  // Status online and the attributes, once set.
  void announce();
  // The camera's availability, once reported.
  void announceCamera(const std::string& camera);
  // Kept, and published at once when `announced` (and changed).
  void setAttributes(std::string json, bool announced);
  void setCameraAvailable(const std::string& camera, bool available, bool announced);
  // A removed camera's availability is forgotten: reported again, it is new.
  void forget(std::string_view camera);

  std::string statusTopic() const;

 private:
  void send(std::string topic, std::string payload);

  std::string prefix_;
  MessageSink* sink_;
  std::string attributes_;                              // empty: none set yet
  std::map<std::string, bool, std::less<>> available_;  // cameras reported so far
};

}  // namespace vigil
