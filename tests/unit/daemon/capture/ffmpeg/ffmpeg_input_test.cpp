// Opening a stream or file with libavformat (openFfmpegInput), on its own, on the real clips
// the reader tests decode: its best video stream and decoder, and the reasons it does not open
// (a missing file, a stop, no video, no picture decoded), each naming the location.
#include "daemon/capture/ffmpeg/ffmpeg_input.h"

#include <gtest/gtest.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

#include <cstdint>
#include <filesystem>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "tests/model_paths.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

// What openFfmpegInput gave, the input closed at the end as its caller must.
struct OpenedInput {
  OpenedInput() = default;
  OpenedInput(const OpenedInput&) = delete;
  OpenedInput& operator=(const OpenedInput&) = delete;
  ~OpenedInput() { avformat_close_input(&format); }

  Expected<void> result;
  AVFormatContext* format = nullptr;
  int stream = -1;
  const AVCodec* codec = nullptr;
};

void openInput(OpenedInput& in, const std::string& location, FfmpegDeadline& deadline) {
  in.result = openFfmpegInput(location, 10s, false, deadline, in.format, in.stream, in.codec);
}

class FfmpegInputTest : public ::testing::Test {
 protected:
  // CI provides ../shared: a clip absent is a failure, as in the reader's tests.
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(mpeg4Clip)) << "clip absent: " << mpeg4Clip;
    ASSERT_TRUE(std::filesystem::exists(h264Clip)) << "clip absent: " << h264Clip;
  }
  const std::filesystem::path mpeg4Clip = testing::videosDir() / "TUD-Campus.mp4";
  const std::filesystem::path h264Clip = testing::videosDir() / "one-by-one-person-detection.mp4";
};

TEST_F(FfmpegInputTest, AFileOpensWithItsVideoStreamItsDecoderAndItsPictureSize) {
  FfmpegDeadline deadline;
  OpenedInput mpeg4;
  openInput(mpeg4, mpeg4Clip.string(), deadline);
  ASSERT_TRUE(mpeg4.result.has_value()) << mpeg4.result.error().message;
  ASSERT_NE(mpeg4.format, nullptr);
  ASSERT_GE(mpeg4.stream, 0);
  ASSERT_NE(mpeg4.codec, nullptr);
  EXPECT_EQ(mpeg4.codec->id, AV_CODEC_ID_MPEG4);
  const AVCodecParameters* p = mpeg4.format->streams[mpeg4.stream]->codecpar;
  EXPECT_EQ(p->codec_type, AVMEDIA_TYPE_VIDEO);
  EXPECT_EQ(p->width, 640);
  EXPECT_EQ(p->height, 480);

  OpenedInput h264;
  openInput(h264, h264Clip.string(), deadline);
  ASSERT_TRUE(h264.result.has_value()) << h264.result.error().message;
  EXPECT_EQ(h264.codec->id, AV_CODEC_ID_H264);
  EXPECT_EQ(h264.format->streams[h264.stream]->codecpar->width, 768);
}

TEST_F(FfmpegInputTest, TheOpeningInstallsTheDeadlinesInterruptCallback) {
  FfmpegDeadline deadline;
  OpenedInput in;
  openInput(in, mpeg4Clip.string(), deadline);
  ASSERT_TRUE(in.result.has_value()) << in.result.error().message;
  EXPECT_EQ(in.format->interrupt_callback.callback, &FfmpegDeadline::expired);
  EXPECT_EQ(in.format->interrupt_callback.opaque, &deadline)
      << "the reads after the opening are bounded and stopped the same way";
}

TEST_F(FfmpegInputTest, AMissingFileIsUnavailableAndNamed) {
  TempDir dir;
  const std::string missing = (dir.path() / "gone.mp4").string();
  FfmpegDeadline deadline;
  OpenedInput in;
  openInput(in, missing, deadline);
  ASSERT_FALSE(in.result.has_value());
  EXPECT_EQ(in.result.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(in.result.error().message, missing + ": cannot open: No such file or directory");
  EXPECT_EQ(in.format, nullptr) << "nothing opened, nothing to close";
}

TEST_F(FfmpegInputTest, AStoppedDeadlineEndsTheOpeningAsAStop) {
  FfmpegDeadline deadline;
  deadline.interrupt();
  OpenedInput in;
  openInput(in, mpeg4Clip.string(), deadline);
  ASSERT_FALSE(in.result.has_value());
  EXPECT_EQ(in.result.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(in.result.error().message, mpeg4Clip.string() + ": interrupted (stop)");
}

// A second of silence as a WAV file: a medium FFmpeg opens, without a picture in it.
std::string silentWav() {
  const std::uint32_t rate = 8000;
  const std::uint32_t samples = rate;
  std::string wav = "RIFF";
  auto put32 = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) wav.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  auto put16 = [&](std::uint16_t v) {
    for (int i = 0; i < 2; ++i) wav.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  put32(36 + samples * 2);
  wav += "WAVEfmt ";
  put32(16);
  put16(1);  // PCM
  put16(1);  // mono
  put32(rate);
  put32(rate * 2);
  put16(2);
  put16(16);
  wav += "data";
  put32(samples * 2);
  wav.append(samples * 2, '\0');
  return wav;
}

TEST_F(FfmpegInputTest, AnInputWithoutVideoIsUnavailableAndSaysSo) {
  TempDir dir;
  const std::string sound = (dir.path() / "sound.wav").string();
  writeFile(sound, silentWav());
  FfmpegDeadline deadline;
  OpenedInput in;
  openInput(in, sound, deadline);
  ASSERT_FALSE(in.result.has_value());
  EXPECT_EQ(in.result.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(in.result.error().message, sound + ": no video stream FFmpeg can decode");
  EXPECT_NE(in.format, nullptr) << "opened: the caller closes it";
}

// A small JPEG file whose header says it is `side` x `side` pixels.
std::string jpegSaying(int side) {
  std::vector<std::uint8_t> jpeg;
  cv::imencode(".jpg", cv::Mat(16, 16, CV_8UC3, cv::Scalar(90, 90, 90)), jpeg);
  for (std::size_t i = 0; i + 8 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) {  // SOF0: length, precision, height, width
      for (std::size_t at : {i + 5, i + 7}) {
        jpeg[at] = static_cast<std::uint8_t>(side >> 8);
        jpeg[at + 1] = static_cast<std::uint8_t>(side & 0xFF);
      }
      return std::string(jpeg.begin(), jpeg.end());
    }
  }
  ADD_FAILURE() << "no SOF0 in the JPEG";
  return {};
}

// A JPEG whose header says 4000x4000 over the bytes of a 16x16 picture: the probe decodes no
// picture of it, so the input has no picture size (reading on would only count decode errors).
TEST_F(FfmpegInputTest, APictureTheProbeCannotDecodeLeavesTheInputWithoutAPictureSize) {
  TempDir dir;
  const std::string cut = (dir.path() / "cut.jpg").string();
  writeFile(cut, jpegSaying(4000));
  FfmpegDeadline deadline;
  OpenedInput in;
  openInput(in, cut, deadline);
  ASSERT_FALSE(in.result.has_value());
  EXPECT_EQ(in.result.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(in.result.error().message,
            cut +
                ": no picture size: FFmpeg decoded no picture of the mjpeg stream in 10000 ms "
                "(too large, corrupt or none)");
}

}  // namespace
}  // namespace vigil
