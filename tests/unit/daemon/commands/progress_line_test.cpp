#include "daemon/commands/progress_line.h"

#include <gtest/gtest.h>

#include <sstream>

namespace vigil {
namespace {

using namespace std::chrono_literals;

TEST(ProgressLineTest, ALogGetsALineEveryTenSecondsAndNothingForAShortRun) {
  std::ostringstream err;
  const ProgressLine::Clock::time_point t0{};
  {
    ProgressLine progress("track", "frames", 1394, err, /*terminal=*/false, t0);
    progress.update(100, t0 + 5s);
    EXPECT_EQ(err.str(), "") << "nothing before the first period";
    progress.update(400, t0 + 10s);
    progress.update(401, t0 + 11s);
    progress.update(900, t0 + 20s);
  }
  EXPECT_EQ(err.str(),
            "track: 400 of 1394 frames (28 %), 10 s\ntrack: 900 of 1394 frames (64 %), 20 s\n");
}

TEST(ProgressLineTest, ATerminalLineIsRewrittenAndClearedAtTheEnd) {
  std::ostringstream err;
  const ProgressLine::Clock::time_point t0{};
  {
    ProgressLine progress("detect", "file(s)", 0, err, /*terminal=*/true, t0);
    progress.update(3, t0 + 600ms);
    progress.update(4, t0 + 700ms);
    progress.update(9, t0 + 1200ms);
  }
  EXPECT_EQ(err.str(), "\r\033[Kdetect: 3 file(s), 1 s\r\033[Kdetect: 9 file(s), 1 s\r\033[K");
}

}  // namespace
}  // namespace vigil
