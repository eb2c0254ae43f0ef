// What of the V4L2 code can be checked without a camera: directory scanning, the text and JSON
// listings, open() on nodes that are not cameras, and the frame conversion and timestamps.
// Streaming from a real driver is covered by the vivid VM tests.
#include "daemon/capture/v4l2/v4l2_devices.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <linux/videodev2.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <sstream>

#include "daemon/capture/v4l2/v4l2_source.h"
#include "daemon/commands/cameras_command.h"
#include "daemon/settings/settings.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& path) { std::ofstream(path) << "not a camera\n"; }

TEST(ListV4l2DevicesTest, EmptyDirectoryHasNoDevicesAndTheTextSaysWhere) {
  TempDir dir;
  auto devices = listV4l2Devices(dir.path());
  EXPECT_TRUE(devices.empty());
  EXPECT_EQ(formatV4l2Devices(devices, dir.path()),
            "no V4L2 devices found in " + dir.path().string() + "\n");
  EXPECT_EQ(formatV4l2Devices({}), "no V4L2 devices found in /dev\n");
}

TEST(ListV4l2DevicesTest, MissingDirectoryIsAnEmptyList) {
  TempDir dir;
  EXPECT_TRUE(listV4l2Devices(dir.path() / "nope").empty());
}

TEST(ListV4l2DevicesTest, RegularFilesAreListedAsNotCaptureInNumericOrder) {
  TempDir dir;
  for (const char* name : {"video10", "video0", "video2", "video", "videox", "video1p", "media0"}) {
    touch(dir.path() / name);
  }
  auto devices = listV4l2Devices(dir.path());
  ASSERT_EQ(devices.size(), 3U);
  EXPECT_EQ(devices[0].path, (dir.path() / "video0").string());
  EXPECT_EQ(devices[1].path, (dir.path() / "video2").string());
  EXPECT_EQ(devices[2].path, (dir.path() / "video10").string());
  for (const auto& device : devices) {
    EXPECT_FALSE(device.capture);
    EXPECT_TRUE(device.formats.empty());
    EXPECT_EQ(device.error, "not a character device");
  }
  EXPECT_NE(
      formatV4l2Devices(devices, dir.path()).find(devices[0].path + ": not a character device\n"),
      std::string::npos);
}

TEST(ListV4l2DevicesTest, CharacterDeviceThatIsNotV4l2IsReportedNotCapture) {
  TempDir dir;
  fs::create_symlink("/dev/null", dir.path() / "video0");
  auto devices = listV4l2Devices(dir.path());
  ASSERT_EQ(devices.size(), 1U);
  EXPECT_FALSE(devices[0].capture);
  EXPECT_NE(devices[0].error.find("not a V4L2 device"), std::string::npos) << devices[0].error;
  EXPECT_NE(devices[0].error.find("ENOTTY"), std::string::npos) << devices[0].error;
}

TEST(ListV4l2DevicesTest, StableLinksThatResolveToTheNodeAreShown) {
  TempDir dir;
  touch(dir.path() / "video0");
  touch(dir.path() / "video1");
  fs::create_directories(dir.path() / "v4l" / "by-id");
  fs::create_directories(dir.path() / "v4l" / "by-path");
  fs::create_symlink("../../video0", dir.path() / "v4l" / "by-id" / "usb-Cam-video-index0");
  fs::create_symlink("../../video0", dir.path() / "v4l" / "by-path" / "pci-0000-usb-0:1");
  fs::create_symlink("../../video9", dir.path() / "v4l" / "by-id" / "dangling");
  auto devices = listV4l2Devices(dir.path());
  ASSERT_EQ(devices.size(), 2U);
  const fs::path v4l = dir.path() / "v4l";
  EXPECT_EQ(devices[0].links,
            (std::vector<std::string>{(v4l / "by-id/usb-Cam-video-index0").string(),
                                      (v4l / "by-path/pci-0000-usb-0:1").string()}));
  EXPECT_TRUE(devices[1].links.empty());
  EXPECT_NE(
      formatV4l2Devices(devices).find("  also: " + (v4l / "by-id/usb-Cam-video-index0").string()),
      std::string::npos);
}

V4l2DeviceInfo webcam() {
  V4l2DeviceInfo device;
  device.path = "/dev/video0";
  device.driver = "uvcvideo";
  device.card = "HD Webcam";
  device.busInfo = "usb-0000:00:14.0-1";
  device.capabilities = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING;
  device.capture = true;
  device.links = {"/dev/v4l/by-id/usb-HD_Webcam-video-index0"};
  device.formats = {
      {"MJPG", "Motion-JPEG", {{1280, 720, {30, 15}, false}, {640, 480, {30, 12.5}, false}}, false},
      {"YUYV", "YUYV 4:2:2", {{640, 480, {}, false}}, false},
      {"NV12", "Y/UV 4:2:0", {{16, 16, {60, 1}, true}, {1920, 1080, {30, 1}, true}}, true},
      {"GREY", "8-bit Greyscale", {}, false},
  };
  return device;
}

TEST(FormatV4l2DevicesTest, OneBlockPerDeviceWithFormatsSizesAndRates) {
  V4l2DeviceInfo metadata;
  metadata.path = "/dev/video1";
  metadata.driver = "uvcvideo";
  metadata.card = "HD Webcam";
  metadata.capabilities = V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING;
  V4l2DeviceInfo locked;
  locked.path = "/dev/video2";
  locked.error = "permission denied (is the user in the video group?)";
  EXPECT_EQ(formatV4l2Devices({webcam(), metadata, locked}),
            "/dev/video0: HD Webcam (driver uvcvideo, bus usb-0000:00:14.0-1)\n"
            "  also: /dev/v4l/by-id/usb-HD_Webcam-video-index0\n"
            "  MJPG Motion-JPEG\n"
            "    1280x720 @ 30, 15 fps\n"
            "    640x480 @ 30, 12.5 fps\n"
            "  YUYV YUYV 4:2:2\n"
            "    640x480\n"
            "  NV12 Y/UV 4:2:0\n"
            "    any size from 16x16 @ 1 to 60 fps\n"
            "             to 1920x1080 @ 1 to 30 fps\n"
            "  GREY 8-bit Greyscale\n"
            "    sizes: not reported\n"
            "/dev/video1: not a capture device (HD Webcam, driver uvcvideo, caps 0x04800000)\n"
            "/dev/video2: permission denied (is the user in the video group?)\n");
}

TEST(FourccToStringTest, PrintableTrimmedAndBigEndianMarked) {
  EXPECT_EQ(fourccToString(V4L2_PIX_FMT_YUYV), "YUYV");
  EXPECT_EQ(fourccToString(V4L2_PIX_FMT_MJPEG), "MJPG");
  EXPECT_EQ(fourccToString(V4L2_PIX_FMT_Y10), "Y10");
  EXPECT_EQ(fourccToString(v4l2_fourcc_be('X', 'R', '2', '4')), "XR24-BE");
  EXPECT_EQ(fourccToString(0x01020341), "A???");
}

TEST(CamerasCommandTest, NoDevicesIsSuccessInTextAndJson) {
  TempDir dir;
  CamerasCommandOptions options;
  options.devDir = dir.path();
  std::ostringstream text;
  EXPECT_EQ(runCamerasCommand(options, text), 0);
  EXPECT_EQ(text.str(), "no V4L2 devices found in " + dir.path().string() + "\n");
  options.json = true;
  std::ostringstream json;
  EXPECT_EQ(runCamerasCommand(options, json), 0);
  EXPECT_EQ(nlohmann::json::parse(json.str()), nlohmann::json::array());
}

TEST(CamerasCommandTest, JsonListsNodesThatAreNotCameras) {
  TempDir dir;
  fs::create_symlink("/dev/null", dir.path() / "video0");
  CamerasCommandOptions options;
  options.devDir = dir.path();
  options.json = true;
  std::ostringstream out;
  EXPECT_EQ(runCamerasCommand(options, out), 0);
  auto json = nlohmann::json::parse(out.str());
  ASSERT_EQ(json.size(), 1U);
  EXPECT_EQ(json[0]["path"], (dir.path() / "video0").string());
  EXPECT_EQ(json[0]["capture"], false);
  EXPECT_TRUE(json[0]["formats"].empty());
  EXPECT_NE(json[0]["error"].get<std::string>().find("not a V4L2 device"), std::string::npos);
}

CameraConfig cameraAt(const std::string& location) {
  CameraConfig camera;
  camera.name = "test";
  camera.source = location;
  camera.location = location;
  return camera;
}

TEST(V4l2SourceTest, MissingDeviceIsUnavailableSoTheSupervisorRetries) {
  TempDir dir;
  auto source = makeV4l2Source(cameraAt((dir.path() / "video7").string()));
  auto info = source->open();
  ASSERT_FALSE(info.has_value());
  EXPECT_EQ(info.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(info.error().message, (dir.path() / "video7").string() + ": no such device");
}

TEST(V4l2SourceTest, DanglingStableLinkIsUnavailable) {
  TempDir dir;
  fs::create_symlink(dir.path() / "video7", dir.path() / "usb-Cam-video-index0");
  auto source = makeV4l2Source(cameraAt((dir.path() / "usb-Cam-video-index0").string()));
  auto info = source->open();
  ASSERT_FALSE(info.has_value());
  EXPECT_EQ(info.error().code, ErrorCode::kUnavailable);
}

TEST(V4l2SourceTest, NodeThatIsNotACameraIsInvalidArgument) {
  TempDir dir;
  touch(dir.path() / "video0");
  for (const std::string& path : {std::string("/dev/null"), (dir.path() / "video0").string()}) {
    auto source = makeV4l2Source(cameraAt(path));
    auto info = source->open();
    ASSERT_FALSE(info.has_value()) << path;
    EXPECT_EQ(info.error().code, ErrorCode::kInvalidArgument) << path;
    EXPECT_EQ(info.error().message.rfind(path + ": not a video capture device (", 0), 0U)
        << info.error().message;
  }
}

// The open error of `node` as an unprivileged user sees it: in a child process that, when this
// one is root (CI), first drops to nobody (uid and gid 65534, no supplementary groups), so that
// the node's permissions apply. "code|message" of the error; "opened" when it opened.
std::string openErrorAsUnprivileged(const fs::path& node) {
  int pipeFds[2];
  if (::pipe(pipeFds) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipeFds[0]);
    std::string said;
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
         ::setresuid(65534, 65534, 65534) != 0)) {
      said = "cannot drop to nobody";
    } else {
      auto info = makeV4l2Source(cameraAt(node.string()))->open();
      said = info
                 ? "opened"
                 : std::to_string(static_cast<int>(info.error().code)) + "|" + info.error().message;
    }
    const bool written =
        ::write(pipeFds[1], said.data(), said.size()) == static_cast<ssize_t>(said.size());
    ::_exit(written ? 0 : 1);
  }
  ::close(pipeFds[1]);
  if (child < 0) {
    ::close(pipeFds[0]);
    return "fork failed";
  }
  std::string said;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipeFds[0], buffer, sizeof buffer)) > 0;) {
    said.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipeFds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return said;
}

TEST(V4l2SourceTest, UnreadableNodeNamesTheVideoGroup) {
  TempDir dir;
  fs::permissions(dir.path(), fs::perms(0755));  // nobody may look inside, not open the node
  const fs::path node = dir.path() / "video0";
  touch(node);
  fs::permissions(node, fs::perms::none);
  EXPECT_EQ(openErrorAsUnprivileged(node),
            std::to_string(static_cast<int>(ErrorCode::kUnavailable)) + "|" + node.string() +
                ": permission denied (is the user in the video group?)");
}

TEST(V4l2SourceTest, ReadBeforeOpenAndRepeatedCloseAreSafe) {
  auto source = makeV4l2Source(cameraAt("/dev/null"));
  Frame frame;
  auto read = source->read(frame, std::chrono::milliseconds(10));
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code, ErrorCode::kUnavailable);
  EXPECT_FALSE(source->open().has_value());
  source->close();
  source->close();
  EXPECT_FALSE(source->read(frame, std::chrono::milliseconds(0)).has_value());
}

// A YUYV picture: black left half (Y=16), white right half (Y=235), neutral chroma, and
// `padding` bytes of junk at the end of every row.
std::vector<std::uint8_t> yuyvHalves(int width, int height, int padding) {
  const int stride = width * 2 + padding;
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(stride) * height, 0xAB);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      auto* p = &bytes[static_cast<std::size_t>(y) * stride + static_cast<std::size_t>(x) * 2];
      p[0] = x < width / 2 ? 16 : 235;
      p[1] = 128;
    }
  }
  return bytes;
}

TEST(DecodeV4l2FrameTest, YuyvHonoursBytesPerLineAndReusesStorage) {
  const int width = 8, height = 4, padding = 16;
  auto bytes = yuyvHalves(width, height, padding);
  cv::Mat out;
  auto ok = decodeV4l2Frame(V4L2_PIX_FMT_YUYV, bytes, width, height, width * 2 + padding, out);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  ASSERT_EQ(out.size(), cv::Size(width, height));
  ASSERT_EQ(out.type(), CV_8UC3);
  EXPECT_EQ(out.at<cv::Vec3b>(3, 0), cv::Vec3b(0, 0, 0));
  EXPECT_EQ(out.at<cv::Vec3b>(3, width - 1), cv::Vec3b(255, 255, 255));
  const uchar* storage = out.data;
  ASSERT_TRUE(decodeV4l2Frame(V4L2_PIX_FMT_YUYV, bytes, width, height, width * 2 + padding, out));
  EXPECT_EQ(out.data, storage);
}

TEST(DecodeV4l2FrameTest, ShortYuyvBufferIsACorruptFrame) {
  auto bytes = yuyvHalves(8, 4, 0);
  bytes.pop_back();  // one byte short
  cv::Mat out;
  auto r = decodeV4l2Frame(V4L2_PIX_FMT_YUYV, bytes, 8, 4, 16, out);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidData);
  EXPECT_EQ(r.error().message.rfind("corrupt frame", 0), 0U) << r.error().message;
}

std::vector<std::uint8_t> jpeg(int width, int height) {
  cv::Mat image(height, width, CV_8UC3, cv::Scalar(40, 90, 200));
  std::vector<std::uint8_t> bytes;
  cv::imencode(".jpg", image, bytes);
  return bytes;
}

// The bytes of the JPEG segment whose marker is at `at`: the marker and its length-counted rest.
std::size_t segmentSize(const std::vector<std::uint8_t>& bytes, std::size_t at) {
  return 2 + ((std::size_t{bytes[at + 2]} << 8) | bytes[at + 3]);
}

// Where a JPEG's frame header (FF C0) begins: the segments before it all carry lengths.
std::size_t frameHeaderAt(const std::vector<std::uint8_t>& bytes) {
  std::size_t at = 2;
  while (!(bytes[at] == 0xFF && bytes[at + 1] == 0xC0)) at += segmentSize(bytes, at);
  return at;
}

TEST(DecodeV4l2FrameTest, MjpegDecodesIntoTheSameStorage) {
  auto bytes = jpeg(64, 48);
  cv::Mat out;
  ASSERT_TRUE(decodeV4l2Frame(V4L2_PIX_FMT_MJPEG, bytes, 64, 48, 0, out));
  ASSERT_EQ(out.size(), cv::Size(64, 48));
  ASSERT_EQ(out.type(), CV_8UC3);
  cv::Vec3b pixel = out.at<cv::Vec3b>(20, 30);
  EXPECT_NEAR(pixel[0], 40, 4);
  EXPECT_NEAR(pixel[2], 200, 4);
  const uchar* storage = out.data;
  // Webcams may zero-fill the buffer after the end marker.
  bytes.resize(bytes.size() + 1000, 0);
  ASSERT_TRUE(decodeV4l2Frame(V4L2_PIX_FMT_JPEG, bytes, 64, 48, 0, out));
  EXPECT_EQ(out.data, storage);
}

TEST(DecodeV4l2FrameTest, BrokenJpegsAreCorruptFramesNotStalePictures) {
  cv::Mat out(48, 64, CV_8UC3, cv::Scalar(1, 2, 3));
  auto cut = jpeg(64, 48);
  cut.resize(cut.size() * 2 / 3);
  std::vector<std::uint8_t> notJpeg(4096, 0x55);
  std::vector<std::uint8_t> noMarker = {0xFF, 0xD8, 0x12, 0x34, 0x56, 0xFF, 0xD9};
  std::vector<std::uint8_t> markersOnly = {0xFF, 0xD8, 0xFF, 0x12, 0x34, 0xFF, 0xD9};
  for (const auto& bytes : {cut, notJpeg, noMarker, markersOnly, std::vector<std::uint8_t>{}}) {
    auto r = decodeV4l2Frame(V4L2_PIX_FMT_MJPEG, bytes, 64, 48, 0, out);
    ASSERT_FALSE(r.has_value()) << bytes.size();
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidData);
    EXPECT_EQ(r.error().message.rfind("corrupt frame", 0), 0U) << r.error().message;
  }
}

TEST(DecodeV4l2FrameTest, JpegOfAnotherSizeThanTheStreamIsACorruptFrame) {
  cv::Mat out;
  auto r = decodeV4l2Frame(V4L2_PIX_FMT_MJPEG, jpeg(32, 48), 64, 48, 0, out);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "corrupt frame: JPEG says 32x48, the stream is 64x48");

  // A damaged frame header declaring 60000x60000 is refused before the decoder would
  // allocate 10 GB for it.
  auto bytes = jpeg(64, 48);
  const std::size_t sof = frameHeaderAt(bytes);
  bytes[sof + 5] = bytes[sof + 7] = 0xEA;
  bytes[sof + 6] = bytes[sof + 8] = 0x60;
  r = decodeV4l2Frame(V4L2_PIX_FMT_MJPEG, bytes, 64, 48, 0, out);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "corrupt frame: JPEG says 60000x60000, the stream is 64x48");
  EXPECT_TRUE(out.empty());
}

TEST(DecodeV4l2FrameTest, SizeCheckedIsTheOneTheDecoderReadsPastStandaloneMarkers) {
  // SOI, then RST0, which has no length. Its next two bytes, read as one, would hop over the
  // whole 32x48 picture to a 64x48 frame header placed after it; the decoder reads the
  // 32x48 one. (Found by frame_decode_fuzzer: the decode "succeeded" at the wrong size.)
  const auto small = jpeg(32, 48);
  const auto large = jpeg(64, 48);
  // The "length" counts itself: its two bytes plus the picture after the picture's SOI.
  const std::size_t hop = 2 + (small.size() - 2);
  std::vector<std::uint8_t> bytes = {0xFF, 0xD8, 0xFF, 0xD0};
  bytes.push_back(static_cast<std::uint8_t>(hop >> 8));
  bytes.push_back(static_cast<std::uint8_t>(hop & 0xFF));
  bytes.insert(bytes.end(), small.begin() + 2, small.end());
  const std::size_t sof = frameHeaderAt(large);
  bytes.insert(bytes.end(), large.begin() + static_cast<std::ptrdiff_t>(sof),
               large.begin() + static_cast<std::ptrdiff_t>(sof + segmentSize(large, sof)));
  bytes.insert(bytes.end(), {0xFF, 0xD9});
  cv::Mat out;
  auto r = decodeV4l2Frame(V4L2_PIX_FMT_MJPEG, bytes, 64, 48, 0, out);
  ASSERT_FALSE(r.has_value()) << out.cols << "x" << out.rows;
  EXPECT_EQ(r.error().message, "corrupt frame: JPEG says 32x48, the stream is 64x48");
}

TEST(DecodeV4l2FrameTest, StrayBytesBetweenSegmentsDecodeAsTheDecoderAllows) {
  // Bytes that start no marker, a stuffed FF 00 and an RST between two segments: libjpeg
  // warns and decodes, so the frame is delivered rather than dropped.
  auto bytes = jpeg(64, 48);
  const std::size_t app0End = 2 + segmentSize(bytes, 2);  // after SOI and APP0
  ASSERT_EQ(bytes[app0End], 0xFF);
  const std::vector<std::uint8_t> stray = {0x12, 0x34, 0xFF, 0x00, 0x56, 0xFF, 0xD3};
  bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(app0End), stray.begin(), stray.end());
  cv::Mat out;
  auto r = decodeV4l2Frame(V4L2_PIX_FMT_MJPEG, bytes, 64, 48, 0, out);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(out.size(), cv::Size(64, 48));
  EXPECT_NEAR(out.at<cv::Vec3b>(20, 30)[2], 200, 4);
}

TEST(DecodeV4l2FrameTest, OtherPixelFormatsAreUnsupported) {
  std::vector<std::uint8_t> bytes(64 * 48 * 3);
  cv::Mat out;
  auto r = decodeV4l2Frame(V4L2_PIX_FMT_BGR24, bytes, 64, 48, 64 * 3, out);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message.find("BGR3"), std::string::npos);
}

TEST(V4l2CaptureTimeTest, MonotonicBufferTimestampsAreUsedOthersAreNot) {
  const auto now = SteadyClock::time_point(std::chrono::seconds(5000));
  const auto stamped = v4l2CaptureTime(
      V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_SOE, 4999, 250000, now);
  EXPECT_EQ(stamped.time_since_epoch(), std::chrono::milliseconds(4999250));
  EXPECT_EQ(v4l2CaptureTime(V4L2_BUF_FLAG_TIMESTAMP_COPY, 4999, 250000, now), now);
  EXPECT_EQ(v4l2CaptureTime(V4L2_BUF_FLAG_TIMESTAMP_UNKNOWN, 4999, 250000, now), now);
  EXPECT_EQ(v4l2CaptureTime(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC, 0, 0, now), now);
}

TEST(V4l2SequenceGapTest, CountsTheNumbersSkippedAcrossTheWrapAndNothingBackwards) {
  EXPECT_EQ(v4l2SequenceGap(41, 42), 0U);
  EXPECT_EQ(v4l2SequenceGap(41, 45), 3U);
  // vivid's wrap_sequence_number: 2^32 - 1 is followed by 0, then 1.
  EXPECT_EQ(v4l2SequenceGap(0xFFFFFFFFU, 0), 0U);
  EXPECT_EQ(v4l2SequenceGap(0xFFFFFFFEU, 1), 2U);
  // The same number again, or a counter that went back (a driver restart), loses nothing.
  EXPECT_EQ(v4l2SequenceGap(42, 42), 0U);
  EXPECT_EQ(v4l2SequenceGap(42, 7), 0U);
  EXPECT_EQ(v4l2SequenceGap(5, 0xFFFFFFF0U), 0U);
}

TEST(LowestRateCoveringTest, TheLowestOfferedRateThatServesDetectFps) {
  V4l2SizeInfo webcam;
  webcam.fps = {30, 25, 20, 15, 10, 5};  // a typical UVC list, fastest first
  EXPECT_EQ(lowestRateCovering(webcam, 5), 5.0);
  EXPECT_EQ(lowestRateCovering(webcam, 6), 10.0) << "at or above, never below what is needed";
  EXPECT_EQ(lowestRateCovering(webcam, 12.5), 15.0);
  EXPECT_EQ(lowestRateCovering(webcam, 60), 30.0) << "none that fast: the fastest it has";
  V4l2SizeInfo range;
  range.fps = {60, 1};
  range.fpsRange = true;
  EXPECT_EQ(lowestRateCovering(range, 5), 5.0) << "a range offers the rate itself";
  EXPECT_EQ(lowestRateCovering(range, 0.5), 1.0);
  EXPECT_EQ(lowestRateCovering(V4l2SizeInfo{}, 5), std::nullopt) << "the driver lists none";
}

}  // namespace
}  // namespace vigil
