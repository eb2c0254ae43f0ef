// JPEGs decoded by libjpeg directly (decodeJpeg) and what it says of them: damaged, cut short or
// harmlessly padded pictures from a real photograph, through each path a camera's JPEG takes
// (the decoder itself, a V4L2 MJPEG buffer, an MJPEG file or stream read by FFmpeg, a picture
// decoded on demand and billed to its camera): a damaged picture is a corrupt frame, counted and
// logged once with the camera's name, never used; a harmless warning is counted and the
// picture used; nothing reaches standard error.
#include "daemon/capture/picture/jpeg_frame.h"

#include <gtest/gtest.h>
#include <linux/videodev2.h>

#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "daemon/capture/ffmpeg/ffmpeg_reader.h"
#include "daemon/capture/picture/captured_picture.h"
#include "daemon/capture/v4l2/v4l2_decode.h"
#include "tests/bogus_jpeg.h"
#include "tests/damaged_jpeg.h"
#include "tests/log_capture.h"
#include "tests/occurrences.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

const cv::Size kPhotoSize{640, 480};

// The kinds a damaged or cut-short picture may be said to be.
bool jpegSaysDamage(const JpegMessages& m) {
  return m.said[static_cast<std::size_t>(JpegMessageKind::kDamagedData)] ||
         m.said[static_cast<std::size_t>(JpegMessageKind::kTruncated)];
}

bool jpegSaid(const JpegMessages& m, JpegMessageKind kind) {
  return m.said[static_cast<std::size_t>(kind)];
}

// decodeJpeg of a picture of kPhotoSize, failing the test if libjpeg writes anything to
// standard error: its messages must all be caught.
Expected<void> decodeSilently(const std::vector<std::uint8_t>& jpeg, int reduction, bool grey,
                              cv::Mat& out, JpegMessages& messages) {
  ::testing::internal::CaptureStderr();
  auto ok = decodeJpeg(jpeg, kPhotoSize, reduction, grey, out, messages);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "libjpeg's messages are caught";
  return ok;
}

class JpegFrameTest : public ::testing::Test {
 protected:
  void SetUp() override {
    good = testing::photographJpeg(kPhotoSize);
    ASSERT_FALSE(good.empty()) << testing::missingCocoReason();
  }
  std::vector<std::uint8_t> good;
};

struct JpegScale {
  int reduction;
  bool grey;
};
constexpr JpegScale kJpegScales[] = {{1, false}, {2, false}, {4, false},
                                     {8, false}, {4, true},  {8, true}};

int reducedImreadFlags(JpegScale s) {
  switch (s.reduction) {
    case 2:
      return s.grey ? cv::IMREAD_REDUCED_GRAYSCALE_2 : cv::IMREAD_REDUCED_COLOR_2;
    case 4:
      return s.grey ? cv::IMREAD_REDUCED_GRAYSCALE_4 : cv::IMREAD_REDUCED_COLOR_4;
    case 8:
      return s.grey ? cv::IMREAD_REDUCED_GRAYSCALE_8 : cv::IMREAD_REDUCED_COLOR_8;
    default:
      return s.grey ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR;
  }
}

TEST_F(JpegFrameTest, AGoodPictureDecodesAsOpenCvsDecodeDidAtEveryScaleSilently) {
  for (const JpegScale s : kJpegScales) {
    cv::Mat out;
    JpegMessages messages;
    auto ok = decodeSilently(good, s.reduction, s.grey, out, messages);
    ASSERT_TRUE(ok.has_value()) << ok.error().message;
    EXPECT_FALSE(messages.saidAny());
    const cv::Mat before = cv::imdecode(good, reducedImreadFlags(s));
    ASSERT_EQ(out.size(), before.size()) << s.reduction;
    ASSERT_EQ(out.type(), before.type());
    EXPECT_LE(cv::norm(out, before, cv::NORM_INF), 1.0) << "1/" << s.reduction;
    // The storage is reused for the next picture of that size.
    const uchar* storage = out.data;
    ASSERT_TRUE(decodeJpeg(good, kPhotoSize, s.reduction, s.grey, out, messages));
    EXPECT_EQ(out.data, storage);
  }
}

TEST_F(JpegFrameTest, ADamagedPictureIsACorruptFrameAtEveryScaleAndNothingReachesStandardError) {
  const auto damaged = testing::damagedJpeg(good);
  ASSERT_TRUE(checkJpegFrame(damaged, kPhotoSize.width, kPhotoSize.height))
      << "only libjpeg can tell";
  for (const JpegScale s : kJpegScales) {
    cv::Mat out;
    JpegMessages before;
    ASSERT_TRUE(decodeJpeg(good, kPhotoSize, s.reduction, s.grey, out, before));
    JpegMessages messages;
    auto ok = decodeSilently(damaged, s.reduction, s.grey, out, messages);
    ASSERT_FALSE(ok.has_value()) << "1/" << s.reduction << " grey " << s.grey;
    EXPECT_EQ(ok.error().code, ErrorCode::kInvalidData);
    EXPECT_EQ(ok.error().message.rfind("corrupt frame: Corrupt JPEG data: ", 0), 0U)
        << ok.error().message;
    EXPECT_TRUE(messages.damaged());
    EXPECT_TRUE(jpegSaysDamage(messages));
    EXPECT_TRUE(out.empty()) << "no picture, never the previous one";
  }
}

TEST_F(JpegFrameTest, ARegionDecodesToTheFullDecodesPixelsThereAndOnlyThem) {
  // A 1080p camera's picture: regions at the corners, off the iMCU grid, and the whole.
  const cv::Size size(1920, 1080);
  const auto jpeg = testing::photographJpeg(size);
  cv::Mat full;
  JpegMessages messages;
  ASSERT_TRUE(decodeJpeg(jpeg, size, 1, false, full, messages));
  cv::Mat region;
  cv::Mat scratch;
  for (const cv::Rect r :
       {cv::Rect(0, 0, 416, 416), cv::Rect(1001, 333, 417, 419), cv::Rect(1504, 664, 416, 416),
        cv::Rect(7, 9, 640, 640), cv::Rect(0, 0, 1920, 1080)}) {
    ::testing::internal::CaptureStderr();
    auto ok = decodeJpegRegion(jpeg, size, r, region, scratch, messages);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
    ASSERT_TRUE(ok.has_value()) << ok.error().message;
    EXPECT_FALSE(messages.saidAny());
    ASSERT_EQ(region.size(), r.size());
    EXPECT_EQ(cv::norm(region, full(r), cv::NORM_INF), 0.0) << r;
  }
  // The picture's region, through the picture a camera keeps (CapturedPicture::bgrRegion).
  CapturedPicture picture;
  picture.setJpeg(jpeg, size);
  auto taken = picture.bgrRegion(cv::Rect(1001, 333, 417, 419));
  ASSERT_TRUE(taken.has_value()) << taken.error().message;
  EXPECT_EQ(cv::norm(*taken, full(cv::Rect(1001, 333, 417, 419)), cv::NORM_INF), 0.0);
  EXPECT_EQ(picture.decodes(), 1U);
}

TEST_F(JpegFrameTest, ARegionOfADamagedPictureIsRefusedAsTheWholePictureIs) {
  // The damage is in the scan's last two thirds; the region is at the top, decoded before it.
  const auto damaged = testing::damagedJpeg(good);
  cv::Mat region;
  cv::Mat scratch;
  JpegMessages messages;
  ::testing::internal::CaptureStderr();
  auto ok =
      decodeJpegRegion(damaged, kPhotoSize, cv::Rect(0, 0, 200, 64), region, scratch, messages);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_FALSE(ok.has_value());
  EXPECT_EQ(ok.error().message.rfind("corrupt frame: Corrupt JPEG data: ", 0), 0U)
      << ok.error().message;
  EXPECT_TRUE(jpegSaysDamage(messages));
  auto cut = decodeJpegRegion(testing::truncatedJpeg(good), kPhotoSize, cv::Rect(0, 0, 200, 64),
                              region, scratch, messages);
  ASSERT_FALSE(cut.has_value());
  EXPECT_TRUE(jpegSaid(messages, JpegMessageKind::kTruncated));
}

// `jpeg` refused at every scale as a corrupt frame with libjpeg's `text`, sorted into `kind`, and
// no picture given.
void expectRefusedAtEveryScale(const std::vector<std::uint8_t>& jpeg, JpegMessageKind kind,
                               const std::string& text) {
  for (const JpegScale s : kJpegScales) {
    cv::Mat out;
    JpegMessages messages;
    auto ok = decodeSilently(jpeg, s.reduction, s.grey, out, messages);
    ASSERT_FALSE(ok.has_value()) << "1/" << s.reduction << " grey " << s.grey;
    EXPECT_EQ(ok.error().message, "corrupt frame: " + text);
    EXPECT_TRUE(jpegSaid(messages, kind));
    EXPECT_EQ(messages.textOf(kind), text);
    EXPECT_TRUE(out.empty());
  }
}

TEST_F(JpegFrameTest, ACutShortPictureIsACorruptFrameSaidTruncated) {
  expectRefusedAtEveryScale(testing::truncatedJpeg(good), JpegMessageKind::kTruncated,
                            "Corrupt JPEG data: premature end of data segment");
}

TEST_F(JpegFrameTest, AScanOfOnesIsACorruptFrameSaidDamagedData) {
  expectRefusedAtEveryScale(testing::onesJpeg(good), JpegMessageKind::kDamagedData,
                            "Corrupt JPEG data: bad Huffman code");
  EXPECT_EQ(jpegMessageKindName(JpegMessageKind::kDamagedData), std::string("damaged_data"));
}

TEST_F(JpegFrameTest, StrayBytesBeforeTheEndMarkerAreHarmlessAndThePictureIsUsed) {
  const auto padded = testing::extraneousBytesJpeg(good, 24);
  for (const JpegScale s : kJpegScales) {
    cv::Mat out, expected;
    JpegMessages messages;
    auto ok = decodeSilently(padded, s.reduction, s.grey, out, messages);
    ASSERT_TRUE(ok.has_value()) << ok.error().message;
    EXPECT_TRUE(jpegSaid(messages, JpegMessageKind::kExtraneousBytes));
    // libjpeg counts those it had not taken into its bit buffer already.
    EXPECT_TRUE(
        messages.textOf(JpegMessageKind::kExtraneousBytes).starts_with("Corrupt JPEG data: "));
    EXPECT_TRUE(messages.textOf(JpegMessageKind::kExtraneousBytes)
                    .ends_with(" extraneous bytes before marker 0xd9"))
        << messages.textOf(JpegMessageKind::kExtraneousBytes);
    EXPECT_FALSE(messages.damaged());
    ASSERT_TRUE(decodeJpeg(good, kPhotoSize, s.reduction, s.grey, expected, messages));
    EXPECT_EQ(cv::norm(out, expected, cv::NORM_INF), 0.0) << "the same pixels as without";
  }
}

TEST_F(JpegFrameTest, APictureLibjpegGivesUpOnIsUndecodable) {
  const auto bogus = testing::withBogusHuffmanTable(good);
  cv::Mat out;
  JpegMessages messages;
  auto ok = decodeSilently(bogus, 4, false, out, messages);
  ASSERT_FALSE(ok.has_value());
  EXPECT_TRUE(jpegSaid(messages, JpegMessageKind::kUndecodable));
  EXPECT_EQ(ok.error().message, "corrupt frame: Bogus Huffman table definition");
  EXPECT_EQ(jpegMessageKindName(JpegMessageKind::kUndecodable), "undecodable");
}

// A V4L2 MJPEG buffer: the capture-time check lets a damaged picture through (its markers and
// size are right); decoding it, whole or on demand, refuses it.
TEST_F(JpegFrameTest, V4l2MjpegBuffersDamagedOrCutAreCorruptPaddedOnesAreUsed) {
  for (const auto& bad : {testing::damagedJpeg(good), testing::truncatedJpeg(good)}) {
    CapturedPicture picture;
    ASSERT_TRUE(
        captureV4l2Frame(V4L2_PIX_FMT_MJPEG, bad, kPhotoSize.width, kPhotoSize.height, 0, picture));
    EXPECT_FALSE(picture.bgr(cv::Size(320, 240)).has_value());
    cv::Mat out;
    auto whole =
        decodeV4l2Frame(V4L2_PIX_FMT_MJPEG, bad, kPhotoSize.width, kPhotoSize.height, 0, out);
    ASSERT_FALSE(whole.has_value());
    EXPECT_EQ(whole.error().message.rfind("corrupt frame: Corrupt JPEG data", 0), 0U);
  }
  cv::Mat out;
  EXPECT_TRUE(decodeV4l2Frame(V4L2_PIX_FMT_MJPEG, testing::extraneousBytesJpeg(good),
                              kPhotoSize.width, kPhotoSize.height, 0, out));
  EXPECT_EQ(out.size(), kPhotoSize);
}

// What a camera's pictures' decoding found, in its account: counted once a picture however
// many sizes are asked, logged once with the camera's name, the picture never given.
TEST_F(JpegFrameTest, ACamerasDamagedPicturesAreCountedOnceEachAndLoggedOnce) {
  auto account = std::make_shared<DecodeAccount>();
  account->setCamera("door");
  testing::LogCapture log("capture");
  const std::vector<std::vector<std::uint8_t>> damaged = {
      testing::damagedJpeg(good, 1), testing::damagedJpeg(good, 2), testing::damagedJpeg(good, 3)};
  CapturedPicture picture;
  picture.billTo(account);
  for (const auto& bytes : damaged) {
    picture.setJpeg(bytes, kPhotoSize);
    EXPECT_FALSE(picture.grey(160).has_value());    // the motion gate
    auto pixels = picture.bgr(cv::Size(416, 312));  // the detector
    ASSERT_FALSE(pixels.has_value());
    EXPECT_EQ(pixels.error().message.rfind("corrupt frame: Corrupt JPEG data", 0), 0U);
    EXPECT_FALSE(picture.bgr().has_value());  // the page
    EXPECT_EQ(picture.decodes(), 0U) << "refused once, not decoded again at another size";
  }
  EXPECT_EQ(account->corrupt(), 3U);
  EXPECT_EQ(account->messages(JpegMessageKind::kDamagedData) +
                account->messages(JpegMessageKind::kTruncated),
            3U);
  EXPECT_EQ(account->frames.load(), 0U) << "no picture was made";
  EXPECT_TRUE(account->corruptFor(std::chrono::seconds(0)));
  EXPECT_FALSE(account->corruptFor(std::chrono::hours(1)));
  EXPECT_EQ(account->lastRefusal().rfind("corrupt frame: Corrupt JPEG data", 0), 0U);
  // UVC-style padded pictures: counted, used, said once at info.
  for (int i = 0; i < 3; ++i) {
    picture.setJpeg(testing::extraneousBytesJpeg(good), kPhotoSize);
    ASSERT_TRUE(picture.bgr(cv::Size(416, 312)).has_value());
  }
  EXPECT_EQ(account->corrupt(), 3U);
  EXPECT_EQ(account->messages(JpegMessageKind::kExtraneousBytes), 3U);
  EXPECT_FALSE(account->corruptFor(std::chrono::seconds(0))) << "a usable picture ends the run";
  const std::string text = log.text();
  EXPECT_EQ(testing::occurrences(text, "[cam=door] JPEG decoder: "),
            (account->messages(JpegMessageKind::kDamagedData) > 0 ? 1U : 0U) +
                (account->messages(JpegMessageKind::kTruncated) > 0 ? 1U : 0U) + 1U)
      << "once a minute per kind\n"
      << text;
  EXPECT_EQ(testing::occurrences(text, "[cam=door] JPEG decoder: Corrupt JPEG data: "), 2U) << text;
  EXPECT_EQ(testing::occurrences(text,
                                 " extraneous bytes before marker 0xd9 (extraneous_bytes: "
                                 "harmless, the picture is used)"),
            1U)
      << text;
  // A kept copy of a refused picture is refused too, and not counted again.
  picture.setJpeg(damaged[0], kPhotoSize);
  ASSERT_FALSE(picture.grey(160).has_value());
  CapturedPicture kept;
  kept.assign(picture);
  EXPECT_FALSE(kept.bgr().has_value());
  EXPECT_EQ(account->corrupt(), 4U);
}

// An MJPEG file (or an MJPEG stream: the same reader) keeps its pictures as JPEGs; a damaged
// or cut one is read, then refused when decoded, and the stream goes on.
TEST_F(JpegFrameTest, MjpegFilePicturesDamagedOrCutAreRefusedWhenDecoded) {
  TempDir dir;
  const auto path = dir.path() / "door.mjpeg";
  const std::vector<std::vector<std::uint8_t>> pictures = {
      good, testing::damagedJpeg(good), testing::truncatedJpeg(good),
      testing::extraneousBytesJpeg(good), good};
  {
    std::ofstream file(path, std::ios::binary);
    for (const auto& p : pictures) {
      file.write(reinterpret_cast<const char*>(p.data()), static_cast<std::streamsize>(p.size()));
    }
  }
  FfmpegReader reader(path.string());
  auto info = reader.open(std::chrono::seconds(5), false);
  ASSERT_TRUE(info.has_value()) << info.error().message;
  auto account = std::make_shared<DecodeAccount>();
  CapturedPicture picture;
  picture.billTo(account);
  std::vector<bool> usable;
  for (std::size_t i = 0; i < pictures.size(); ++i) {
    auto read = reader.read(picture, std::chrono::seconds(5));
    ASSERT_TRUE(read.has_value()) << i << ": " << read.error().message;
    ASSERT_EQ(picture.form(), PictureForm::kJpeg);
    usable.push_back(picture.bgr(cv::Size(320, 240)).has_value());
  }
  EXPECT_EQ(usable, (std::vector<bool>{true, false, false, true, true}));
  EXPECT_EQ(account->corrupt(), 2U);
  EXPECT_EQ(account->messages(JpegMessageKind::kExtraneousBytes), 1U);
}

}  // namespace
}  // namespace vigil
