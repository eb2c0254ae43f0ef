// Power sources against fake sysfs/procfs trees: exact watts and joules, a RAPL wrap, the
// right hwmon among several, and missing, unreadable or garbage files reading as absent.
#include "daemon/metrics/power.h"

#include <gtest/gtest.h>

#include <fstream>

#include "daemon/base/metrics.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

namespace fs = std::filesystem;

// A machine's sysfs and procfs, as much of them as the test writes.
class FakeTree {
 public:
  const fs::path& root() const { return dir_.path(); }

  fs::path hwmon(int index, const std::string& name) {
    fs::path path = root() / "sys/class/hwmon" / ("hwmon" + std::to_string(index));
    writeFile(path / "name", name + "\n");
    return path;
  }
  fs::path rapl() const { return root() / "sys/class/powercap/intel-rapl:0"; }
  void fdinfo(int fd, const std::string& text) {
    writeFile(root() / "proc/self/fdinfo" / std::to_string(fd), text);
  }
  PowerMonitor monitor() const { return PowerMonitor(PowerMonitorOptions{root()}); }

 private:
  TempDir dir_;
};

std::string amdxdnaFdinfo(const std::string& clientId, const std::string& engineLine) {
  return "pos:\t0\nflags:\t02100002\nmnt_id:\t25\nino:\t1042\n"
         "drm-driver:\tamdxdna_accel_driver\n"
         "drm-client-id:\t" +
         clientId + "\n" + engineLine + "drm-total-memory:\t4096 KiB\n";
}

TEST(PowerWrappingCounter, UnwrapsAtMaxRange) {
  WrappingCounter counter(std::uint64_t{1000});
  EXPECT_EQ(counter.total(), std::nullopt);
  EXPECT_EQ(counter.update(900), 900U);  // starts at the first reading
  EXPECT_EQ(counter.update(950), 950U);
  EXPECT_EQ(counter.update(50), 1050U);  // 1000 - 950 + 50
  EXPECT_EQ(counter.update(50), 1050U);
  EXPECT_EQ(counter.update(999), 1999U);
  EXPECT_EQ(counter.update(0), 2000U);
}

TEST(PowerWrappingCounter, DropWithoutRangeAddsNothing) {
  WrappingCounter counter(std::nullopt);
  counter.update(500);
  EXPECT_EQ(counter.update(100), 500U);  // unmeasurable: continue from 100
  EXPECT_EQ(counter.update(150), 550U);

  WrappingCounter bogus(std::uint64_t{100});
  bogus.update(500);  // above the range: the range is wrong, not the counter
  EXPECT_EQ(bogus.update(10), 500U);
}

TEST(PowerMonitor, ReadsExactWattsFromTheRightHwmon) {
  FakeTree tree;
  writeFile(tree.hwmon(0, "k10temp") / "power1_input", "99000000\n");
  writeFile(tree.hwmon(1, "amdgpu") / "power1_input", "11000000\n");
  writeFile(tree.hwmon(1, "amdgpu") / "power1_average", "12345678\n");  // preferred
  writeFile(tree.hwmon(10, "amdxdna") / "power1_input", "1500000\n");
  writeFile(tree.hwmon(10, "amdxdna") / "power1_average", "7000000\n");
  writeFile(tree.hwmon(2, "amdgpu") / "power1_average", "55000000\n");  // a second GPU, later
  PowerMonitor monitor = tree.monitor();
  EXPECT_EQ(monitor.npuPowerWatts(), 1.5);        // power1_input preferred for the NPU
  EXPECT_EQ(monitor.apuPowerWatts(), 12.345678);  // power1_average preferred for amdgpu
  EXPECT_NE(monitor.description().find("hwmon10/power1_input"), std::string::npos)
      << monitor.description();
  EXPECT_NE(monitor.description().find("hwmon1/power1_average"), std::string::npos)
      << monitor.description();

  // Values are read at every call, not cached from discovery.
  writeFile(tree.hwmon(10, "amdxdna") / "power1_input", "2250000\n");
  EXPECT_EQ(monitor.npuPowerWatts(), 2.25);
}

TEST(PowerMonitor, FallsBackToTheOtherPowerFile) {
  FakeTree tree;
  writeFile(tree.hwmon(3, "amdxdna") / "power1_average", "4000000\n");
  writeFile(tree.hwmon(4, "amdgpu") / "power1_input", "8500000\n");
  PowerMonitor monitor = tree.monitor();
  EXPECT_EQ(monitor.npuPowerWatts(), 4.0);
  EXPECT_EQ(monitor.apuPowerWatts(), 8.5);
}

TEST(PowerMonitor, SkipsAHwmonWithoutPowerForOneWithIt) {
  FakeTree tree;
  writeFile(tree.hwmon(0, "amdgpu") / "temp1_input", "45000\n");  // e.g. a dGPU asleep
  writeFile(tree.hwmon(5, "amdgpu") / "power1_input", "3000000\n");
  EXPECT_EQ(tree.monitor().apuPowerWatts(), 3.0);
}

TEST(PowerMonitor, NothingThereIsAbsentWithReasons) {
  FakeTree tree;
  PowerMonitor monitor = tree.monitor();
  EXPECT_EQ(monitor.npuPowerWatts(), std::nullopt);
  EXPECT_EQ(monitor.apuPowerWatts(), std::nullopt);
  EXPECT_EQ(monitor.packageEnergyJoules(), std::nullopt);
  EXPECT_EQ(monitor.npuBusySeconds(), std::nullopt);
  const std::string& d = monitor.description();
  EXPECT_NE(d.find("npu power: missing: no hwmon named amdxdna"), std::string::npos) << d;
  EXPECT_NE(d.find("apu power: missing: no hwmon named amdgpu"), std::string::npos) << d;
  EXPECT_NE(d.find("package energy: missing: no "), std::string::npos) << d;
}

TEST(PowerMonitor, GarbageAndUnreadableFilesAreAbsent) {
  FakeTree tree;
  writeFile(tree.hwmon(0, "amdxdna") / "power1_input", "-5\n");
  writeFile(tree.hwmon(0, "amdxdna") / "power1_average", "12 W\n");
  // A directory where a file should be: open() works, read() fails with EISDIR. (chmod 000
  // would not stop these tests when they run as root.)
  fs::create_directories(tree.hwmon(1, "amdgpu") / "power1_average");
  writeFile(tree.rapl() / "energy_uj", "\n");
  PowerMonitor monitor = tree.monitor();
  EXPECT_EQ(monitor.npuPowerWatts(), std::nullopt);
  EXPECT_EQ(monitor.apuPowerWatts(), std::nullopt);
  EXPECT_EQ(monitor.packageEnergyJoules(), std::nullopt);
  const std::string& d = monitor.description();
  EXPECT_NE(d.find("power1_input: not a number"), std::string::npos) << d;
  EXPECT_NE(d.find("power1_average: Is a directory"), std::string::npos) << d;
  EXPECT_NE(d.find("energy_uj: not a number"), std::string::npos) << d;
}

TEST(PowerMonitor, FileThatBreaksLaterReadsAbsentThenRecovers) {
  FakeTree tree;
  fs::path file = tree.hwmon(0, "amdxdna") / "power1_input";
  writeFile(file, "1000000\n");
  PowerMonitor monitor = tree.monitor();
  EXPECT_EQ(monitor.npuPowerWatts(), 1.0);
  writeFile(file, "garbage");
  EXPECT_EQ(monitor.npuPowerWatts(), std::nullopt);
  fs::remove(file);
  EXPECT_EQ(monitor.npuPowerWatts(), std::nullopt);
  writeFile(file, "2000000");
  EXPECT_EQ(monitor.npuPowerWatts(), 2.0);
}

TEST(PowerMonitor, PackageEnergyInJoulesAcrossAWrap) {
  FakeTree tree;
  writeFile(tree.rapl() / "max_energy_range_uj", "262143328850\n");
  writeFile(tree.rapl() / "energy_uj", "262143000000\n");
  PowerMonitor monitor = tree.monitor();
  EXPECT_EQ(monitor.packageEnergyJoules(), 262143.0);
  writeFile(tree.rapl() / "energy_uj", "262143328000\n");
  EXPECT_EQ(monitor.packageEnergyJoules(), 262143.328);
  writeFile(tree.rapl() / "energy_uj", "500000\n");  // wrapped: + 850 + 500000 uJ
  EXPECT_EQ(monitor.packageEnergyJoules(), 262143.82885);
  writeFile(tree.rapl() / "energy_uj", "oops\n");
  EXPECT_EQ(monitor.packageEnergyJoules(), std::nullopt);  // and the state is kept
  writeFile(tree.rapl() / "energy_uj", "1500000\n");
  EXPECT_EQ(monitor.packageEnergyJoules(), 262144.82885);
  EXPECT_NE(monitor.description().find("wraps at 262143328850"), std::string::npos);
}

TEST(PowerMonitor, NpuBusyTimeFromFdinfo) {
  FakeTree tree;
  PowerMonitor monitor = tree.monitor();  // before the NPU is opened
  EXPECT_EQ(monitor.npuBusySeconds(), std::nullopt);

  tree.fdinfo(0, "pos:\t0\nflags:\t02\n");  // a plain file
  tree.fdinfo(7, amdxdnaFdinfo("3", "drm-engine-npu-amdxdna:\t250000000 ns\n"));
  tree.fdinfo(8, amdxdnaFdinfo("3", "drm-engine-npu-amdxdna:\t250000000 ns\n"));  // dup of 7
  tree.fdinfo(9, amdxdnaFdinfo("4", "drm-engine-amdxdna_accel_driver:\t1500000000 ns\n"));
  tree.fdinfo(10, "drm-driver:\tamdgpu\ndrm-client-id:\t3\ndrm-engine-gfx:\t999000000000 ns\n");
  tree.fdinfo(11,
              "drm-driver:\tamdxdna\ndrm-engine-amdxdna:\t5 ns\ndrm-engine-capacity-amdxdna:\t4\n");
  EXPECT_EQ(monitor.npuBusySeconds(), 1.750000005);
}

TEST(PowerMonitor, NpuClientWithoutEngineLineIsAbsent) {
  FakeTree tree;
  tree.fdinfo(5, amdxdnaFdinfo("1", ""));  // mainline in-tree driver: memory keys only
  tree.fdinfo(6, amdxdnaFdinfo("2", "drm-engine-npu-amdxdna:\tlots ns\n"));
  EXPECT_EQ(tree.monitor().npuBusySeconds(), std::nullopt);
}

TEST(PowerMetrics, RegisteredSeriesAreAbsentWhenSourcesAre) {
  FakeTree tree;
  writeFile(tree.hwmon(0, "amdxdna") / "power1_input", "1250000\n");
  writeFile(tree.rapl() / "energy_uj", "2000000\n");
  Registry registry;
  registerPowerMetrics(registry, std::make_shared<PowerMonitor>(PowerMonitorOptions{tree.root()}));
  EXPECT_EQ(registry.render(),
            "# HELP vigil_npu_power_watts NPU power from the amdxdna hwmon sensor.\n"
            "# TYPE vigil_npu_power_watts gauge\n"
            "vigil_npu_power_watts 1.25\n"
            "# HELP vigil_package_energy_joules_total CPU package energy from RAPL powercap "
            "intel-rapl:0, unwrapped.\n"
            "# TYPE vigil_package_energy_joules_total counter\n"
            "vigil_package_energy_joules_total 2\n");
}

TEST(PowerMonitor, RealMachineDoesNotCrash) {
  PowerMonitor monitor;
  // Whatever this machine has: each reading is absent or a plausible non-negative number.
  for (std::optional<double> v : {monitor.npuPowerWatts(), monitor.apuPowerWatts(),
                                  monitor.packageEnergyJoules(), monitor.npuBusySeconds()}) {
    if (v) {
      EXPECT_GE(*v, 0);
    }
  }
  EXPECT_FALSE(monitor.description().empty());
}

}  // namespace
}  // namespace vigil
