// The words for the NPU failures the environment and the bundle explain: the hardware-context
// limit and a bundle built for another XRT or NPU generation.
#include "detector/npu/npu_environment.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

TEST(NpuEnvironmentTest, ReadsTheDeviceNameAndFirmwareFromSysfs) {
  TempDir root;
  const auto sysfs = root.path() / "sys/class/accel/accel0/device";
  std::filesystem::create_directories(sysfs);
  std::ofstream(sysfs / "vbnv") << "RyzenAI-npu4\n";
  std::ofstream(sysfs / "fw_version") << "1.5.5.391\n";
  NpuEnvironment e = probeNpuEnvironment(root.path());
  EXPECT_EQ(e.deviceName, "RyzenAI-npu4");
  EXPECT_EQ(e.firmwareVersion, "1.5.5.391");
  EXPECT_EQ(probeNpuEnvironment(root.path() / "none").deviceName, "");
}

TEST(NpuEnvironmentTest, DeviceNamesMapToBundleTargets) {
  EXPECT_EQ(npuTargetOfDevice("RyzenAI-npu1"), "npu1");
  for (const char* xdna2 : {"RyzenAI-npu2", "RyzenAI-npu4", "RyzenAI-npu5", "RyzenAI-npu6"}) {
    EXPECT_EQ(npuTargetOfDevice(xdna2), "npu2") << xdna2;
  }
  EXPECT_EQ(npuTargetOfDevice(""), std::nullopt);
  EXPECT_EQ(npuTargetOfDevice("xilinx_u250"), std::nullopt);
}

TEST(NpuEnvironmentTest, ABundleForANewerXrtSaysWhichAndHowToFix) {
  NpuEnvironment e;
  auto m = bundleMismatches("npu2", 2, 17, 2, 13, e);
  ASSERT_EQ(m.size(), 1U);
  EXPECT_EQ(m[0].find("the bundle needs XRT >= 2.17 (min_xrt_version), this build runs XRT 2.13"),
            0U)
      << m[0];
  EXPECT_NE(m[0].find("libxrt_driver_xdna"), std::string::npos) << m[0];
  EXPECT_TRUE(bundleMismatches("npu2", 2, 13, 2, 13, e).empty());
  EXPECT_TRUE(bundleMismatches("npu2", 2, 17, 3, 0, e).empty()) << "3.0 is newer than 2.17";
}

TEST(NpuEnvironmentTest, ABundleForTheOtherGenerationNamesDeviceAndFirmware) {
  NpuEnvironment e;
  e.deviceName = "RyzenAI-npu1";
  e.firmwareVersion = "1.5.2.380";
  auto m = bundleMismatches("npu2", 2, 17, 2, 23, e);
  ASSERT_EQ(m.size(), 1U);
  EXPECT_EQ(m[0],
            "the bundle is built for npu2 but the NPU is RyzenAI-npu1 (XDNA, firmware 1.5.2.380): "
            "a design does not load across NPU generations; use a bundle built for npu1");
  EXPECT_TRUE(bundleMismatches("npu1", 2, 17, 2, 23, e).empty());
  e.deviceName.clear();  // unknown device (noop shim, no sysfs): nothing to say
  EXPECT_TRUE(bundleMismatches("npu2", 2, 17, 2, 23, e).empty());
}

TEST(NpuEnvironmentTest, HardwareContextLimitIsExplained) {
  auto why = explainHwContextFailure(
      "DRM_IOCTL_AMDXDNA_CREATE_HWCTX IOCTL failed (err=-22): Invalid argument");
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("no free NPU hardware context"), std::string::npos) << *why;
  EXPECT_NE(why->find("6 on npu1 and 16 on npu4/5/6, shared by every process"), std::string::npos)
      << *why;
  EXPECT_NE(why->find("err=-22"), std::string::npos) << "the XRT message is kept: " << *why;
  EXPECT_TRUE(explainHwContextFailure("command failed: MGMT_ERT_NOAVAIL (0x2000003)"));
  EXPECT_FALSE(explainHwContextFailure("No such file or directory: design.xclbin"));
}

}  // namespace
}  // namespace vigil
