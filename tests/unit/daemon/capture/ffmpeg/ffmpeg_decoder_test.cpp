// FFmpeg's decoder as a camera wants it (openFfmpegDecoder), on its own, on the real clips: slice
// threads and the picture limit, the loop filter skipped only where there is one, VAAPI asked for
// where none is to be had (software, and why), a hardware failure that sticks; and FFmpeg's
// error texts.
#include "daemon/capture/ffmpeg/ffmpeg_decoder.h"

#include <gtest/gtest.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/buffer.h>
}

#include <cerrno>
#include <filesystem>
#include <string>

#include "daemon/capture/ffmpeg/ffmpeg_input.h"
#include "tests/model_paths.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

// A render node that is not there: no GPU here, and none of that name anywhere.
constexpr const char* kNoRenderNode = "/dev/dri/renderD999-vigil-test";

// A clip's video stream, opened with openFfmpegInput, and the decoder opened for it; everything
// freed at the end as the reader frees it.
class DecoderRig {
 public:
  explicit DecoderRig(const std::filesystem::path& clip) {
    const AVCodec* codec = nullptr;
    opened_ = openFfmpegInput(clip.string(), 10s, false, deadline_, format_, stream_, codec);
  }
  ~DecoderRig() {
    avcodec_free_context(&decoder);
    av_buffer_unref(&hwDevice);
    avformat_close_input(&format_);
  }
  DecoderRig(const DecoderRig&) = delete;
  DecoderRig& operator=(const DecoderRig&) = delete;

  Expected<void> open(const DecoderWish& wish) {
    if (!opened_) return opened_;
    return openFfmpegDecoder(*format_->streams[stream_], wish, "the clip", decoder, hwDevice, info);
  }

  AVCodecContext* decoder = nullptr;
  AVBufferRef* hwDevice = nullptr;
  SourceInfo info;

 private:
  FfmpegDeadline deadline_;
  Expected<void> opened_;
  AVFormatContext* format_ = nullptr;
  int stream_ = -1;
};

class FfmpegDecoderTest : public ::testing::Test {
 protected:
  // CI provides ../shared: a clip absent is a failure, as in the reader's tests.
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(mpeg4Clip)) << "clip absent: " << mpeg4Clip;
    ASSERT_TRUE(std::filesystem::exists(h264Clip)) << "clip absent: " << h264Clip;
  }
  const std::filesystem::path mpeg4Clip = testing::videosDir() / "TUD-Campus.mp4";
  const std::filesystem::path h264Clip = testing::videosDir() / "one-by-one-person-detection.mp4";
};

TEST_F(FfmpegDecoderTest, ASoftwareDecoderUsesSliceThreadsAndThePictureLimit) {
  DecoderRig rig(mpeg4Clip);
  auto opened = rig.open(DecoderWish{});
  ASSERT_TRUE(opened.has_value()) << opened.error().message;
  ASSERT_NE(rig.decoder, nullptr);
  EXPECT_TRUE(avcodec_is_open(rig.decoder));
  EXPECT_EQ(rig.info.decoder, "FFmpeg mpeg4, software");
  EXPECT_EQ(rig.info.hwFallback, "") << "no hardware asked for, no reason to give";
  EXPECT_EQ(rig.decoder->thread_type, FF_THREAD_SLICE) << "frame threads would hold pictures";
  EXPECT_EQ(rig.decoder->max_pixels, kMaxFfmpegPixels);
  EXPECT_EQ(rig.hwDevice, nullptr);
}

TEST_F(FfmpegDecoderTest, TheLoopFilterIsSkippedOnlyWhereTheCodecHasOne) {
  DecoderWish wish;
  wish.skipLoopFilter = true;
  DecoderRig h264(h264Clip);
  ASSERT_TRUE(h264.open(wish).has_value());
  EXPECT_EQ(h264.info.decoder, "FFmpeg h264, software, loop filter skipped");
  EXPECT_EQ(h264.decoder->skip_loop_filter, AVDISCARD_ALL);

  DecoderRig mpeg4(mpeg4Clip);
  ASSERT_TRUE(mpeg4.open(wish).has_value());
  EXPECT_EQ(mpeg4.info.decoder, "FFmpeg mpeg4, software") << "MPEG-4 part 2 has no loop filter";
  EXPECT_NE(mpeg4.decoder->skip_loop_filter, AVDISCARD_ALL);

  DecoderRig asUsual(h264Clip);
  ASSERT_TRUE(asUsual.open(DecoderWish{}).has_value());
  EXPECT_EQ(asUsual.info.decoder, "FFmpeg h264, software");
  EXPECT_NE(asUsual.decoder->skip_loop_filter, AVDISCARD_ALL);
}

TEST_F(FfmpegDecoderTest, VaapiWithoutItsDeviceDecodesInSoftwareAndSaysWhy) {
  DecoderWish wish;
  wish.hw.accel = HwAccel::kVaapi;
  wish.hw.device = kNoRenderNode;
  wish.skipLoopFilter = true;
  DecoderRig rig(h264Clip);
  ASSERT_TRUE(rig.open(wish).has_value());
  EXPECT_EQ(rig.info.decoder, "FFmpeg h264, software, loop filter skipped")
      << "software after all, so the loop filter is skipped as asked";
  EXPECT_EQ(rig.hwDevice, nullptr);
  EXPECT_EQ(rig.info.hwFallback, std::string("VAAPI device ") + kNoRenderNode +
                                     ": No such file or directory (no GPU, or its driver not "
                                     "loaded)");
  EXPECT_EQ(rig.decoder->hw_device_ctx, nullptr);
}

TEST_F(FfmpegDecoderTest, AHardwareFailureOnThisReaderSticks) {
  DecoderWish wish;
  wish.hw.accel = HwAccel::kVaapi;
  wish.hwFailed = "VAAPI decoding failed: Input/output error";
  DecoderRig rig(h264Clip);
  ASSERT_TRUE(rig.open(wish).has_value());
  EXPECT_EQ(rig.info.decoder, "FFmpeg h264, software");
  EXPECT_EQ(rig.info.hwFallback, "VAAPI decoding failed: Input/output error");
}

TEST(FfmpegDecoderProbeTest, AMissingRenderNodeIsNoVaapiAndTheReasonSaysWhy) {
  auto probed = probeVaapi(kNoRenderNode);
  ASSERT_FALSE(probed.has_value());
  EXPECT_EQ(probed.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(probed.error().message,
            std::string("VAAPI device ") + kNoRenderNode +
                ": No such file or directory (no GPU, or its driver not loaded)");
}

TEST(FfmpegDecoderProbeTest, FfmpegsErrorsAreSaidInItsOwnWords) {
  EXPECT_EQ(describeAvError(AVERROR(ENOENT)), "No such file or directory");
  EXPECT_EQ(describeAvError(AVERROR_EOF), "End of file");
  EXPECT_EQ(describeAvError(AVERROR_INVALIDDATA), "Invalid data found when processing input");
}

}  // namespace
}  // namespace vigil
