#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace vigil {

// A problem of a YAML file, as "cameras.yaml:12:5: cameras[1].fps: must be between 1 and 60,
// got 0", and where it is (1-based line and column; 0 when the message names no position).
// Exceptions are the control-plane mechanism here (only used at start-up and reload); callers
// convert YamlError into an Error at their boundary.
class YamlError : public std::runtime_error {
 public:
  explicit YamlError(const std::string& message, int line = 0, int column = 0)
      : std::runtime_error(message), line_(line), column_(column) {}

  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_;
  int column_;
};

// The problems of one file, gathered so that one run names them all instead of the first
// (`vigil check-config`, `vigil run`'s start, a reload). A part whose error makes the checks
// after it meaningless stops there (its reader throws, collect() records it); the parts after
// it go on.
// Threads: one at a time (the thread reading the file).
class YamlErrors {
 public:
  void add(YamlError error) { errors_.push_back(std::move(error)); }
  // Runs `read`; a YamlError it throws joins the list and false is returned.
  bool collect(const std::function<void()>& read);

  bool empty() const { return errors_.empty(); }
  std::size_t size() const { return errors_.size(); }
  // One error as it is; several as "N errors:" and then one a line, in file order (line, then
  // column; those without a position first, in the order they came).
  std::string message() const;
  // Throws YamlError(message()) when there is one.
  void throwIfAny() const;

 private:
  std::vector<YamlError> errors_;
};

}  // namespace vigil
