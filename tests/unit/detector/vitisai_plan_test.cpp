// The choices Vigil makes for ONNX Runtime's Vitis AI EP before any session exists: target per
// NPU generation, the files each flow needs, the cache key, the strict session config, and the
// reading of the EP's operator report (fixtures in the format of AMD's docs/modelrun.rst,
// "Operator Assignment Report").
#include "detector/npu/vitisai_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

NpuEnvironment deviceWith(std::string pciId, std::string vbnv = "") {
  NpuEnvironment env;
  env.pciId = std::move(pciId);
  env.deviceName = std::move(vbnv);
  return env;
}

NpuStageSpec vitisAiStage(std::string compiler) {
  NpuStageSpec spec;
  spec.runtime = "vitisai";
  spec.compiler = std::move(compiler);
  spec.model = "npu.onnx";
  return spec;
}

std::string option(const VitisAiPlan& plan, const std::string& key) {
  for (const auto& [k, v] : vitisAiProviderOptions(plan)) {
    if (k == key) return v;
  }
  return "<absent>";
}

TEST(VitisAiPlanTest, TheGenerationComesFromThePciIdThenTheDriversName) {
  EXPECT_EQ(npuGeneration(deviceWith("1022:1502")), "npu1");
  EXPECT_EQ(npuGeneration(deviceWith("1022:17f0")), "npu2");
  EXPECT_EQ(npuGeneration(deviceWith("", "RyzenAI-npu4")), "npu2");
  EXPECT_EQ(npuGeneration(deviceWith("", "RyzenAI-npu1")), "npu1");
  // The PCI id wins over a name that says otherwise.
  EXPECT_EQ(npuGeneration(deviceWith("1022:1502", "RyzenAI-npu5")), "npu1");
  EXPECT_EQ(npuGeneration(deviceWith("")), std::nullopt);
}

TEST(VitisAiPlanTest, IntegerModelsGetX2OnXdna2AndX1WithTheOverlayOnXdna) {
  VitisAiSettings settings;
  settings.cacheDir = "/var/cache/vigil/vitisai";
  auto strix = planVitisAi(vitisAiStage("int8"), "/m", deviceWith("1022:17f0"), settings);
  ASSERT_TRUE(strix) << strix.error().message;
  EXPECT_EQ(option(*strix, "target"), "X2");
  EXPECT_EQ(option(*strix, "xclbin"), "<absent>");  // must not be set on STX/KRK

  auto phoenix = planVitisAi(vitisAiStage("int8"), "/m", deviceWith("1022:1502"), settings);
  ASSERT_FALSE(phoenix);
  EXPECT_NE(phoenix.error().message.find("detector.vitisai.xclbin"), std::string::npos)
      << phoenix.error().message;

  settings.xclbin = "/opt/voe/xclbins/phoenix/4x4.xclbin";
  phoenix = planVitisAi(vitisAiStage("int8"), "/m", deviceWith("1022:1502"), settings);
  ASSERT_TRUE(phoenix) << phoenix.error().message;
  EXPECT_EQ(option(*phoenix, "target"), "X1");
  EXPECT_EQ(option(*phoenix, "xclbin"), "/opt/voe/xclbins/phoenix/4x4.xclbin");
}

TEST(VitisAiPlanTest, TheBf16FlowRunsOnXdna2OnlyWithItsConfigFile) {
  NpuStageSpec bf16 = vitisAiStage("bf16");
  bf16.configFile = "vaiml_config.json";
  auto strix = planVitisAi(bf16, "/models/float", deviceWith("", "RyzenAI-npu5"), {});
  ASSERT_TRUE(strix) << strix.error().message;
  EXPECT_EQ(option(*strix, "config_file"), "/models/float/vaiml_config.json");
  EXPECT_EQ(option(*strix, "target"), "<absent>");

  auto phoenix = planVitisAi(bf16, "/models/float", deviceWith("1022:1502"), {});
  ASSERT_FALSE(phoenix);
  EXPECT_EQ(phoenix.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(phoenix.error().message.find("XDNA2 NPUs only"), std::string::npos)
      << phoenix.error().message;
  EXPECT_NE(phoenix.error().message.find("integer bundle"), std::string::npos);
}

TEST(VitisAiPlanTest, AnUnknownNpuNeedsTheTargetFromConfigAndAContradictionIsRefused) {
  auto unknown = planVitisAi(vitisAiStage("int8"), "/m", deviceWith(""), {});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("set detector.vitisai.target"), std::string::npos)
      << unknown.error().message;

  VitisAiSettings x2;
  x2.target = "X2";
  auto configured = planVitisAi(vitisAiStage("int8"), "/m", deviceWith(""), x2);
  ASSERT_TRUE(configured) << configured.error().message;
  EXPECT_EQ(configured->target, "X2");

  auto contradiction = planVitisAi(vitisAiStage("int8"), "/m", deviceWith("1022:1502"), x2);
  ASSERT_FALSE(contradiction);
  EXPECT_NE(contradiction.error().message.find("contradicts the device"), std::string::npos)
      << contradiction.error().message;
}

TEST(VitisAiPlanTest, TheCompiledModelGoesToDiskUnderOurCacheKey) {
  VitisAiSettings settings;
  settings.cacheDir = "/var/cache/vigil/vitisai";
  auto plan = planVitisAi(vitisAiStage("int8"), "/m", deviceWith("1022:17f0"), settings);
  ASSERT_TRUE(plan);
  plan->cacheKey = "yolox-nano-npu-xint8-0123456789abcdef";
  // Default 1 keeps the compiled model in memory only: no other process could reuse it.
  EXPECT_EQ(option(*plan, "enable_cache_file_io_in_mem"), "0");
  EXPECT_EQ(option(*plan, "cache_dir"), "/var/cache/vigil/vitisai");
  EXPECT_EQ(option(*plan, "cache_key"), "yolox-nano-npu-xint8-0123456789abcdef");
  auto config = vitisAiSessionConfig();
  EXPECT_NE(std::find(config.begin(), config.end(),
                      std::pair<std::string, std::string>{"session.disable_cpu_ep_fallback", "1"}),
            config.end());
}

TEST(VitisAiPlanTest, TheServiceCacheDirectoryIsUsedWhenSystemdGivesOne) {
  ::setenv("CACHE_DIRECTORY", "/var/cache/vigil:/var/cache/other", 1);
  EXPECT_EQ(defaultVitisAiCacheDir(), "/var/cache/vigil/vitisai");
  ::unsetenv("CACHE_DIRECTORY");
  ::setenv("XDG_CACHE_HOME", "/home/u/.cache", 1);
  EXPECT_EQ(defaultVitisAiCacheDir(), "/home/u/.cache/vigil/vitisai");
  ::unsetenv("XDG_CACHE_HOME");
}

TEST(VitisAiPlanTest, AnyChangeOfModelRuntimeDriverOrFirmwareGivesANewCacheKey) {
  const VitisAiCacheInputs base{"yolox-nano-npu-xint8",
                                std::string(64, 'a'),
                                "1.23.3",
                                "9000 bytes, mtime 1",
                                "0.1.2",
                                "1.5.5.391",
                                "X2"};
  const std::string key = vitisAiCacheKey(base);
  // Stable across processes, builds and machines, so a restart reuses the compile: the FNV-1a 64
  // of the inputs, each ended by a NUL, worked out apart from Vigil (a few lines of Python).
  EXPECT_EQ(key, "yolox-nano-npu-xint8-6cbd1e6dd1e7b28a");
  std::vector<std::string VitisAiCacheInputs::*> parts{
      &VitisAiCacheInputs::modelSha256,     &VitisAiCacheInputs::ortVersion,
      &VitisAiCacheInputs::epLibrary,       &VitisAiCacheInputs::driverVersion,
      &VitisAiCacheInputs::firmwareVersion, &VitisAiCacheInputs::target};
  for (auto part : parts) {
    VitisAiCacheInputs changed = base;
    changed.*part += "1";
    EXPECT_NE(vitisAiCacheKey(changed), key) << changed.*part;
  }
}

// deviceStat as AMD documents it; nodeStat omitted (Vigil reads the counts only).
constexpr const char* kReport = R"({
  "deviceStat": [
    {"name": "all", "nodeNum": 402, "supportedOpType": ["Conv", "QuantizeLinear"]},
    {"name": "CPU", "nodeNum": 2, "supportedOpType": ["QuantizeLinear"]},
    {"name": "NPU", "nodeNum": 400, "supportedOpType": ["Conv"]}
  ],
  "nodeStat": []
})";

// `vigil npu compile` writes the EP-context model under the cache key; a session is created from
// it when it is there and not empty (a compile killed halfway leaves an empty file), else from
// the bundle's model, compiled then.
TEST(VitisAiPlanTest, TheEpContextModelIsKeyedLikeTheCacheAndUsedWhenPresent) {
  TempDir dir;
  VitisAiSettings settings;
  settings.cacheDir = dir.path();
  auto plan = planVitisAi(vitisAiStage("int8"), "/m", deviceWith("1022:17f0"), settings);
  ASSERT_TRUE(plan);
  plan->cacheKey = "yolox-nano-npu-xint8-0123456789abcdef";
  const auto context = dir.path() / "yolox-nano-npu-xint8-0123456789abcdef.ctx.onnx";
  EXPECT_EQ(vitisAiContextModel(*plan), context);
  VitisAiPlan other = *plan;
  other.cacheKey = "yolox-nano-npu-xint8-fedcba9876543210";  // a new driver, say
  EXPECT_NE(vitisAiContextModel(other), context);

  const auto write = vitisAiContextWriteConfig(context);
  const std::vector<std::pair<std::string, std::string>> expected{
      {"session.disable_cpu_ep_fallback", "1"},
      {"ep.context_enable", "1"},
      {"ep.context_file_path", context.string()},
      {"ep.context_embed_mode", "1"}};
  EXPECT_EQ(write, expected);

  const std::filesystem::path bundleModel = "/m/npu.onnx";
  auto source = vitisAiSessionSource(*plan, bundleModel);
  EXPECT_EQ(source.model, bundleModel);
  EXPECT_FALSE(source.fromContext);
  std::ofstream(context).close();  // empty: a compile that did not finish
  source = vitisAiSessionSource(*plan, bundleModel);
  EXPECT_FALSE(source.fromContext);
  std::ofstream(context) << "an EP-context model";
  source = vitisAiSessionSource(*plan, bundleModel);
  EXPECT_EQ(source.model, context);
  EXPECT_TRUE(source.fromContext);
  EXPECT_FALSE(vitisAiSessionSource(other, bundleModel).fromContext) << "another key's is not ours";
}

TEST(VitisAiReportTest, TheCountsPerDeviceAreRead) {
  auto counts = parseVitisAiReport(kReport, "vitisai_ep_report.json");
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->all, 402);
  EXPECT_EQ(counts->cpu, 2);
  EXPECT_EQ(counts->npu, 400);
  EXPECT_EQ(placementProblem(*counts, 113), std::nullopt);
  auto few = placementProblem(*counts, 401);
  ASSERT_TRUE(few);
  EXPECT_NE(few->find("placed 400 nodes on the NPU, the bundle needs at least 401"),
            std::string::npos)
      << *few;
}

TEST(VitisAiReportTest, NothingOnTheNpuIsAProblemWhateverTheMinimum) {
  auto counts =
      parseVitisAiReport(R"({"deviceStat": [{"name": "CPU", "nodeNum": 400}]})", "r.json");
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->all, 400);  // no "all" entry: the sum
  auto problem = placementProblem(*counts, 1);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("no node on the NPU (400 of 400 on the CPU)"), std::string::npos)
      << *problem;
}

TEST(VitisAiReportTest, AnythingElseIsRefusedNamingTheFile) {
  for (const char* bad : {"", "not json", "{}", R"({"deviceStat": {}})",
                          R"({"deviceStat": [{"name": "NPU", "nodeNum": "many"}]})"}) {
    auto counts = parseVitisAiReport(bad, "/cache/key/vitisai_ep_report.json");
    ASSERT_FALSE(counts) << bad;
    EXPECT_EQ(counts.error().code, ErrorCode::kInvalidData);
    EXPECT_NE(counts.error().message.find("/cache/key/vitisai_ep_report.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace vigil
