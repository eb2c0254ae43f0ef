// `vigil npu selftest` (npu_selftest), on its own, where no NPU is: its command line, which
// bundles it looks at, the service's Vitis AI settings, and a run that finds no NPU bundle or
// cannot write its report. A run on NPU bundles is the npu tests' (XRT's noop shim).
#include "daemon/commands/npu_selftest.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/model_paths.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

namespace fs = std::filesystem;

TEST(NpuSelftestTest, TheCommandTakesItsOptionsAndChecksTheIterations) {
  CLI::App app;
  NpuSelftestOptions options;
  CLI::App& npu = addNpuCommand(app, options);
  EXPECT_EQ(npu.get_name(), "npu");
  app.parse("npu selftest --json --out /tmp/r.json --model /a --model /b --iterations 5", false);
  EXPECT_TRUE(options.json);
  EXPECT_EQ(options.out, "/tmp/r.json");
  EXPECT_EQ(options.models, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(options.iterations, 5);

  NpuSelftestOptions other;
  CLI::App again;
  addNpuCommand(again, other);
  EXPECT_THROW(again.parse("npu selftest --iterations 0", false), CLI::ValidationError);
  CLI::App bare;
  addNpuCommand(bare, other);
  EXPECT_THROW(bare.parse("npu", false), CLI::RequiredError) << "npu needs its command";
}

// A place holding: the default model (no NPU stage), a bundle whose manifest does not load, and a
// directory that is no bundle.
TEST(NpuSelftestTest, OnlyBundlesWithAnNpuStageOrThatDoNotLoadAreLookedAtEachOnce) {
  VIGIL_REQUIRE_MODEL();
  TempDir dir;
  fs::copy(testing::modelDir(), dir.path() / "cpu-only", fs::copy_options::recursive);
  writeFile(dir.path() / "broken" / "model.yaml", "not: a manifest\n");
  fs::create_directories(dir.path() / "empty");
  const auto found = npuBundlesIn({dir.path(), dir.path() / "broken", dir.path() / "missing"});
  EXPECT_EQ(found, std::vector<fs::path>{fs::weakly_canonical(dir.path() / "broken")})
      << "the broken one once (the report says why), not the CPU-only one";
  EXPECT_TRUE(npuBundlesIn({dir.path() / "cpu-only"}).empty());
}

TEST(NpuSelftestTest, TheServicesVitisAiSettingsAreTheConfigurationsAndTheOverride) {
  TempDir dir;
  const fs::path config = dir.path() / "cameras.yaml";
  writeFile(config,
            "version: 1\n"
            "detector:\n"
            "  onnxruntime: /opt/ryzen-ai/lib\n"
            "  vitisai: {target: X2}\n"
            "cameras:\n"
            "  - name: door\n"
            "    source: /dev/video0\n");
  const VitisAiSettings read = serviceVitisAiSettings(config.string(), "");
  EXPECT_EQ(read.onnxRuntime, "/opt/ryzen-ai/lib");
  EXPECT_EQ(read.target, "X2");
  const VitisAiSettings overridden = serviceVitisAiSettings(config.string(), "/opt/other");
  EXPECT_EQ(overridden.onnxRuntime, "/opt/other");
  EXPECT_EQ(overridden.target, "X2");
  EXPECT_EQ(serviceVitisAiSettings((dir.path() / "none.yaml").string(), "").onnxRuntime, "")
      << "a configuration that does not load gives none";
}

TEST(NpuSelftestTest, NoNpuBundleIsStatus1AfterTheReport) {
  TempDir dir;
  fs::create_directories(dir.path() / "nothing");
  NpuSelftestOptions options;
  options.models = {(dir.path() / "nothing").string()};
  options.config = (dir.path() / "cameras.yaml").string();
  options.json = true;
  std::ostringstream out;
  EXPECT_EQ(runNpuSelftest(options, out), 1);
  const std::string text = out.str();
  const std::string tail = "npu selftest: no NPU bundle found (--model DIR names one)\n";
  ASSERT_TRUE(text.ends_with(tail)) << text;
  const nlohmann::json report = nlohmann::json::parse(text.substr(0, text.size() - tail.size()));
  EXPECT_EQ(report["schema"], 1);
  EXPECT_EQ(report["vigil"], VIGIL_VERSION);
  EXPECT_EQ(report["bundles"], nlohmann::json::array());
}

TEST(NpuSelftestTest, AReportThatCannotBeWrittenIsStatus2) {
  TempDir dir;
  NpuSelftestOptions options;
  options.models = {dir.path().string()};
  options.config = (dir.path() / "cameras.yaml").string();
  options.out = (dir.path() / "missing" / "report.json").string();
  std::ostringstream out;
  EXPECT_EQ(runNpuSelftest(options, out), 2);
  EXPECT_EQ(out.str(), "npu selftest: cannot write " + options.out + "\n");
}

}  // namespace
}  // namespace vigil
