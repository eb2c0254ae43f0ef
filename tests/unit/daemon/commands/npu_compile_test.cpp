// `vigil npu compile` (npu_compile), on its own, where no Vitis AI EP is: its command line, and
// a bundle it cannot compile refused with the reason on standard error and status 1. Compiling a
// real bundle needs Ryzen AI Software (the npu tests' vitisai route).
#include "daemon/commands/npu_compile.h"

#include <gtest/gtest.h>

#include <sstream>

#include "tests/model_paths.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

TEST(NpuCompileTest, TheCommandTakesABundleAConfigurationAndAnOnnxRuntime) {
  CLI::App app;
  CLI::App* npu = app.add_subcommand("npu");
  NpuCompileOptions options;
  addNpuCompileCommand(*npu, options);
  app.parse("npu compile /models/split --config /etc/x.yaml --onnxruntime /opt/ort", false);
  EXPECT_EQ(options.bundle, "/models/split");
  EXPECT_EQ(options.config, "/etc/x.yaml");
  EXPECT_EQ(options.onnxRuntime, "/opt/ort");

  NpuCompileOptions none;
  CLI::App bare;
  addNpuCompileCommand(*bare.add_subcommand("npu"), none);
  EXPECT_THROW(bare.parse("npu compile", false), CLI::RequiredError) << "the bundle is required";
}

TEST(NpuCompileTest, ABundleThatIsNotThereIsRefusedWithTheReason) {
  TempDir dir;
  NpuCompileOptions options;
  options.bundle = (dir.path() / "no-bundle").string();
  options.config = (dir.path() / "cameras.yaml").string();
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runNpuCompile(options, out, err), 1);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str().rfind("npu compile: ", 0), 0U) << err.str();
  EXPECT_NE(err.str().find(options.bundle), std::string::npos) << err.str();
}

TEST(NpuCompileTest, ABundleWithoutAVitisAiStageIsRefusedNamingIt) {
  VIGIL_REQUIRE_MODEL();
  TempDir dir;
  NpuCompileOptions options;
  options.bundle = testing::modelDir().string();
  options.config = (dir.path() / "cameras.yaml").string();
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runNpuCompile(options, out, err), 1);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str().rfind("npu compile: " + options.bundle + ": ", 0), 0U) << err.str();
}

}  // namespace
}  // namespace vigil
