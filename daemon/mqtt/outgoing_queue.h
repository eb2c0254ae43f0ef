#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace mqtt {
class message;
}  // namespace mqtt

namespace vigil {

// The MQTT client's one buffer: every message in the order it was published, until Paho reports
// it delivered. At most `bound` messages: when full, the oldest non-retained message not yet
// handed to Paho is dropped (logged once until the queue drains); a retained message replaces a
// queued, not yet sent retained message on the same topic (a broker keeps only the newest
// anyway; not a drop). The front `window` messages are handed to Paho; after a lost connection
// they are handed again from the front, in order.
// Threads: none of its own; the client's mutex guards it.
class OutgoingQueue {
 public:
  using Message = std::shared_ptr<const mqtt::message>;

  explicit OutgoingQueue(std::size_t bound) : bound_(bound) {}

  // Queues `message`; true when a message was dropped for it (it may be the new one, when every
  // queued message is already with Paho).
  bool push(Message message, bool retained);
  // Messages not yet handed to Paho among the first `window`.
  bool hasUnsent(std::size_t window) const { return sent_ < entries_.size() && sent_ < window; }
  // Those messages, now counted as handed over (acknowledged ones left out).
  std::vector<Message> takeWindow(std::size_t window);
  // A lost connection or a failed hand-over: everything unacknowledged goes again.
  void resendFromFront() { sent_ = 0; }
  // Paho delivered `message`: the delivered front of the queue leaves it; returns how many left.
  std::uint64_t acknowledge(const Message& message);
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    Message message;
    bool retained = false;
    bool acked = false;
  };

  std::size_t bound_;
  std::deque<Entry> entries_;
  std::size_t sent_ = 0;     // entries_[0, sent_) were handed to Paho on the current connection
  bool dropLogged_ = false;  // the "buffer full" warning, once until the queue drains
};

}  // namespace vigil
