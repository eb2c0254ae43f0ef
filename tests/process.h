#pragma once

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/wait.h"

namespace vigil::testing {

// A child process (the real vigil binary) whose stdout and stderr go to a file, for tests
// that send it signals and read what it logged. `inherit` gives it more descriptors: each pair
// is (the test's descriptor, the number it has in the child), e.g. Chromium's DevTools pipe.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& logFile,
               const std::vector<std::pair<int, int>>& inherit = {})
      : logFile_(logFile) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, logFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    for (const auto& [ours, theirs] : inherit) {
      posix_spawn_file_actions_adddup2(&actions, ours, theirs);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~ChildProcess() {
    if (pid_ > 0 && !status_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  void signal(int sig) const { kill(pid_, sig); }

  // The exit status, or nullopt if it is still running after `limit`. Blocks on a pidfd, so
  // it returns the moment the process exits, not at the next poll.
  std::optional<int> wait(std::chrono::milliseconds limit = kDeadline) {
    if (status_ || pid_ <= 0) return status_;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    for (;;) {
      if (reap()) break;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      if (pidfd >= 0) {
        pollfd p{pidfd, POLLIN, 0};
        poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    if (pidfd >= 0) close(pidfd);
    return status_;
  }

  // Sends `sig` and waits for the exit. `took` runs on the test's own clock from the moment
  // before the signal is sent to the moment the exit is seen: what a promise such as "SIGTERM
  // stops within 2 s" is about, measured without the test's polling in it.
  struct Stopped {
    std::optional<int> status;  // nullopt: still running after the limit
    std::chrono::steady_clock::duration took;
  };
  Stopped stop(int sig = SIGTERM, std::chrono::milliseconds limit = kDeadline) {
    const auto sent = std::chrono::steady_clock::now();
    signal(sig);
    auto status = wait(limit);
    return Stopped{status, std::chrono::steady_clock::now() - sent};
  }

  std::string log() const {
    std::ifstream in(logFile_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Waits until the log contains `text` (true) or `limit` passes (false).
  bool waitForLog(const std::string& text, std::chrono::milliseconds limit = kDeadline) const {
    return waitUntil([&] { return log().find(text) != std::string::npos; }, limit, 50ms);
  }

 private:
  bool reap() {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }

  std::filesystem::path logFile_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace vigil::testing
