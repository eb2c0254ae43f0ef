// `vigil run` (runDaemon), on its own, in this process: a configuration that cannot be read or a
// summary that cannot be written ends it with 1 before anything runs, and a run of a given
// duration stops by itself, cleanly, and writes its summary. The binary under systemd, signals
// and reloads are the integration tests' (run_daemon_test, systemd_daemon_test).
#include "daemon/service/daemon.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "foundation/background_work.h"
#include "tests/log_capture.h"
#include "tests/model_paths.h"
#include "tests/temp_dir.h"
#include "tests/wait.h"

namespace vigil {
namespace {

// runDaemon ends the process itself when detached work is left (a load that could not be cut):
// this process must have none, or the test binary would end with it. An earlier test's thread
// left behind may still be ending.
class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::waitUntil([] { return background::detachedRunning() == 0; }))
        << "detached work left by an earlier test";
    setLogLevel(spdlog::level::info);
  }

  // A configuration replaying the shared clip as camera "door", HTTP on a free loopback port,
  // the CPU reference detector, no MQTT.
  std::filesystem::path doorConfig() {
    const auto file = dir.path() / "cameras.yaml";
    writeFile(file,
              "version: 1\n"
              "node: unit\n"
              "detector:\n"
              "  model: " +
                  testing::modelDir().string() +
                  "\n"
                  "  backend: cpu\n"
                  "http:\n"
                  "  listen: 127.0.0.1:0\n"
                  "cameras:\n"
                  "  - name: door\n"
                  "    source: file:" +
                  (testing::videosDir() / "TUD-Campus.mp4").string() +
                  "\n"
                  "    loop: true\n");
    return file;
  }

  TempDir dir;
};

TEST_F(DaemonTest, AConfigurationThatCannotBeReadIs1AndSaysHowToGiveOne) {
  testing::LogCapture log("daemon");
  RunOptions options;
  options.configPath = dir.path() / "missing.yaml";
  EXPECT_EQ(runDaemon(options), 1);
  EXPECT_NE(log.text().find("give the configuration with `vigil run --config FILE`"),
            std::string::npos)
      << log.text();
}

TEST_F(DaemonTest, ASummaryThatCannotBeWrittenIs1BeforeAnythingRuns) {
  testing::LogCapture log("daemon");
  RunOptions options;
  options.configPath = doorConfig();
  options.summaryJson = dir.path() / "missing" / "summary.json";
  EXPECT_EQ(runDaemon(options), 1);
  EXPECT_NE(
      log.text().find("--summary-json " + options.summaryJson.string() + ": cannot write there"),
      std::string::npos)
      << log.text();
  EXPECT_EQ(log.text().find("running "), std::string::npos) << "no camera started";
}

TEST_F(DaemonTest, ARunOfAGivenDurationStopsByItselfAndWritesItsSummary) {
  VIGIL_REQUIRE_MODEL();
  ASSERT_TRUE(std::filesystem::exists(testing::videosDir() / "TUD-Campus.mp4"));
  RunOptions options;
  options.configPath = doorConfig();
  options.durationSeconds = 1;
  options.summaryJson = dir.path() / "summary.json";
  options.stateDir = dir.path();
  testing::LogCapture log("daemon");  // the daemon's own lines come from this thread
  EXPECT_EQ(runDaemon(options), 0);
  const std::string said = log.text();
  EXPECT_NE(
      said.find("running 1 camera(s) from " + options.configPath.string() + " as node 'unit'"),
      std::string::npos)
      << said;
  EXPECT_NE(said.find("--duration reached, stopping\n"), std::string::npos) << said;
  EXPECT_TRUE(said.ends_with("stopped\n")) << said;

  std::ifstream in(options.summaryJson);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json summary = nlohmann::json::parse(text.str());
  EXPECT_GE(summary["seconds"].get<double>(), 1.0) << "it ran its duration";
  ASSERT_TRUE(summary["cameras"].contains("door")) << summary.dump();
  EXPECT_TRUE(summary["cameras"]["door"].contains("captured"));
  EXPECT_FALSE(summary.contains("mqtt")) << "no MQTT section";
  EXPECT_EQ(background::detachedRunning(), 0) << "everything it started has ended";
}

}  // namespace
}  // namespace vigil
