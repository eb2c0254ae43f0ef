// What a capture thread counts and says about its source, on its own: lost frames and the
// thread's CPU added as they grow, runs of corrupt frames counted and warned about when they
// start (a second run within the minute quietly), pictures that all decode corrupt as a stall,
// and the decoder's name with why hardware decoding is not used, warned once per reason.
#include "daemon/capture/camera/stream_health.h"

#include <gtest/gtest.h>

#include <string>

#include "daemon/capture/picture/thread_cpu.h"
#include "tests/log_capture.h"
#include "tests/occurrences.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

// A source whose lost-frame counter the test sets.
class LosingSource : public FrameSource {
 public:
  Expected<SourceInfo> open() override { return SourceInfo{}; }
  Expected<void> read(Frame&, std::chrono::milliseconds) override {
    return makeError(ErrorCode::kTimeout, "no frames here");
  }
  void close() override {}
  std::uint64_t framesLost() const override { return lost; }

  std::uint64_t lost = 0;
};

TEST(StreamHealthTest, LostFramesAreAddedAsTheSourcesCounterGrows) {
  CameraCounters counters;
  StreamHealth health("door", counters);
  LosingSource source;
  health.countLost(source);
  EXPECT_EQ(counters.lost.load(), 0U);
  source.lost = 3;
  health.countLost(source);
  EXPECT_EQ(counters.lost.load(), 3U);
  health.countLost(source);
  EXPECT_EQ(counters.lost.load(), 3U) << "the same three are not counted twice";
  source.lost = 5;
  health.countLost(source);
  EXPECT_EQ(counters.lost.load(), 5U);
}

TEST(StreamHealthTest, TheThreadsCpuIsChargedSinceItWasMadeAndSinceTheLastCharge) {
  CameraCounters counters;
  const std::int64_t before = threadCpuNanos();
  StreamHealth health("door", counters);
  const std::int64_t made = threadCpuNanos();
  // Work on this thread until its CPU clock has run a millisecond.
  volatile std::uint64_t work = 0;
  while (threadCpuNanos() < made + 1'000'000) work = work + 1;
  health.chargeCpu();
  const std::int64_t first = counters.captureThreadCpuNanos.load();
  EXPECT_GE(first, 1'000'000) << "at least the work done";
  EXPECT_LE(first, threadCpuNanos() - before) << "not the thread's CPU before the camera";
  const std::int64_t middle = threadCpuNanos();
  while (threadCpuNanos() < middle + 1'000'000) work = work + 1;
  health.chargeCpu();
  const std::int64_t second = counters.captureThreadCpuNanos.load();
  EXPECT_GE(second - first, 1'000'000) << "the work since the last charge";
  EXPECT_LE(second, threadCpuNanos() - before) << "what was charged is not charged again";
}

TEST(StreamHealthTest, CorruptFramesAreDecodeErrorsAndTheLastReasonHidesPasswords) {
  CameraCounters counters;
  StreamHealth health("door", counters);
  health.badFrame("damaged picture");
  health.badFrame("rtsp://admin:secret@10.0.0.5/stream: invalid data");
  EXPECT_EQ(counters.decodeErrors.load(), 2U);
  EXPECT_EQ(health.badFrames(), 2U);
  EXPECT_EQ(health.lastBadFrame(), "rtsp://admin:***@10.0.0.5/stream: invalid data");
  health.usableFrame();
  EXPECT_EQ(health.badFrames(), 0U) << "a usable frame ends the run";
  EXPECT_EQ(health.lastBadFrame(), "");
  EXPECT_EQ(counters.decodeErrors.load(), 2U) << "the errors stay counted";
}

TEST(StreamHealthTest, ARunIsWarnedAboutWhenItStartsAndSaidToEndWhenFramesAreUsable) {
  setLogLevel(spdlog::level::info);
  testing::LogCapture log("capture");
  CameraCounters counters;
  StreamHealth health("door", counters);
  health.usableFrame();
  EXPECT_EQ(log.text(), "") << "no run, nothing to end";
  for (int i = 0; i < 3; ++i) health.badFrame("damaged picture " + std::to_string(i));
  health.usableFrame();
  health.usableFrame();
  EXPECT_EQ(log.text(),
            "[cam=door] corrupt frames: damaged picture 0\n"
            "[cam=door] frames usable again after 3 corrupt\n");
}

// A webcam damaging a frame a second: the next run within the minute is counted, not warned
// about (it goes to the debug level, as its end).
TEST(StreamHealthTest, ASecondRunWithinTheMinuteIsNotWarnedAbout) {
  setLogLevel(spdlog::level::info);
  testing::LogCapture log("capture");
  CameraCounters counters;
  StreamHealth health("door", counters);
  health.badFrame("first run");
  health.usableFrame();
  health.badFrame("second run");
  health.badFrame("second run");
  health.usableFrame();
  EXPECT_EQ(counters.decodeErrors.load(), 3U);
  const std::string said = log.text();
  EXPECT_EQ(testing::occurrences(said, "corrupt frames: "), 1U) << said;
  EXPECT_EQ(testing::occurrences(said, "second run"), 0U) << said;
  EXPECT_EQ(testing::occurrences(said, "usable again after 1 corrupt"), 1U) << said;
  EXPECT_EQ(testing::occurrences(said, "usable again after 2 corrupt"), 0U) << said;
}

TEST(StreamHealthTest, PicturesThatAllDecodeCorruptAreAStallUntilOneIsUsable) {
  CameraCounters counters;
  StreamHealth health("door", counters);
  EXPECT_EQ(health.decodedUnusable(0ms), std::nullopt) << "nothing decoded yet";
  const Error refused{ErrorCode::kInvalidData, "rtsp://admin:secret@cam/1: bad Huffman code"};
  counters.decoding->report(nullptr, &refused);
  counters.decoding->report(nullptr, &refused);
  EXPECT_EQ(health.decodedUnusable(0ms),
            "no usable picture for 0 ms: every one decoded was corrupt (the last: "
            "rtsp://admin:***@cam/1: bad Huffman code)");
  EXPECT_EQ(health.decodedUnusable(1h), std::nullopt) << "not corrupt for that long";
  counters.decoding->report(nullptr, nullptr);
  EXPECT_EQ(health.decodedUnusable(0ms), std::nullopt) << "a usable picture ends the run";
}

TEST(StreamHealthTest, ANewSessionForgetsTheCorruptPicturesOfTheLast) {
  CameraCounters counters;
  StreamHealth health("door", counters);
  const Error refused{ErrorCode::kInvalidData, "truncated"};
  counters.decoding->report(nullptr, &refused);
  ASSERT_NE(health.decodedUnusable(0ms), std::nullopt);
  health.newSession();
  EXPECT_EQ(health.decodedUnusable(0ms), std::nullopt);
  EXPECT_EQ(counters.decodeErrorsTotal(), 1U) << "forgotten as a stall, still counted";
}

TEST(StreamHealthTest, TheDecodersNameSaysWhyHardwareDecodingIsNotUsedWarnedOncePerReason) {
  testing::LogCapture log("capture");
  CameraCounters counters;
  StreamHealth health("door", counters);
  SourceInfo info;
  info.decoder = "FFmpeg h264, software";
  EXPECT_EQ(health.decoderName(info, HwAccel::kVaapi), "FFmpeg h264, software")
      << "nothing to say without a fallback";
  EXPECT_EQ(log.text(), "");

  info.hwFallback = "no VAAPI device";
  EXPECT_EQ(health.decoderName(info, HwAccel::kVaapi),
            "FFmpeg h264, software (hwaccel vaapi: no VAAPI device)");
  health.decoderName(info, HwAccel::kVaapi);  // the source opened again, the same reason
  EXPECT_EQ(log.text(),
            "[cam=door] hwaccel vaapi not used: no VAAPI device; decoding in software\n");

  info.hwFallback = "the codec has no VAAPI profile";
  health.decoderName(info, HwAccel::kVaapi);
  EXPECT_EQ(testing::occurrences(log.text(), "hwaccel vaapi not used: "), 2U) << log.text();
}

}  // namespace
}  // namespace vigil
