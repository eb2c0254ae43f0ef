#include "daemon/commands/passwd_command.h"

#include <termios.h>
#include <unistd.h>

#include <iostream>
#include <optional>

#include "daemon/web/http_logins.h"

namespace vigil {

namespace {

// Echo off on standard input while a password is typed; restored when it goes.
class NoEcho {
 public:
  NoEcho() {
    if (::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios quiet = saved_;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    active_ = ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
  }
  ~NoEcho() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_);
  }
  NoEcho(const NoEcho&) = delete;
  NoEcho& operator=(const NoEcho&) = delete;

 private:
  termios saved_{};
  bool active_ = false;
};

std::optional<std::string> readLine(std::istream& in) {
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

std::optional<std::string> askTwice(std::istream& in, std::ostream& err) {
  NoEcho quiet;
  err << "Password: " << std::flush;
  auto first = readLine(in);
  err << "\nAgain: " << std::flush;
  auto second = first ? readLine(in) : std::nullopt;
  err << "\n";
  if (!first || !second) return std::nullopt;
  if (*first != *second) {
    err << "vigil passwd: the two passwords differ; nothing written\n";
    return std::nullopt;
  }
  return first;
}

}  // namespace

void addPasswdCommand(CLI::App& app, PasswdOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "passwd",
      "Print a basic_auth_users line (bcrypt) for the web configuration (http.web_config)");
  cmd->add_option("user", options.user, "User name")->capture_default_str();
  cmd->add_option("--cost", options.cost, "bcrypt cost, 10 to 31 (each step doubles the time)")
      ->check(CLI::Range(10, 31))
      ->capture_default_str();
}

int runPasswdCommand(const PasswdOptions& options, std::istream& in, std::ostream& out,
                     std::ostream& err) {
  if (options.user.empty() || options.user.find(':') != std::string::npos) {
    err << "vigil passwd: a user name is not empty and has no ':'\n";
    return 1;
  }
  const bool terminal = &in == &std::cin && ::isatty(STDIN_FILENO) == 1;
  std::optional<std::string> password = terminal ? askTwice(in, err) : readLine(in);
  if (!password) {
    if (!terminal) err << "vigil passwd: no password on standard input\n";
    return 1;
  }
  if (password->empty()) {
    err << "vigil passwd: an empty password is no password; nothing written\n";
    return 1;
  }
  auto hash = bcryptHash(*password, options.cost);
  if (!hash) {
    err << "vigil passwd: " << hash.error().message << "\n";
    return 1;
  }
  out << options.user << ": " << *hash << "\n";
  return 0;
}

}  // namespace vigil
