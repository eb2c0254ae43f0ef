// The amdxdna busy time as the proof that the NPU did the work: fdinfo parsing on the text the
// driver prints, the per-client sum on a /proc tree, and the watch that turns a flat busy time
// under successful runs into a silent-fallback error.
#include "detector/npu/npu_busy_time.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

std::string fdinfo(const std::string& driver, const std::string& client, const std::string& ns) {
  return "pos:\t0\nflags:\t02100002\ndrm-driver:\t" + driver + "\ndrm-client-id:\t" + client +
         "\ndrm-engine-npu-amdxdna:\t" + ns + " ns\ndrm-engine-capacity-npu-amdxdna:\t1\n";
}

TEST(NpuBusyTimeTest, TheEngineLinesOfAnAmdxdnaClientAreSummed) {
  DrmFdinfo c = parseDrmFdinfo(fdinfo("amdxdna_accel_driver", "7", "123456"));
  EXPECT_TRUE(c.npu);
  EXPECT_EQ(c.clientId, "7");
  EXPECT_EQ(c.busyNs, 123456U);  // the capacity line (no unit) is not added
  EXPECT_FALSE(parseDrmFdinfo(fdinfo("amdgpu", "1", "5")).npu);
  EXPECT_FALSE(parseDrmFdinfo("drm-driver:\tamdxdna\ndrm-client-id:\t3\n").busyNs.has_value());
}

TEST(NpuBusyTimeTest, EachClientCountsOnceAcrossDuplicatedDescriptors) {
  TempDir proc;
  std::filesystem::create_directories(proc.path() / "fdinfo");
  std::ofstream(proc.path() / "fdinfo/3") << fdinfo("amdxdna", "7", "1000");
  std::ofstream(proc.path() / "fdinfo/4") << fdinfo("amdxdna", "7", "1000");  // dup() of 3
  std::ofstream(proc.path() / "fdinfo/5") << fdinfo("amdxdna", "9", "500");
  std::ofstream(proc.path() / "fdinfo/6") << fdinfo("i915", "2", "99999");
  NpuClientUsage usage = npuClientUsage(proc.path());
  EXPECT_EQ(usage.clients, 2);
  EXPECT_EQ(usage.busyNs, 1500U);
  EXPECT_EQ(npuClientUsage(proc.path() / "absent").clients, 0);
}

TEST(NpuBusyTimeTest, AFlatBusyTimeUnderSuccessfulRunsIsASilentFallback) {
  NpuClientUsage now{1, 1000};
  NpuBusyWatch watch([&] { return now; }, 4);
  watch.restart();
  now.busyNs = 2000;
  EXPECT_TRUE(watch.afterRun());  // the first run after a (re)start is checked
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(watch.afterRun());  // between checks: not read
  auto flat = watch.afterRun();  // the 4th since the check, busy time still 2000
  ASSERT_FALSE(flat);
  EXPECT_EQ(flat.error().code, ErrorCode::kNotOnNpu);
  EXPECT_NE(flat.error().message.find("stayed at 2000 ns over 4 successful run(s)"),
            std::string::npos)
      << flat.error().message;
}

TEST(NpuBusyTimeTest, NoNpuClientAtAllMeansNothingRanThere) {
  NpuBusyWatch watch([] { return NpuClientUsage{}; }, 4);
  watch.restart();
  auto none = watch.afterRun();
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotOnNpu);
}

TEST(NpuBusyTimeTest, ADriverWithoutBusyTimeCannotBeCheckedAndSaysSo) {
  NpuBusyWatch watch([] { return NpuClientUsage{1, std::nullopt}; }, 1);
  watch.restart();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(watch.afterRun());
  EXPECT_TRUE(watch.unverifiable());
}

}  // namespace
}  // namespace vigil
