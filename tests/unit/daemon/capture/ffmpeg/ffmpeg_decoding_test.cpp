// The decoder's side of an FFmpeg reader on a real clip, fed its packets as the reader feeds
// them: every picture once and then the end, and an idle decoder's keyframe given at once.
#include "daemon/capture/ffmpeg/ffmpeg_decoding.h"

#include <gtest/gtest.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

#include <chrono>
#include <opencv2/core.hpp>
#include <vector>

#include "daemon/capture/ffmpeg/ffmpeg_input.h"
#include "tests/clip_pictures.h"
#include "tests/model_paths.h"

namespace vigil {
namespace {

// TUD-Campus (71 pictures, a keyframe every 12) opened as FfmpegReader opens it, its decoder in
// an FfmpegDecoding; `eager`: the clip's pictures as OpenCV decodes them.
class FfmpegDecodingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto clip = testing::videosDir() / "TUD-Campus.mp4";
    ASSERT_TRUE(std::filesystem::exists(clip)) << "clip absent: " << clip;
    location = clip.string();
    eager = testing::eagerFrames(clip);
    ASSERT_EQ(eager.size(), 71U);
    const AVCodec* codec = nullptr;
    ASSERT_TRUE(
        openFfmpegInput(location, std::chrono::seconds(5), false, deadline, format, stream, codec));
    packet = av_packet_alloc();
    ASSERT_NE(packet, nullptr);
  }
  void TearDown() override {
    decoding.close();
    av_packet_free(&packet);
    avformat_close_input(&format);
  }

  // The next packet of the video to decodePacket (the end: flush), as FfmpegReader does.
  std::optional<Expected<void>> feed() {
    for (;;) {
      if (av_read_frame(format, packet) < 0) {
        decoding.flush();
        return std::nullopt;
      }
      if (packet->stream_index == stream) {
        const double seconds =
            static_cast<double>(packet->dts) * av_q2d(format->streams[stream]->time_base);
        return decoding.decodePacket(packet, seconds, picture);
      }
      av_packet_unref(packet);
    }
  }

  std::string location;
  std::vector<cv::Mat> eager;
  FfmpegDeadline deadline;
  AVFormatContext* format = nullptr;
  int stream = -1;
  AVPacket* packet = nullptr;
  DeliveredPictures delivered;
  FfmpegDecoding decoding{location, delivered};
  CapturedPicture picture;
};

TEST_F(FfmpegDecodingTest, GivesEveryPictureOnceAndThenTheEnd) {
  SourceInfo info;
  ASSERT_TRUE(decoding.open(*format->streams[stream], {}, info));
  EXPECT_TRUE(decoding.isOpen());
  std::size_t pictures = 0;
  for (;;) {
    auto received = decoding.receive();
    if (!received) {
      EXPECT_EQ(received.error().code, ErrorCode::kEndOfStream) << received.error().message;
      break;
    }
    if (*received) {
      ASSERT_TRUE(decoding.deliverReceived(picture));
      ASSERT_LT(pictures, eager.size());
      auto bgr = picture.bgr();
      ASSERT_TRUE(bgr.has_value()) << bgr.error().message;
      EXPECT_LT(testing::meanAbsDiff(*bgr, eager[pictures]), 1.5) << "picture " << pictures;
      ++pictures;
      continue;
    }
    ASSERT_FALSE(decoding.flushing()) << "the decoder asked for more after its end";
    if (auto fed = feed()) FAIL() << "a packet of a sound clip gave " << fed->has_value();
  }
  EXPECT_EQ(pictures, 71U);
  EXPECT_NE(delivered.last(), DeliveredPictures::kNone);
}

TEST_F(FfmpegDecodingTest, AnIdleDecoderGivesAKeyframeAsSoonAsItIsSent) {
  SourceInfo info;
  ASSERT_TRUE(decoding.open(*format->streams[stream], {}, info));
  decoding.setKeyframesOnly(true);
  EXPECT_TRUE(decoding.skippingToKeyframe());
  auto fed = feed();  // the clip's first packet: its first keyframe
  ASSERT_TRUE(fed.has_value()) << "no picture at once";
  ASSERT_TRUE(fed->has_value()) << fed->error().message;
  auto bgr = picture.bgr();
  ASSERT_TRUE(bgr.has_value()) << bgr.error().message;
  EXPECT_LT(testing::meanAbsDiff(*bgr, eager[0]), 1.5);
  // Drained: the decoder holds nothing more of it.
  auto received = decoding.receive();
  ASSERT_TRUE(received.has_value()) << received.error().message;
  EXPECT_FALSE(*received);
}

}  // namespace
}  // namespace vigil
