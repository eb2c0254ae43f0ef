#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

namespace vigil {

struct PasswdOptions {
  std::string user = "vigil";
  int cost = 10;
};

void addPasswdCommand(CLI::App& app, PasswdOptions& options);

// Prints one `basic_auth_users` line, "user: $2b$10$...", for the web configuration: the password
// is read from the terminal without echo (asked twice), or as one line from standard input when
// that is not a terminal (`printf '%s\n' "$pw" | vigil passwd prometheus`). Prompts and errors go
// to `err`. Exit 0, or 1 when the passwords differ, are empty or cannot be hashed.
int runPasswdCommand(const PasswdOptions& options, std::istream& in, std::ostream& out,
                     std::ostream& err);

}  // namespace vigil
