#pragma once

#include <string>

namespace vigil {

// The latest reason an MQTT connection failed (for the status API), and its warning, logged once
// per change of reason: a broker down for an hour is one line, not one per retry.
// Threads: none of its own; the client's mutex guards it.
class ConnectionProblem {
 public:
  explicit ConnectionProblem(std::string url) : url_(std::move(url)) {}

  // A failure: kept, and logged (with the URL, never a password) when the reason changed.
  void report(const std::string& reason, bool retrying);
  // A failure kept without a log line (the caller logs it its own way).
  void keep(std::string reason) { last_ = std::move(reason); }
  // Connected: the next failure is logged whatever its reason.
  void connected() { lastLogged_.clear(); }
  const std::string& last() const { return last_; }

 private:
  std::string url_;
  std::string last_;
  std::string lastLogged_;  // the reason last logged
};

}  // namespace vigil
