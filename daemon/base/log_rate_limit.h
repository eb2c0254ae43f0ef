#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_map>

namespace vigil {

// Whether a log line about `key` (a client address, a camera and a kind of message) is due: at
// most once per `every` for each key. The table is bounded: at kMaxKeys it is emptied, which at
// worst lets one line per key through early. Not thread-safe: one owner thread.
class LogRateLimit {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxKeys = 4096;

  explicit LogRateLimit(Clock::duration every = std::chrono::minutes(1)) : every_(every) {}

  // True when nothing was logged about `key` within `every` of `now`; then remembers `now`.
  bool due(const std::string& key, Clock::time_point now) {
    auto found = last_.find(key);
    if (found != last_.end()) {
      if (now - found->second < every_) return false;
      found->second = now;
      return true;
    }
    if (last_.size() >= kMaxKeys) last_.clear();
    last_.emplace(key, now);
    return true;
  }

 private:
  Clock::duration every_;
  std::unordered_map<std::string, Clock::time_point> last_;
};

}  // namespace vigil
