// picture_source from the real daemon: a camera detected on a small H.264 stream shows the
// pictures of its full-size stream (latest.jpg at that size), decodes one of that stream's
// keyframes in 10 s while nobody watches and every picture while somebody does, and a picture
// stream that is lost leaves detection running and says so (/api/status, a metric, the log once).
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>
#include <regex>

#include "tests/http_get.h"
#include "tests/model_paths.h"
#include "tests/occurrences.h"
#include "tests/process.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

constexpr const char* kClipFfmpeg = "/usr/bin/ffmpeg";
constexpr const char* kViewerCurl = "/usr/bin/curl";

// FFmpeg's moving test pattern (nobody in it) as H.264 of `size`, 10 pictures a second, a
// keyframe every 10, 12 s long.
std::filesystem::path testPattern(const std::filesystem::path& dir, const std::string& name,
                                  const std::string& size) {
  const auto out = dir / name;
  testing::ChildProcess ffmpeg({kClipFfmpeg,
                                "-v",
                                "error",
                                "-y",
                                "-f",
                                "lavfi",
                                "-i",
                                "testsrc2=size=" + size + ":rate=10:duration=12",
                                "-c:v",
                                "libx264",
                                "-preset",
                                "ultrafast",
                                "-g",
                                "10",
                                "-keyint_min",
                                "10",
                                "-sc_threshold",
                                "0",
                                "-pix_fmt",
                                "yuv420p",
                                out.string()},
                               dir / (name + ".log"));
  EXPECT_EQ(ffmpeg.wait(), 0) << ffmpeg.log();
  return out;
}

// The camera's picture stream's captured pictures (what FFmpeg decoded) and the camera's own.
struct Counts {
  std::uint64_t pictures = 0;
  std::uint64_t detectFrames = 0;
};

Counts countsOf(testing::VigilDaemon& vigil, const std::string& camera) {
  nlohmann::json c = vigil.camera(camera);
  if (!c.is_object() || !c["picture_stream"].is_object()) return {};
  return {c["picture_stream"]["frames"]["captured"].get<std::uint64_t>(),
          c["frames"]["captured"].get<std::uint64_t>()};
}

// The picture stream's pictures while the detect stream delivers 30 more frames (3 s).
std::uint64_t picturesOver30Frames(testing::VigilDaemon& vigil, const std::string& camera) {
  const Counts start = countsOf(vigil, camera);
  Counts now;
  EXPECT_TRUE(testing::waitUntil([&] {
    now = countsOf(vigil, camera);
    return now.detectFrames >= start.detectFrames + 30;
  })) << vigil.log();
  return now.pictures - start.pictures;
}

TEST(PictureSourceTest, PicturesComeAtTheirSizeDecodedInFullOnlyWhileWatchedAndALossIsSaid) {
  VIGIL_REQUIRE_MODEL();
  ASSERT_EQ(access(kClipFfmpeg, X_OK), 0)
      << "ffmpeg makes the clips (scripts/install-deps.sh --tests)";
  ASSERT_EQ(access(kViewerCurl, X_OK), 0);
  TempDir dir;
  const auto small = testPattern(dir.path(), "sub.mp4", "384x216");
  const auto large = testPattern(dir.path(), "main.mp4", "1536x864");
  testing::VigilDaemon vigil(
      dir.path(), "version: 1\ndetector:\n  model: " + testing::modelDir().string() +
                      "\nhttp: {listen: '127.0.0.1:0'}\n"
                      "cameras:\n"
                      "  - {name: door, source: 'file:" +
                      small.string() + "', picture_source: 'file:" + large.string() +
                      "', loop: true, detect_fps: 5}\n"
                      "  - {name: hall, source: 'file:" +
                      small.string() + "', picture_source: 'file:" +
                      (dir.path() / "gone.mp4").string() + "', loop: true, detect_fps: 5}\n");
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  ASSERT_TRUE(testing::waitUntil([&] {
    nlohmann::json c = vigil.camera("door");
    return c.is_object() && c["picture_stream"]["up"] == true && c["frames"]["detected"] > 0;
  })) << vigil.camera("door").dump()
      << vigil.log();

  // Nobody watches: one keyframe decoded in 10 s (of a stream with a keyframe a second).
  const std::uint64_t unwatched = picturesOver30Frames(vigil, "door");
  EXPECT_LE(unwatched, 1U) << "3 s of a stream nobody watches";

  // latest.jpg: the picture stream's picture, at its size, once one was captured beside a
  // detected frame (keyframes only, one may be too old to draw that frame's boxes on: the
  // detected frame is shown instead; asking makes the stream decode every picture).
  cv::Size served;
  EXPECT_TRUE(testing::waitUntil([&] {
    auto latest = testing::httpGet(vigil.port(), "/api/cameras/door/latest.jpg");
    if (!latest || latest->status != 200) return false;
    served = cv::imdecode(std::vector<unsigned char>(latest->body.begin(), latest->body.end()),
                          cv::IMREAD_COLOR)
                 .size();
    return served == cv::Size(1536, 864);
  })) << served;

  // A viewer of the live stream: every picture decoded while it watches.
  testing::ChildProcess curl(
      {kViewerCurl, "-s", "--max-time", "8", "-o", "/dev/null",
       "http://127.0.0.1:" + std::to_string(vigil.port()) + "/api/cameras/door/stream.mjpeg"},
      dir.path() / "curl.log");
  ASSERT_TRUE(testing::waitUntil([&] {
    return vigil.camera("door")["picture_stream"]["decoding"] == "every picture";
  })) << vigil.camera("door").dump();
  const std::uint64_t watched = picturesOver30Frames(vigil, "door");
  // 3 s at 10 pictures a second, less up to a second's wait for the next keyframe to decode from.
  EXPECT_GE(watched, 15U);
  std::printf("[ pictures ] over 30 detect-stream frames: %llu unwatched, %llu watched\n",
              static_cast<unsigned long long>(unwatched), static_cast<unsigned long long>(watched));
  curl.signal(SIGTERM);
  curl.wait();

  // The lost picture stream: detection goes on, the detected frames are shown, and it is said.
  nlohmann::json hall;
  ASSERT_TRUE(testing::waitUntil([&] {
    hall = vigil.camera("hall");
    return hall.is_object() && hall["frames"]["detected"].get<int>() >= 5 &&
           hall["picture_stream"]["frames"]["open_failures"].get<int>() >= 2;
  })) << hall.dump();
  EXPECT_EQ(hall["picture_stream"]["up"], false);
  EXPECT_EQ(hall["picture_stream"]["shown"], false);
  EXPECT_NE(hall["picture_stream"]["last_error"].get<std::string>().find("gone.mp4"),
            std::string::npos)
      << hall.dump();
  auto metrics = testing::httpGet(vigil.port(), "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NE(metrics->body.find("vigil_camera_picture_stream_up{camera=\"hall\"} 0"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("vigil_camera_picture_stream_up{camera=\"door\"} 1"),
            std::string::npos);
  auto shown = testing::httpGet(vigil.port(), "/api/cameras/hall/latest.jpg");
  ASSERT_TRUE(shown.has_value());
  ASSERT_EQ(shown->status, 200);
  cv::Mat frame = cv::imdecode(std::vector<unsigned char>(shown->body.begin(), shown->body.end()),
                               cv::IMREAD_COLOR);
  EXPECT_EQ(frame.size(), cv::Size(384, 216)) << "the detected frame itself";
  EXPECT_EQ(testing::occurrences(vigil.log(), "[cam=hall/picture] source lost"), 1U)
      << "said once, not at every retry:\n"
      << vigil.log();
  EXPECT_TRUE(vigil.process().stop(SIGTERM).status.has_value());
}

}  // namespace
}  // namespace vigil
