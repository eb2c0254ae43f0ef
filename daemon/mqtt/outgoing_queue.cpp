#include "daemon/mqtt/outgoing_queue.h"

#include <mqtt/message.h>

#include <algorithm>

#include "daemon/base/log.h"

namespace vigil {

bool OutgoingQueue::push(Message message, bool retained) {
  auto unsent = entries_.begin() + static_cast<std::ptrdiff_t>(sent_);
  if (retained) {
    // A broker keeps only the newest retained payload per topic; so does the queue.
    auto same = std::find_if(unsent, entries_.end(), [&](const Entry& e) {
      return e.retained && e.message->get_topic() == message->get_topic();
    });
    if (same != entries_.end()) entries_.erase(same);
  }
  bool dropped = false;
  if (entries_.size() >= bound_) {
    unsent = entries_.begin() + static_cast<std::ptrdiff_t>(sent_);
    auto victim = std::find_if(unsent, entries_.end(), [](const Entry& e) { return !e.retained; });
    // Only retained messages (of distinct topics) left: drop the oldest of them.
    if (victim == entries_.end()) victim = unsent;
    if (!dropLogged_) {
      logger("mqtt")->warn("offline buffer full ({} messages); dropping the oldest", bound_);
      dropLogged_ = true;
    }
    dropped = true;
    if (victim == entries_.end()) {
      // Everything queued is already with Paho: the new message is the one to drop.
      return true;
    }
    entries_.erase(victim);
  }
  entries_.push_back(Entry{std::move(message), retained, false});
  return dropped;
}

std::vector<OutgoingQueue::Message> OutgoingQueue::takeWindow(std::size_t window) {
  std::vector<Message> batch;
  const std::size_t end = std::min(entries_.size(), window);
  for (std::size_t i = sent_; i < end; ++i) {
    if (!entries_[i].acked) batch.push_back(entries_[i].message);
  }
  sent_ = end;
  return batch;
}

std::uint64_t OutgoingQueue::acknowledge(const Message& message) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.message == message; });
  if (it != entries_.end()) it->acked = true;
  std::uint64_t delivered = 0;
  while (!entries_.empty() && entries_.front().acked) {
    entries_.pop_front();
    ++delivered;
    if (sent_ > 0) sent_--;
  }
  if (entries_.empty()) dropLogged_ = false;
  return delivered;
}

}  // namespace vigil
