// Pictures kept as they arrived and decoded on demand (CapturedPicture, FfmpegReader): the
// same pixels as decoding everything at once, at the size asked, once however many ask, and a
// picture that does not decode is a corrupt frame, never the previous one again.
#include "daemon/capture/picture/captured_picture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#include <string>
#include <thread>
#include <vector>

#include "daemon/capture/ffmpeg/ffmpeg_reader.h"
#include "daemon/capture/picture/jpeg_frame.h"
#include "daemon/capture/picture/thread_cpu.h"
#include "tests/bogus_jpeg.h"
#include "tests/clip_pictures.h"
#include "tests/model_paths.h"
#include "tests/temp_dir.h"
#include "tests/wait.h"

namespace vigil {
namespace {

using testing::eagerFrames;
using testing::meanAbsDiff;

// A picture with detail at every scale (noise over gradients), as a camera's would have.
cv::Mat texturedPicture(cv::Size size) {
  cv::Mat picture(size, CV_8UC3);
  cv::RNG rng(7);
  rng.fill(picture, cv::RNG::UNIFORM, 0, 256);
  cv::GaussianBlur(picture, picture, cv::Size(5, 5), 0);
  for (int y = 0; y < size.height; y += 60) {
    cv::rectangle(picture, cv::Rect(y % size.width, y, 120, 40), cv::Scalar(20, 200, 90), -1);
  }
  return picture;
}

std::vector<std::uint8_t> jpegOf(const cv::Mat& picture) {
  std::vector<std::uint8_t> bytes;
  cv::imencode(".jpg", picture, bytes, {cv::IMWRITE_JPEG_QUALITY, 90});
  return bytes;
}

bool samePixels(const cv::Mat& a, const cv::Mat& b) {
  return a.size() == b.size() && a.type() == b.type() && cv::norm(a, b, cv::NORM_INF) == 0;
}

TEST(CapturedPictureTest, LetterboxCoveringAndJpegReduction) {
  EXPECT_EQ(letterboxCovering({1920, 1080}, {416, 416}), cv::Size(416, 234));
  EXPECT_EQ(letterboxCovering({640, 480}, {416, 416}), cv::Size(416, 312));
  // 1/4 of 1920x1080 is 480x270, which covers 416x234; 1/8 (240x135) does not.
  EXPECT_EQ(jpegReduction({1920, 1080}, {416, 234}), 4);
  EXPECT_EQ(jpegReduction({1280, 720}, {416, 234}), 2);
  EXPECT_EQ(jpegReduction({640, 480}, {416, 312}), 1);
  EXPECT_EQ(jpegReduction({3840, 2160}, {416, 234}), 8);
  EXPECT_EQ(jpegReduction({1920, 1080}, {}), 1) << "an empty size asks for the full size";
}

TEST(CapturedPictureTest, JpegAtFullSizeIsTheEagerDecode) {
  const auto bytes = jpegOf(texturedPicture({1920, 1080}));
  CapturedPicture picture;
  picture.setJpeg(bytes, {1920, 1080});
  EXPECT_EQ(picture.decodes(), 0U) << "nothing is decoded until taken";
  auto pixels = picture.bgr();
  ASSERT_TRUE(pixels.has_value()) << pixels.error().message;
  EXPECT_TRUE(samePixels(*pixels, cv::imdecode(bytes, cv::IMREAD_COLOR)));
}

TEST(CapturedPictureTest, JpegForTheDetectorIsDecodedAtAQuarterAndCoversTheLetterbox) {
  const cv::Mat full = texturedPicture({1920, 1080});
  const auto bytes = jpegOf(full);
  CapturedPicture picture;
  picture.setJpeg(bytes, full.size());
  const cv::Size needed = letterboxCovering(full.size(), {416, 416});
  auto pixels = picture.bgr(needed);
  ASSERT_TRUE(pixels.has_value()) << pixels.error().message;
  EXPECT_EQ(pixels->size(), cv::Size(480, 270));
  EXPECT_GE(pixels->cols, needed.width);
  EXPECT_GE(pixels->rows, needed.height);
  // libjpeg's scaled IDCT: exactly what OpenCV's reduced read gives, and close to the full
  // picture shrunk.
  EXPECT_TRUE(samePixels(*pixels, cv::imdecode(bytes, cv::IMREAD_REDUCED_COLOR_4)));
  cv::Mat shrunk;
  cv::resize(cv::imdecode(bytes, cv::IMREAD_COLOR), shrunk, pixels->size(), 0, 0, cv::INTER_AREA);
  EXPECT_LT(meanAbsDiff(*pixels, shrunk), 3.0);
}

TEST(CapturedPictureTest, APictureTakenByTwoThreadsAtOnceIsDecodedOnce) {
  const auto bytes = jpegOf(texturedPicture({1280, 720}));
  for (int round = 0; round < 20; ++round) {
    CapturedPicture picture;
    picture.setJpeg(bytes, {1280, 720});
    cv::Mat a, b;
    std::thread detector([&] { a = *picture.bgr(); });
    std::thread page([&] { b = *picture.bgr(); });
    detector.join();
    page.join();
    EXPECT_EQ(picture.decodes(), 1U);
    EXPECT_EQ(a.data, b.data) << "both share the one decoded copy";
  }
}

TEST(CapturedPictureTest, AJpegThatDoesNotDecodeIsACorruptFrameNeverTheLastPicture) {
  const cv::Mat full = texturedPicture({640, 480});
  const auto good = jpegOf(full);
  const auto bad = testing::withBogusHuffmanTable(good);
  ASSERT_TRUE(checkJpegFrame(bad, 640, 480)) << "the capture-time check lets it through";
  CapturedPicture picture;
  picture.setJpeg(good, full.size());
  ASSERT_TRUE(picture.bgr().has_value());
  ASSERT_TRUE(picture.bgr({320, 240}).has_value());
  ASSERT_TRUE(picture.grey(160).has_value());
  // The same storage now holds the good picture at three sizes: none may come back.
  picture.setJpeg(bad, full.size());
  for (const cv::Size size : {cv::Size(), cv::Size(320, 240)}) {
    auto pixels = picture.bgr(size);
    ASSERT_FALSE(pixels.has_value()) << size;
    EXPECT_EQ(pixels.error().code, ErrorCode::kInvalidData);
    EXPECT_EQ(pixels.error().message.rfind("corrupt frame", 0), 0U) << pixels.error().message;
  }
  EXPECT_FALSE(picture.grey(160).has_value());
}

TEST(CapturedPictureTest, GreyForTheMotionCheckIsSmallAndLikeTheColourPictureGreyed) {
  const cv::Mat full = texturedPicture({1920, 1080});
  CapturedPicture picture;
  picture.setJpeg(jpegOf(full), full.size());
  auto grey = picture.grey(160);
  ASSERT_TRUE(grey.has_value()) << grey.error().message;
  EXPECT_EQ(grey->type(), CV_8UC1);
  EXPECT_EQ(grey->size(), cv::Size(240, 135)) << "1/8 scale: the smallest at least 160 wide";
  cv::Mat expected;
  cv::resize(full, expected, grey->size(), 0, 0, cv::INTER_AREA);
  cv::cvtColor(expected, expected, cv::COLOR_BGR2GRAY);
  cv::Mat diff;
  cv::absdiff(*grey, expected, diff);
  EXPECT_LT(cv::mean(diff)[0], 4.0);
}

TEST(CapturedPictureTest, YuyvIsConvertedOnlyWhenTaken) {
  const int width = 64, height = 48;
  std::vector<std::uint8_t> yuyv(static_cast<std::size_t>(width) * 2 * height);
  for (std::size_t i = 0; i < yuyv.size(); i += 2) {
    yuyv[i] = static_cast<std::uint8_t>(16 + (i / 2) % width * 3);  // Y: a ramp
    yuyv[i + 1] = 128;                                              // no colour
  }
  CapturedPicture picture;
  picture.setYuyv(yuyv, {width, height}, width * 2);
  EXPECT_EQ(picture.decodes(), 0U);
  auto pixels = picture.bgr();
  ASSERT_TRUE(pixels.has_value());
  cv::Mat expected;
  cv::cvtColor(cv::Mat(height, width, CV_8UC2, yuyv.data()), expected, cv::COLOR_YUV2BGR_YUYV);
  EXPECT_TRUE(samePixels(*pixels, expected));
  auto grey = picture.grey(32);
  ASSERT_TRUE(grey.has_value());
  EXPECT_EQ(grey->size(), cv::Size(32, 24));
  EXPECT_EQ(picture.decodes(), 2U);
}

TEST(CapturedPictureTest, AKeptCopySurvivesTheSlotBeingRefilledAndBillsTheSameCamera) {
  auto account = std::make_shared<DecodeAccount>();
  const cv::Mat first = texturedPicture({320, 240});
  const cv::Mat second = first.clone() * 0.5;
  CapturedPicture slot;
  slot.billTo(account);
  slot.setJpeg(jpegOf(first), first.size());
  ASSERT_TRUE(slot.bgr({160, 120}).has_value());  // the detector took it at half size
  CapturedPicture kept;
  kept.assign(slot);
  slot.setJpeg(jpegOf(second), second.size());
  auto pixels = kept.bgr();  // the page, later, at full size
  ASSERT_TRUE(pixels.has_value());
  EXPECT_TRUE(samePixels(*pixels, cv::imdecode(jpegOf(first), cv::IMREAD_COLOR)))
      << "the first picture, not the slot's new one";
  EXPECT_EQ(account->frames.load(), 1U) << "one frame decoded, at two sizes";
  EXPECT_GT(account->cpuNanosElsewhere.load(), 0) << "decoded off the capture thread";
}

TEST(CapturedPictureTest, DecodingOnTheCaptureThreadIsNotBilledAsElsewhere) {
  auto account = std::make_shared<DecodeAccount>();
  const auto bytes = jpegOf(texturedPicture({640, 480}));
  std::thread capture([&] {
    CapturedPicture::markCaptureThread();
    CapturedPicture picture;
    picture.billTo(account);
    picture.setJpeg(bytes, {640, 480});
    ASSERT_TRUE(picture.grey(160).has_value());
  });
  capture.join();
  EXPECT_EQ(account->frames.load(), 1U);
  EXPECT_EQ(account->cpuNanosElsewhere.load(), 0) << "the capture thread's clock counts it";
}

// The real clip the reader tests decode; CI provides ../shared, so its absence is a failure.
class FfmpegReaderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(std::filesystem::exists(clip)) << "clip absent: " << clip; }
  static constexpr std::chrono::milliseconds kReadTimeout{100};
  // The clip opened as an idle camera's stream (keyframes only) whose 4th packet comes late: only
  // once the read waiting for it (readIdle) has passed its timeout.
  void openIdleWithALatePacket(FfmpegReader& reader) {
    ASSERT_TRUE(reader.open(std::chrono::seconds(5), false).has_value());
    reader.setPacing([this, packets = 0]() mutable {
      if (++packets == 4) {
        EXPECT_TRUE(testing::waitUntil(
            [&] { return std::chrono::steady_clock::now() > readStarted_ + kReadTimeout; }));
      }
      return true;
    });
    reader.setKeyframesOnly(true);
  }
  Expected<void> readIdle(FfmpegReader& reader, CapturedPicture& picture) {
    readStarted_ = std::chrono::steady_clock::now();
    return reader.read(picture, kReadTimeout);
  }
  std::chrono::steady_clock::time_point readStarted_;
  const std::filesystem::path clip = testing::videosDir() / "TUD-Campus.mp4";
};

// The real clips through FfmpegReader: the decoder's pictures (MPEG-4 part 2 here; H.264 alike)
// kept by reference and converted when taken, against OpenCV's own decode of every frame.
TEST_F(FfmpegReaderTest, ClipPicturesConvertedOnDemandMatchOpenCvsDecode) {
  FfmpegReader reader(clip.string());
  auto info = reader.open(std::chrono::seconds(5), false);
  ASSERT_TRUE(info.has_value()) << info.error().message;
  EXPECT_EQ(info->pixelFormat, "mpeg4 (ffmpeg)");
  cv::VideoCapture eager(clip.string(), cv::CAP_FFMPEG);
  ASSERT_TRUE(eager.isOpened());
  CapturedPicture picture;
  cv::Mat expected;
  int frames = 0;
  for (; frames < 30; ++frames) {
    ASSERT_TRUE(reader.read(picture, std::chrono::seconds(5)).has_value());
    ASSERT_TRUE(eager.read(expected));
    EXPECT_EQ(picture.form(), PictureForm::kFfmpeg);
    EXPECT_EQ(picture.decodes(), 0U);
    if (frames % 5 != 0) continue;  // as at 5 detections a second of 25: most never converted
    auto full = picture.bgr();
    ASSERT_TRUE(full.has_value());
    ASSERT_EQ(full->size(), expected.size());
    EXPECT_LT(meanAbsDiff(*full, expected), 1.5) << "frame " << frames;
    auto small = picture.bgr({320, 240});
    ASSERT_TRUE(small.has_value());
    EXPECT_EQ(small->size(), cv::Size(320, 240));
    cv::Mat shrunk;
    cv::resize(expected, shrunk, small->size(), 0, 0, cv::INTER_AREA);
    EXPECT_LT(meanAbsDiff(*small, shrunk), 3.0) << "frame " << frames;
    // A detection region: only its part converted, the full conversion's pixels there (chroma
    // taken from even coordinates, as the full picture's). A region at odd coordinates.
    for (const cv::Rect r : {cv::Rect(101, 37, 301, 299), cv::Rect(320, 240, 320, 240)}) {
      auto region = picture.bgrRegion(r);
      ASSERT_TRUE(region.has_value()) << region.error().message;
      ASSERT_EQ(region->size(), r.size());
      EXPECT_LT(meanAbsDiff(*region, (*full)(r)), 0.5) << "frame " << frames << " " << r;
    }
  }
}

TEST_F(FfmpegReaderTest, MjpegFilePicturesStayJpegsUntilTaken) {
  TempDir dir;
  const auto mjpeg = dir.path() / "campus.avi";
  cv::VideoCapture eager(clip.string(), cv::CAP_FFMPEG);
  cv::Mat frame;
  ASSERT_TRUE(eager.read(frame));
  {
    cv::VideoWriter writer(mjpeg.string(), cv::CAP_FFMPEG,
                           cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 25, frame.size());
    ASSERT_TRUE(writer.isOpened());
    for (int i = 0; i < 10 && eager.read(frame); ++i) writer.write(frame);
  }
  FfmpegReader reader(mjpeg.string());
  auto info = reader.open(std::chrono::seconds(5), false);
  ASSERT_TRUE(info.has_value()) << info.error().message;
  cv::VideoCapture again(mjpeg.string(), cv::CAP_FFMPEG);
  CapturedPicture picture;
  cv::Mat expected;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(reader.read(picture, std::chrono::seconds(5)).has_value()) << i;
    ASSERT_TRUE(again.read(expected));
    EXPECT_EQ(picture.form(), PictureForm::kJpeg);
    auto pixels = picture.bgr();
    ASSERT_TRUE(pixels.has_value());
    EXPECT_LT(meanAbsDiff(*pixels, expected), 1.5) << i;
  }
  auto end = reader.read(picture, std::chrono::seconds(5));
  ASSERT_FALSE(end.has_value());
  EXPECT_EQ(end.error().code, ErrorCode::kEndOfStream);
}

// TUD-Campus: 71 pictures, a keyframe every 12 (0, 12, ..., 60). Told to resume right after a
// keyframe, the reader goes on from it: the pictures after it refer to nothing skipped.
TEST_F(FfmpegReaderTest, IdleDecodesOnlyKeyframesAndResumesRightAfterOne) {
  const std::vector<cv::Mat> eager = eagerFrames(clip);
  ASSERT_EQ(eager.size(), 71U);
  FfmpegReader reader(clip.string());
  ASSERT_TRUE(reader.open(std::chrono::seconds(5), false).has_value());
  reader.setKeyframesOnly(true);
  CapturedPicture picture;
  std::vector<cv::Mat> delivered;
  auto readOne = [&] {
    auto ok = reader.read(picture, std::chrono::seconds(5));
    if (ok) delivered.push_back(picture.bgr()->clone());
    return ok.has_value();
  };
  ASSERT_TRUE(readOne());
  ASSERT_TRUE(readOne());
  EXPECT_LT(meanAbsDiff(delivered[0], eager[0]), 1.5);
  EXPECT_LT(meanAbsDiff(delivered[1], eager[12]), 1.5) << "the second keyframe, nothing between";
  reader.setKeyframesOnly(false);
  EXPECT_FALSE(reader.skippingToKeyframe());
  while (readOne()) {
  }
  ASSERT_EQ(delivered.size(), 2U + (71U - 13U));
  for (std::size_t i = 2; i < delivered.size(); ++i) {
    EXPECT_LT(meanAbsDiff(delivered[i], eager[13 + i - 2]), 1.5) << "picture " << i;
  }
}

// Told to resume between keyframes (after a read that timed out waiting for the 4th packet), the
// reader decodes the packets kept since the last keyframe at once: the next picture is the newest
// packet's, undamaged, and so is every one after it. Before, it waited for the next keyframe.
TEST_F(FfmpegReaderTest, LeavingIdleBetweenKeyframesDecodesFromTheLastOneAtOnce) {
  const std::vector<cv::Mat> eager = eagerFrames(clip);
  ASSERT_EQ(eager.size(), 71U);
  FfmpegReader reader(clip.string());
  ASSERT_NO_FATAL_FAILURE(openIdleWithALatePacket(reader));
  CapturedPicture picture;
  ASSERT_TRUE(readIdle(reader, picture).has_value());
  auto skipped = readIdle(reader, picture);
  ASSERT_FALSE(skipped.has_value()) << "the 4th packet came after the read's timeout";
  ASSERT_EQ(skipped.error().code, ErrorCode::kTimeout) << skipped.error().message;
  reader.setKeyframesOnly(false);
  ASSERT_TRUE(readIdle(reader, picture).has_value());
  ASSERT_TRUE(reader.pictureTime().has_value());
  const auto newest = static_cast<std::size_t>(std::lround(*reader.pictureTime() * 25));
  EXPECT_GT(newest, 0U);
  EXPECT_LT(newest, 12U) << "between the first two keyframes";
  EXPECT_LT(meanAbsDiff(*picture.bgr(), eager[newest]), 1.5) << "picture " << newest;
  for (std::size_t next = newest + 1; next < newest + 6; ++next) {
    ASSERT_TRUE(readIdle(reader, picture).has_value());
    EXPECT_LT(meanAbsDiff(*picture.bgr(), eager[next]), 1.5) << "picture " << next;
  }
}

// one-by-one-person-detection (10 frames/s, a keyframe every second): the room is empty, and a
// person walks in at about 5.8 s. Idle from the start, the reader wakes on the packets' bytes
// before the 6 s keyframe, and every picture it gives then is undamaged; while the room is
// empty it wakes at most once (a wake lasts until the next keyframe: at most 9 pictures more).
TEST(FfmpegReaderWakeTest, AnIdleReaderWakesWhenThePacketsSayThePictureChanged) {
  const auto clip = testing::videosDir() / "one-by-one-person-detection.mp4";
  ASSERT_TRUE(std::filesystem::exists(clip)) << "clip absent: " << clip;
  const std::vector<cv::Mat> eager = eagerFrames(clip, 61);
  ASSERT_EQ(eager.size(), 61U);
  FfmpegReader reader(clip.string());
  ASSERT_TRUE(reader.open(std::chrono::seconds(5), false).has_value());
  reader.setKeyframesOnly(true);
  CapturedPicture picture;
  std::vector<std::size_t> between;  // frames delivered that are not keyframes
  for (std::size_t frame = 0; frame < 60;) {
    auto ok = reader.read(picture, std::chrono::seconds(5));
    ASSERT_TRUE(ok.has_value()) << ok.error().message;
    ASSERT_TRUE(reader.pictureTime().has_value());
    frame = static_cast<std::size_t>(std::lround(*reader.pictureTime() * 10));
    ASSERT_LE(frame, 60U);
    EXPECT_LT(meanAbsDiff(*picture.bgr(), eager[frame]), 1.5) << "frame " << frame;
    if (frame % 10 != 0) between.push_back(frame);
  }
  std::string frames;
  for (auto f : between) frames += " " + std::to_string(f);
  std::printf("[ woke ] frames between keyframes:%s\n", frames.c_str());
  const auto empty = std::count_if(between.begin(), between.end(), [](auto f) { return f < 50; });
  EXPECT_LE(empty, 9) << "at most one wake while the room is empty";
  EXPECT_TRUE(std::any_of(between.begin(), between.end(), [](auto f) { return f > 50; }))
      << "woke for the person walking in before the 6 s keyframe";
}

// The same clip has B-frames: its decoder holds a picture back for reordering until the next one
// is decoded, and while idle the next one is a keyframe interval away. Each keyframe's picture is
// given when its own packet is read, not a keyframe interval later.
TEST(FfmpegReaderWakeTest, AnIdleReaderGivesEachKeyframeWhenItComesEvenWithBFrames) {
  const auto clip = testing::videosDir() / "one-by-one-person-detection.mp4";
  ASSERT_TRUE(std::filesystem::exists(clip)) << "clip absent: " << clip;
  FfmpegReader reader(clip.string());
  ASSERT_TRUE(reader.open(std::chrono::seconds(5), false).has_value());
  int packets = 0;
  reader.setPacing([&] {
    ++packets;
    return true;
  });
  reader.setKeyframesOnly(true);
  CapturedPicture picture;
  int keyframes = 0;
  for (int frame = 0; frame < 50;) {
    auto ok = reader.read(picture, std::chrono::seconds(5));
    ASSERT_TRUE(ok.has_value()) << ok.error().message;
    frame = static_cast<int>(std::lround(*reader.pictureTime() * 10));
    if (frame % 10 != 0) continue;  // a wake's pictures
    ++keyframes;
    // Its packet is the clip's (frame + 1)th in decoding order; the next keyframe's, 10 later.
    EXPECT_LE(packets, frame + 3) << "keyframe " << frame << " given after " << packets
                                  << " packets";
  }
  EXPECT_EQ(keyframes, 6);
}

// A read that only skips (keyframes only, its 4th packet late) ends at its timeout, kTimeout and
// still skipping; the next reads go on to the keyframe, nothing lost.
TEST_F(FfmpegReaderTest, AReadSkippingToAKeyframeEndsAtItsTimeoutAndTheNextGoesOn) {
  const std::vector<cv::Mat> eager = eagerFrames(clip);
  ASSERT_GE(eager.size(), 13U);
  FfmpegReader reader(clip.string());
  ASSERT_NO_FATAL_FAILURE(openIdleWithALatePacket(reader));
  CapturedPicture picture;
  ASSERT_TRUE(readIdle(reader, picture).has_value());
  int timeouts = 0;
  for (;;) {
    auto ok = readIdle(reader, picture);
    if (ok) break;
    ASSERT_EQ(ok.error().code, ErrorCode::kTimeout) << ok.error().message;
    EXPECT_TRUE(reader.skippingToKeyframe());
    ASSERT_LT(++timeouts, 12) << "11 packets to the next keyframe";
  }
  EXPECT_GE(timeouts, 1) << "the 4th packet came after the read's timeout";
  EXPECT_LT(meanAbsDiff(*picture.bgr(), eager[12]), 1.5) << "the second keyframe";
}

// one-by-one-person-detection: H.264 with B-frames (I B B B P B B B P P, no B-frame a reference).
// Skipping the pictures nothing refers to delivers fewer pictures, each of them one of the clip's
// own in order, none damaged by a missing reference.
TEST(FfmpegReaderSkipTest, NonReferencePicturesAreSkippedAndTheRestAreUndamaged) {
  const auto clip = testing::videosDir() / "one-by-one-person-detection.mp4";
  ASSERT_TRUE(std::filesystem::exists(clip)) << "clip absent: " << clip;
  constexpr int kPictures = 400;
  const cv::Size thumb(192, 108);
  auto readAll = [&](bool skip, int atMost) {
    std::vector<cv::Mat> thumbs;
    FfmpegReader reader(clip.string());
    auto info = reader.open(std::chrono::seconds(5), false);
    EXPECT_TRUE(info.has_value());
    if (!info) return thumbs;
    EXPECT_TRUE(reader.setSkipNonReference(skip));
    CapturedPicture picture;
    while (static_cast<int>(thumbs.size()) < atMost &&
           reader.read(picture, std::chrono::seconds(5)).has_value()) {
      thumbs.push_back(picture.bgr(thumb)->clone());
    }
    return thumbs;
  };
  const std::vector<cv::Mat> every = readAll(false, kPictures);
  ASSERT_EQ(every.size(), static_cast<std::size_t>(kPictures));
  const std::vector<cv::Mat> skipped = readAll(true, kPictures);
  // Each delivered picture is one of the next few of the clip's (at most three in a row are
  // skipped: the B-frames between two references) and the same pixels: the pictures decoded are
  // decoded from the same references as without skipping.
  constexpr std::size_t kMostSkippedInARow = 3;
  std::size_t at = 0;
  std::size_t delivered = 0;
  for (const cv::Mat& picture : skipped) {
    if (at >= every.size()) break;
    const std::size_t end = std::min(at + kMostSkippedInARow + 1, every.size());
    std::size_t best = at;
    for (std::size_t j = at; j < end; ++j) {
      if (meanAbsDiff(picture, every[j]) < meanAbsDiff(picture, every[best])) best = j;
    }
    // The last few of the clip's pictures read may all have been skipped.
    if (end == every.size() && meanAbsDiff(picture, every[best]) >= 0.01) break;
    ASSERT_LT(meanAbsDiff(picture, every[best]), 0.01)
        << "delivered picture " << delivered << " is none of the clip's pictures " << at << " to "
        << end - 1 << " (damaged, or out of order)";
    ++delivered;
    at = best + 1;
  }
  ASSERT_GE(at, every.size() - kMostSkippedInARow) << "the skipping reader ended early";
  // The clip's pattern, I B B B P B B B P P, none of its B-frames a reference: 4 pictures of 10
  // are delivered.
  const auto share = static_cast<double>(delivered) / static_cast<double>(at);
  EXPECT_NEAR(share, 0.4, 0.05) << delivered << " pictures delivered for " << at;
}

// capture.skip_loop_filter: the H.264 decoder skips its deblocking; the pictures differ from the
// deblocked ones (so the setting took effect), by little: above 30 dB PSNR every one (1080p
// streams at 1 and 2 Mbit/s: 35 dB at worst; this clip 45; bench/capture.md, "The loop filter").
TEST(FfmpegReaderSkipTest, TheLoopFilterSkippedChangesThePicturesLittle) {
  const auto clip = testing::videosDir() / "one-by-one-person-detection.mp4";
  ASSERT_TRUE(std::filesystem::exists(clip)) << "clip absent: " << clip;
  constexpr std::size_t kPictures = 60;
  auto readAll = [&](bool skipLoopFilter, std::string& decoder) {
    std::vector<cv::Mat> pictures;
    FfmpegReader reader(clip.string());
    reader.setSkipLoopFilter(skipLoopFilter);
    auto info = reader.open(std::chrono::seconds(5), false);
    EXPECT_TRUE(info.has_value());
    if (!info) return pictures;
    decoder = info->decoder;
    CapturedPicture picture;
    while (pictures.size() < kPictures && reader.read(picture, std::chrono::seconds(5))) {
      pictures.push_back(picture.bgr()->clone());
    }
    return pictures;
  };
  std::string deblockedDecoder, skippedDecoder;
  const std::vector<cv::Mat> deblocked = readAll(false, deblockedDecoder);
  const std::vector<cv::Mat> skipped = readAll(true, skippedDecoder);
  EXPECT_EQ(deblockedDecoder.find("loop filter"), std::string::npos) << deblockedDecoder;
  EXPECT_NE(skippedDecoder.find("loop filter skipped"), std::string::npos) << skippedDecoder;
  ASSERT_EQ(deblocked.size(), kPictures);
  ASSERT_EQ(skipped.size(), kPictures);
  double leastPsnr = 100;
  double mostDifferent = 0;
  for (std::size_t i = 0; i < kPictures; ++i) {
    leastPsnr = std::min(leastPsnr, cv::PSNR(deblocked[i], skipped[i]));
    mostDifferent = std::max(mostDifferent, meanAbsDiff(deblocked[i], skipped[i]));
  }
  EXPECT_GT(mostDifferent, 0.0) << "no picture differs: the loop filter was not skipped";
  EXPECT_GT(leastPsnr, 30.0);
}

TEST_F(FfmpegReaderTest, AMissingVaapiDeviceMeansSoftwareDecodingAndSaysWhy) {
  FfmpegReader reader(clip.string());
  auto info = reader.open(std::chrono::seconds(5), false,
                          HwDecode{HwAccel::kVaapi, "/dev/dri/renderD-none"});
  ASSERT_TRUE(info.has_value()) << info.error().message;
  EXPECT_EQ(info->decoder, "FFmpeg mpeg4, software");
  EXPECT_NE(info->hwFallback.find("/dev/dri/renderD-none"), std::string::npos) << info->hwFallback;
  CapturedPicture picture;
  ASSERT_TRUE(reader.read(picture, std::chrono::seconds(5)).has_value());
  EXPECT_TRUE(picture.bgr().has_value());
  auto plain = reader.open(std::chrono::seconds(5), false);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->decoder, "FFmpeg mpeg4, software");
  EXPECT_EQ(plain->hwFallback, "") << "not asked for: nothing to say";
}

}  // namespace
}  // namespace vigil
