#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iosfwd>

namespace vigil {

struct CamerasCommandOptions {
  bool json = false;
  // Not a command-line option: tests point it at a directory of their own.
  std::filesystem::path devDir = "/dev";
};

void addCamerasCommand(CLI::App& app, CamerasCommandOptions& options);

// Lists the V4L2 devices with their formats, sizes and frame rates to `out`: readable text, or
// a JSON array with --json. Returns 0, also when there is no camera (that is an answer, not a
// failure).
int runCamerasCommand(const CamerasCommandOptions& options, std::ostream& out);

}  // namespace vigil
