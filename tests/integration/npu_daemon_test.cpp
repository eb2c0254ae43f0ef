// `vigil run` with `backend: auto` on the NPU bundle, under XRT's noop shim replaying a wrong
// canary output: the NPU is refused at start and auto runs on the CPU, and the daemon says so
// everywhere the issue asks for: vigil_backend_fallback_total{reason} and vigil_backend_info on
// /metrics (checked by the real promtool), /api/status, and the MQTT status attributes that
// every Home Assistant entity points at (a real mosquitto).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/http_get.h"
#include "tests/mosquitto_broker.h"
#include "tests/mqtt_subscriber.h"
#include "tests/npu/npu_fixtures.h"
#include "tests/process.h"
#include "tests/promtool.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::filesystem::path doorClip() { return testing::videosDir() / "TUD-Campus.mp4"; }

TEST(NpuDaemonTest, AutoFallbackShowsInMetricsStatusAndMqttAttributes) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  VIGIL_REQUIRE_MOSQUITTO();
  if (!std::filesystem::exists(doorClip())) GTEST_SKIP() << "clip absent: " << doorClip();
  if (!testing::NoopXrt::available()) GTEST_SKIP() << "libxrt_noop.so.2 absent";
  testing::NoopXrt noop;  // the environment the daemon inherits
  auto manifest = loadModelManifest(testing::npuBundle());
  ASSERT_TRUE(manifest) << manifest.error().message;
  TempDir replay;
  testing::Recorder rec(*manifest);
  rec.recordCanary(replay.path(), true);  // the NPU returns wrong numbers
  ::setenv("VIGIL_NOOP_REPLAY_DIR", replay.path().c_str(), 1);

  testing::MosquittoBroker broker;
  ASSERT_TRUE(broker.start());
  TempDir dir;
  std::ofstream(dir.path() / "cameras.yaml")
      << "version: 1\nnode: test\ndetector:\n  model: " << testing::npuBundle().string()
      << "\n  backend: auto\nhttp:\n  listen: 127.0.0.1:0\nmqtt:\n  url: " << broker.url()
      << "\n  client_id: vigil-test\ncameras:\n  - {name: door, source: 'file:"
      << doorClip().string() << "', loop: true, detect_fps: 2}\n";
  testing::ChildProcess vigil(
      {VIGIL_BINARY, "run", "--config", (dir.path() / "cameras.yaml").string()},
      dir.path() / "vigil.log");
  ASSERT_TRUE(vigil.waitForLog("/api/status on http://127.0.0.1:", 120s)) << vigil.log();
  std::smatch m;
  const std::string log = vigil.log();
  ASSERT_TRUE(std::regex_search(log, m, std::regex("on http://127\\.0\\.0\\.1:(\\d+)/"))) << log;
  const int port = std::stoi(m[1]);
  EXPECT_NE(log.find("FALLING BACK TO THE CPU (canary_failed)"), std::string::npos) << log;

  auto reply = testing::httpGet(port, "/api/status");
  ASSERT_TRUE(reply && reply->status == 200);
  const json backend = json::parse(reply->body)["backend"];
  EXPECT_EQ(backend["configured"], "auto");
  const std::string inUse = backend["name"].get<std::string>();
  EXPECT_TRUE(inUse == "cpu" || inUse == "cpu-ort") << backend.dump();
  EXPECT_EQ(backend["last_fallback_reason"], "canary_failed") << backend.dump();
  EXPECT_NE(backend["reason"].get<std::string>().find("canary_failed"), std::string::npos);

  auto metrics = testing::httpGet(port, "/metrics");
  ASSERT_TRUE(metrics && metrics->status == 200);
  for (const std::string& series :
       std::vector<std::string>{"vigil_backend_fallback_total{reason=\"canary_failed\"} 1\n",
                                "vigil_backend_fallback_total{reason=\"npu_unavailable\"} 0\n",
                                "vigil_backend_fallback_total{reason=\"invalid_output\"} 0\n",
                                "vigil_backend_fallback_total{reason=\"run_failed\"} 0\n",
                                "vigil_backend_info{backend=\"" + inUse + "\""}) {
    EXPECT_NE(metrics->body.find(series), std::string::npos) << series << metrics->body;
  }
  EXPECT_EQ(metrics->body.find("vigil_backend_fallbacks_total"), std::string::npos);
  EXPECT_EQ(metrics->body.find("vigil_backend_info{backend=\"npu\""), std::string::npos);
  testing::expectPromtoolAccepts(metrics->body, dir.path());

  // MQTT: the retained attributes, and every entity names them. The daemon may still be
  // connecting or sending what it queued while it loaded (the cause of a failure at random
  // when this was read once).
  auto attributes = testing::waitForRetained(broker.url(), "vigil/test/status/attributes");
  ASSERT_TRUE(attributes.has_value()) << vigil.log();
  const json a = json::parse(*attributes);
  EXPECT_EQ(a["name"], inUse);
  EXPECT_EQ(a["last_fallback_reason"], "canary_failed");
  auto discovery =
      testing::waitForRetained(broker.url(), "homeassistant/binary_sensor/test/door_person/config");
  ASSERT_TRUE(discovery.has_value());
  EXPECT_EQ(json::parse(*discovery)["json_attributes_topic"], "vigil/test/status/attributes");

  auto stopped = vigil.stop(SIGTERM);
  ASSERT_TRUE(stopped.status.has_value());
  EXPECT_EQ(*stopped.status, 0) << vigil.log();
}

// Reloads where only one NPU session may exist (RyzenAI-SW#402), under `npu` and `auto`: inference
// stops and the old session is released before the new one opens. To an intact copy of the
// bundle: the new session is in use and detects on the NPU. Then to a bundle whose NPU stage file
// is broken: the new one does not load, and the old bundle is opened again and detects on the
// NPU as before.
// The NPU is XRT's noop shim replaying the canary's expected output (NpuDaemonTest above).
TEST(NpuDaemonTest, AReloadSwapsTheNpuSessionOrReopensTheOldOneUnderNpuAndAuto) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  if (!std::filesystem::exists(doorClip())) GTEST_SKIP() << "clip absent: " << doorClip();
  if (!testing::NoopXrt::available()) GTEST_SKIP() << "libxrt_noop.so.2 absent";
  testing::NoopXrt noop;
  auto manifest = loadModelManifest(testing::npuBundle());
  ASSERT_TRUE(manifest) << manifest.error().message;
  TempDir replay;
  testing::Recorder rec(*manifest);
  rec.recordCanary(replay.path(), false);
  ::setenv("VIGIL_NOOP_REPLAY_DIR", replay.path().c_str(), 1);
  for (const std::string policy : {"npu", "auto"}) {
    SCOPED_TRACE(policy);
    TempDir dir;
    const auto copy = dir.path() / "copied-bundle";
    std::filesystem::copy(testing::npuBundle(), copy, std::filesystem::copy_options::recursive);
    const auto broken = dir.path() / "broken-bundle";
    std::filesystem::copy(testing::npuBundle(), broken, std::filesystem::copy_options::recursive);
    std::ofstream(broken / manifest->npuStage()->file, std::ios::trunc) << "half copied";
    auto config = [&](const std::filesystem::path& bundle) {
      return "version: 1\ndetector:\n  model: " + bundle.string() + "\n  backend: " + policy +
             "\nhttp: {listen: '127.0.0.1:0'}\ncameras:\n  - {name: door, source: 'file:" +
             doorClip().string() + "', loop: true, detect_fps: 2}\n";
    };
    testing::VigilDaemon vigil(dir.path(), config(testing::npuBundle()));
    ASSERT_NE(vigil.port(), 0) << vigil.log();
    ASSERT_TRUE(vigil.waitDetected("door", 0)) << vigil.log();
    ASSERT_EQ(vigil.status()["backend"]["name"], "npu") << vigil.log();

    std::ofstream(dir.path() / "cameras.yaml") << config(copy);
    vigil.process().signal(SIGHUP);
    ASSERT_TRUE(vigil.process().waitForLog("reload: the new detector is in use")) << vigil.log();
    EXPECT_NE(vigil.log().find("reload: one NPU session per process: inference stops"),
              std::string::npos)
        << vigil.log();
    const std::uint64_t swapped = vigil.detected("door");
    EXPECT_TRUE(vigil.waitDetected("door", swapped)) << vigil.log();
    EXPECT_EQ(vigil.status()["backend"]["name"], "npu") << vigil.status().dump();

    std::ofstream(dir.path() / "cameras.yaml") << config(broken);
    vigil.process().signal(SIGHUP);
    ASSERT_TRUE(vigil.process().waitForLog("; the previous one runs again")) << vigil.log();
    const std::string log = vigil.log();
    EXPECT_NE(log.find("reload: one NPU session per process: inference stops"), std::string::npos)
        << log;
    EXPECT_NE(log.find("reload: the new detector does not load ("), std::string::npos) << log;
    const std::uint64_t after = vigil.detected("door");
    EXPECT_TRUE(vigil.waitDetected("door", after)) << vigil.log();
    EXPECT_EQ(vigil.status()["backend"]["name"], "npu") << vigil.status().dump();
    auto stopped = vigil.stop(SIGTERM);
    ASSERT_TRUE(stopped.status.has_value());
    EXPECT_EQ(*stopped.status, 0) << vigil.log();
  }
}

}  // namespace
}  // namespace vigil
