#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "daemon/commands/track_commands.h"

namespace vigil::testing {

// `vigil eval-tracks ... --json` in-process: the scores of its last line.
inline nlohmann::json evalTracksJson(EvalTracksOptions options) {
  options.json = true;
  std::ostringstream out;
  EXPECT_EQ(runEvalTracksCommand(options, out), 0);
  std::string last;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) last = line;
  return nlohmann::json::parse(last);
}

}  // namespace vigil::testing
