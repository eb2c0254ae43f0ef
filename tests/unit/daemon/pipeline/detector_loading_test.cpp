// Loading the configured detector (detector_loading), on its own, with the real model: the
// backend asked for and why it is the one in use, tracking's low-score persons, the built-in
// model when the section names none, a model that is not there; which sections load the same
// detector, and which may hold an NPU session.
#include "daemon/pipeline/detector_loading.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "daemon/base/model_location.h"
#include "detector/backend.h"
#include "tests/log_capture.h"
#include "tests/model_paths.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

DetectorConfig onBackend(const std::string& backend) {
  DetectorConfig c;
  c.model = testing::modelDir().string();
  c.backend = backend;
  return c;
}

bool buildHasNpu() {
  const auto table = backendTable();
  return std::any_of(table.begin(), table.end(),
                     [](const BackendEntry& e) { return e.name == "npu"; });
}

TEST(DetectorLoadingTest, TheConfiguredCpuBackendLoadsAndSaysWhy) {
  VIGIL_REQUIRE_MODEL();
  setLogLevel(spdlog::level::info);
  testing::LogCapture log("daemon");
  DetectorConfig c = onBackend("cpu");
  c.minScore = 0.6F;
  c.nms = 0.5F;
  auto loaded = loadDetector(c);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  ASSERT_NE(loaded->detector, nullptr);
  EXPECT_EQ(loaded->detector->backend().name(), "cpu");
  EXPECT_EQ(loaded->reason, "configured: cpu");
  EXPECT_FLOAT_EQ(loaded->detector->minScore(), kTrackingLowScore)
      << "tracking sees persons down to its low score whatever min_score says";
  EXPECT_FLOAT_EQ(loaded->detector->nmsIou(), 0.5F);
  EXPECT_EQ(log.text().rfind("detector: model ", 0), 0U) << log.text();
  EXPECT_NE(log.text().find("on backend 'cpu'"), std::string::npos) << log.text();
  EXPECT_NE(log.text().find("min score 0.6 (persons from 0.1 for tracking)"), std::string::npos)
      << log.text();
}

TEST(DetectorLoadingTest, AMinScoreBelowTrackingsLowScoreIsTheDetectors) {
  VIGIL_REQUIRE_MODEL();
  DetectorConfig c = onBackend("cpu");
  c.minScore = 0.05F;
  auto loaded = loadDetector(c);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_FLOAT_EQ(loaded->detector->minScore(), 0.05F);
}

TEST(DetectorLoadingTest, AutoSaysItChoseAndASectionWithoutAModelLoadsTheBuiltInOne) {
  VIGIL_REQUIRE_MODEL();
  const std::filesystem::path before = builtInModelDir();
  setBuiltInModelDir(testing::modelDir());
  DetectorConfig c;  // no model named, auto
  auto loaded = loadDetector(c);
  setBuiltInModelDir(before);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->reason.rfind("auto: ", 0), 0U) << loaded->reason;
  EXPECT_NE(loaded->detector->backend().name(), "auto") << "a real backend runs";
}

TEST(DetectorLoadingTest, AModelThatIsNotThereIsAnError) {
  TempDir dir;
  DetectorConfig c = onBackend("cpu");
  c.model = (dir.path() / "no-model").string();
  auto loaded = loadDetector(c);
  ASSERT_FALSE(loaded.has_value());
  EXPECT_NE(loaded.error().message.find(c.model), std::string::npos) << loaded.error().message;
}

TEST(DetectorLoadingTest, MinScoreMattersToTheDetectorOnlyBelowTrackingsLowScore) {
  DetectorConfig a;
  DetectorConfig b;
  a.minScore = 0.5F;
  b.minScore = 0.7F;
  EXPECT_TRUE(loadsTheSameDetector(a, b)) << "both give tracking's low score";
  b.minScore = 0.05F;
  EXPECT_FALSE(loadsTheSameDetector(a, b)) << "below it the detector reports less";
  b = a;
  b.threads = 4;
  EXPECT_FALSE(loadsTheSameDetector(a, b));
  b = a;
  b.backend = "cpu";
  EXPECT_FALSE(loadsTheSameDetector(a, b));
  b = a;
  b.model = "/elsewhere";
  EXPECT_FALSE(loadsTheSameDetector(a, b));
  b = a;
  b.squareInput = true;
  EXPECT_FALSE(loadsTheSameDetector(a, b));
}

// The default model has no NPU stage: under auto it holds no NPU session; npu does where the build
// has an NPU runtime.
TEST(DetectorLoadingTest, OnlyNpuOrAutoOnABundleWithAnNpuStageMayHoldAnNpuSession) {
  VIGIL_REQUIRE_MODEL();
  EXPECT_FALSE(mayHoldAnNpuSession(onBackend("cpu")));
  EXPECT_FALSE(mayHoldAnNpuSession(onBackend("cpu-ort")));
  EXPECT_FALSE(mayHoldAnNpuSession(onBackend("auto"))) << "the default model runs on the CPU";
  EXPECT_EQ(mayHoldAnNpuSession(onBackend("npu")), buildHasNpu());
}

}  // namespace
}  // namespace vigil
