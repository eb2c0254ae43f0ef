// The bound on FFmpeg's blocking calls (FfmpegDeadline), on its own: what its interrupt
// callback answers before and past the deadline and after a stop, and the reason a call that
// failed is given.
#include "daemon/capture/ffmpeg/ffmpeg_deadline.h"

#include <gtest/gtest.h>

extern "C" {
#include <libavutil/error.h>
}

#include <cerrno>

namespace vigil {
namespace {

using namespace std::chrono_literals;

TEST(FfmpegDeadlineTest, BeforeItsDeadlineACallGoesOnAndPastItItEnds) {
  FfmpegDeadline deadline;
  deadline.setFrom(1h);
  EXPECT_EQ(FfmpegDeadline::expired(&deadline), 0);
  deadline.setFrom(-1ms);  // a deadline already behind
  EXPECT_EQ(FfmpegDeadline::expired(&deadline), 1);
  deadline.setFrom(1h);  // set again before the next call
  EXPECT_EQ(FfmpegDeadline::expired(&deadline), 0);
  EXPECT_FALSE(deadline.interrupted());
}

TEST(FfmpegDeadlineTest, AStopEndsEveryCallWhateverTheDeadline) {
  FfmpegDeadline deadline;
  deadline.setFrom(1h);
  deadline.interrupt();
  EXPECT_TRUE(deadline.interrupted());
  EXPECT_EQ(FfmpegDeadline::expired(&deadline), 1);
  deadline.setFrom(1h);
  EXPECT_EQ(FfmpegDeadline::expired(&deadline), 1) << "from then on";
}

TEST(FfmpegDeadlineTest, AFailureSaysAStopTheDeadlineOrFfmpegsReason) {
  FfmpegDeadline deadline;
  deadline.setFrom(1h);
  const Error refused =
      deadline.failure("rtsp://cam/1", "cannot open", AVERROR(ECONNREFUSED), 5000ms).value();
  EXPECT_EQ(refused.code, ErrorCode::kUnavailable);
  EXPECT_EQ(refused.message, "rtsp://cam/1: cannot open: Connection refused");

  deadline.setFrom(-1ms);
  const Error late = deadline.failure("rtsp://cam/1", "cannot open", AVERROR_EXIT, 5000ms).value();
  EXPECT_EQ(late.code, ErrorCode::kUnavailable);
  EXPECT_EQ(late.message, "rtsp://cam/1: cannot open: nothing for 5000 ms");

  deadline.interrupt();
  const Error stopped =
      deadline.failure("rtsp://cam/1", "cannot open", AVERROR_EXIT, 5000ms).value();
  EXPECT_EQ(stopped.code, ErrorCode::kUnavailable);
  EXPECT_EQ(stopped.message, "rtsp://cam/1: interrupted (stop)");
}

}  // namespace
}  // namespace vigil
