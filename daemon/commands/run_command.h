#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

#include "daemon/service/daemon.h"

namespace vigil {

void addRunCommand(CLI::App& app, RunOptions& options);

struct CheckConfigOptions {
  std::string file;
};

void addCheckConfigCommand(CLI::App& app, CheckConfigOptions& options);

// Validates a cameras.yaml (and that its model manifest loads) and prints a summary.
// Returns 0 when valid, 1 otherwise (the error on one line: file:line:col: key: reason).
int runCheckConfigCommand(const CheckConfigOptions& options, std::ostream& out);

}  // namespace vigil
