// `vigil detect` on real photographs and a real video, in-process and as the real binary.
#include "daemon/commands/detect_command.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <sstream>

#include "tests/free_port.h"
#include "tests/log_capture.h"
#include "tests/model_paths.h"
#include "tests/mosquitto_broker.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using testing::cocoDir;
using testing::modelDir;
using testing::videosDir;

std::vector<nlohmann::json> jsonLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

struct Run {
  int status;
  std::string output;  // stdout and stderr together
};

Run runBinary(const std::string& args) {
  std::string command = std::string(VIGIL_BINARY) + " " + args + " 2>&1";
  Run run{-1, {}};
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) run.output += buffer.data();
  int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(DetectCommandTest, JsonLinesFollowTheDocumentedSchema) {
  VIGIL_REQUIRE_MODEL();
  VIGIL_REQUIRE_COCO();
  DetectCommandOptions options;
  options.detector.model = modelDir().string();
  options.json = true;
  options.paths = {(cocoDir() / "images/000000000139.jpg").string(),
                   (cocoDir() / "images/000000001000.jpg").string()};
  std::ostringstream out;
  ASSERT_EQ(runDetectCommand(options, out), 0);
  auto lines = jsonLines(out.str());
  ASSERT_EQ(lines.size(), 2U);
  const auto& kids = lines[1];
  EXPECT_EQ(kids["source"], options.paths[1]);
  EXPECT_EQ(kids["frame"], 0);
  EXPECT_EQ(kids["width"], 640);
  EXPECT_EQ(kids["height"], 480);
  // The tennis-court photograph: the reference pipeline finds 12 children at >= 0.3.
  EXPECT_GE(kids["detections"].size(), 10U);
  for (const auto& d : kids["detections"]) {
    EXPECT_EQ(d["class"], "person");
    EXPECT_GE(d["score"].get<double>(), 0.3);
    ASSERT_EQ(d["bbox"].size(), 4U);
    EXPECT_GT(d["bbox"][2].get<double>(), 0);
  }
  for (const char* stage : {"preprocess", "inference", "postprocess"}) {
    EXPECT_GT(kids["timing_ms"][stage].get<double>(), 0) << stage;
  }
}

TEST(DetectCommandTest, BadInputsAreReportedAndTheRestStillProcessed) {
  VIGIL_REQUIRE_MODEL();
  VIGIL_REQUIRE_COCO();
  TempDir dir;
  // A real photograph cut in half: a truncated JPEG.
  std::ifstream in(cocoDir() / "images/000000000139.jpg", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir.path() / "half.jpg", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::ofstream(dir.path() / "fake.mp4") << "not a video";

  DetectCommandOptions options;
  options.detector.model = modelDir().string();
  options.json = true;
  options.paths = {(dir.path() / "missing.jpg").string(), (dir.path() / "half.jpg").string(),
                   (cocoDir() / "images/000000000139.jpg").string(),
                   (dir.path() / "fake.mp4").string()};
  std::ostringstream out;
  testing::LogCapture log("detect");
  EXPECT_EQ(runDetectCommand(options, out), 2);
  auto lines = jsonLines(out.str());
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0]["source"], options.paths[2]);
  // Each bad input named with its reason, the good photograph with none.
  const std::string said = log.text();
  for (const std::string& expected :
       {options.paths[0] + ": no such file or directory",
        options.paths[1] + ": truncated JPEG (no end-of-image marker in the last 64 bytes)",
        options.paths[3] + ": not an image or a video that FFmpeg can open",
        std::string(" person(s) found, 3 input(s) failed")}) {
    EXPECT_NE(said.find(expected + "\n"), std::string::npos) << "missing: " << expected << "\n"
                                                             << said;
  }
  EXPECT_NE(said.find("1 image(s)/frame(s) processed, "), std::string::npos) << said;
  EXPECT_EQ(said.find(options.paths[2]), std::string::npos) << said;
}

TEST(DetectCommandTest, VideoFramesAreNumberedAndAnnotationsWritten) {
  VIGIL_REQUIRE_MODEL();
  auto clip = videosDir() / "TUD-Campus.mp4";
  if (!std::filesystem::exists(clip)) GTEST_SKIP() << "clip absent: " << clip;
  TempDir dir;
  DetectCommandOptions options;
  options.detector.model = modelDir().string();
  options.json = true;
  options.annotateDir = (dir.path() / "annotated").string();
  options.paths = {clip.string()};
  std::ostringstream out;
  ASSERT_EQ(runDetectCommand(options, out), 0);
  auto lines = jsonLines(out.str());
  ASSERT_EQ(lines.size(), 71U);  // every frame of the 71-frame clip
  int withPersons = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["frame"], static_cast<int>(i));
    withPersons += lines[i]["detections"].empty() ? 0 : 1;
  }
  EXPECT_GE(withPersons, 65) << "people walk through every frame of TUD-Campus";
  cv::Mat annotated = cv::imread(options.annotateDir + "/TUD-Campus_000010.jpg");
  ASSERT_FALSE(annotated.empty());
  EXPECT_EQ(annotated.cols, 640);
}

TEST(VigilBinaryTest, WrongModelIsOneClearLineAndExitStatus2) {
  TempDir dir;
  auto run = runBinary("detect --model " + dir.path().string() + " x.jpg");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("model.yaml: no such model manifest"), std::string::npos) << run.output;
}

TEST(VigilBinaryTest, UsageErrorsExit2AndHelpExits0) {
  auto run = runBinary("detect --conf 7 x.jpg");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("--conf"), std::string::npos) << run.output;
  EXPECT_EQ(runBinary("--help").status, 0);
  auto help = runBinary("detect --help");
  EXPECT_NE(help.output.find("daemon's detector.min_score, 0.5"), std::string::npos)
      << "why detect's default differs from the daemon's\n"
      << help.output;
  auto unknown = runBinary("frobnicate");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("vigil: unknown command 'frobnicate'; the commands are run, "
                                "check-config, cameras, detect"),
            std::string::npos)
      << unknown.output;
}

TEST(VigilBinaryTest, VerboseWorksAfterTheCommandAndRunWithoutAConfigSaysHow) {
  TempDir dir;
  const std::string missing = (dir.path() / "cameras.yaml").string();
  for (const std::string& args : {"run -v --config " + missing, "-v run --config " + missing}) {
    auto run = runBinary(args);
    EXPECT_EQ(run.status, 1) << args << "\n" << run.output;
    EXPECT_NE(run.output.find("cannot open"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("vigil run --config FILE"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("config/demo.yaml"), std::string::npos) << run.output;
  }
}

TEST(VigilBinaryTest, MissingImageExit2WithSummary) {
  VIGIL_REQUIRE_MODEL();
  auto run = runBinary("detect --model " + modelDir().string() + " /nonexistent/p.jpg");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.output.find("/nonexistent/p.jpg: no such file or directory"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("1 input(s) failed"), std::string::npos) << run.output;
}

// Beyond the NPU: the configuration, and whether this box reaches what it names. The broker is
// a real one with a login, so the check is a real MQTT connect, not only a TCP one.
TEST(VigilBinaryTest, DoctorChecksTheConfigurationsCamerasAndBroker) {
  VIGIL_REQUIRE_MODEL();
  VIGIL_REQUIRE_MOSQUITTO();
  testing::MosquittoBroker broker({.username = "hall", .password = "right"});
  ASSERT_TRUE(broker.start());
  TempDir dir;
  std::ofstream(dir.path() / "right") << "right\n";
  std::ofstream(dir.path() / "wrong") << "wrong\n";
  std::ofstream(dir.path() / "door.mp4") << "frames";
  const int closed = testing::freeLoopbackPort();  // free now: nothing listens there
  auto config = [&](const std::string& password, const std::string& extraCamera) {
    return "version: 1\nnode: hall\ndetector:\n  model: " + testing::modelDir().string() +
           "\nmqtt:\n  url: " + broker.url() + "\n  username: hall\n  password_file: " + password +
           "\ncameras:\n  - name: door\n    source: 'file:door.mp4'\n" + extraCamera;
  };
  std::ofstream(dir.path() / "good.yaml") << config("right", "");
  std::ofstream(dir.path() / "bad.yaml") << config(
      "wrong", "  - name: gate\n    source: rtsp://admin:secret@127.0.0.1:" +
                   std::to_string(closed) + "/live\n  - name: yard\n    source: /dev/video-none\n");

  auto good = runBinary("doctor --config " + (dir.path() / "good.yaml").string());
  EXPECT_EQ(good.status, 0) << good.output;
  for (const std::string& line :
       {"config           " + (dir.path() / "good.yaml").string() +
            ": valid, node hall, 1 camera(s), MQTT",
        "camera door      file " + (dir.path() / "door.mp4").string() + ": readable",
        "mqtt             " + broker.url() + ": connected with user hall (as vigil-hall-doctor)",
        std::string("setup            every camera and the broker answer")}) {
    EXPECT_NE(good.output.find(line), std::string::npos) << line << "\n" << good.output;
  }

  auto bad = runBinary("doctor --config " + (dir.path() / "bad.yaml").string());
  EXPECT_EQ(bad.status, 1) << bad.output;
  for (const std::string& line :
       {"camera gate      rtsp 127.0.0.1:" + std::to_string(closed) +
            ": UNREACHABLE: Connection refused",
        std::string("camera yard      v4l2 NOT USABLE: /dev/video-none: no such device"),
        "mqtt             " + broker.url() +
            ": NOT CONNECTED: not authorized (bad user name or password)",
        std::string("setup            NOT READY")}) {
    EXPECT_NE(bad.output.find(line), std::string::npos) << line << "\n" << bad.output;
  }
  EXPECT_EQ(bad.output.find("secret"), std::string::npos) << "a camera's password is never shown";
}

}  // namespace
}  // namespace vigil
