#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/process.h"

// `promtool check metrics` (Prometheus's own parser and linter) on an exposition text.
namespace vigil::testing {

inline constexpr const char* kPromtool = "/usr/bin/promtool";

// Adds a failure when promtool rejects `exposition` or is not installed; `dir` is scratch space.
inline void expectPromtoolAccepts(const std::string& exposition, const std::filesystem::path& dir) {
  if (access(kPromtool, X_OK) != 0) {
    ADD_FAILURE() << "promtool is not installed (apt-get install prometheus)";
    return;
  }
  std::ofstream(dir / "metrics.txt") << exposition;
  ChildProcess promtool(
      {"/bin/sh", "-c",
       std::string(kPromtool) + " check metrics < " + (dir / "metrics.txt").string()},
      dir / "promtool.log");
  auto rc = promtool.wait(std::chrono::seconds(30));
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 0) << promtool.log();
}

}  // namespace vigil::testing
