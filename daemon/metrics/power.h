#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

// Power and energy telemetry from sysfs and procfs, for the /metrics endpoint (see
// shared/notes/npu-xrt.md section 3 for where each number comes from).
//
// Every reading is optional: a source this machine, kernel or user cannot read is absent
// (std::nullopt), never 0, so a dashboard shows a gap instead of a plausible-looking zero.
// Reads never throw and never log (they run at every scrape); the one log line is at
// discovery.
namespace vigil {

class Registry;

// Unwraps a hardware counter that wraps to 0 after `maxRange` (RAPL energy_uj wraps at
// max_energy_range_uj, every few hours to days at package power).
//
// The total starts at the first reading, so until the first wrap it equals the raw counter.
// A reading below the previous one counts as one wrap: maxRange - previous + reading. Without
// a maxRange (or with a previous reading above it, which the hardware cannot produce) a drop
// cannot be measured, so the counter continues from the new reading and adds nothing.
// Not thread-safe; PowerMonitor serializes calls.
class WrappingCounter {
 public:
  explicit WrappingCounter(std::optional<std::uint64_t> maxRange) : maxRange_(maxRange) {}

  // Returns the unwrapped total after this reading.
  std::uint64_t update(std::uint64_t reading);
  std::optional<std::uint64_t> total() const { return total_; }

 private:
  std::optional<std::uint64_t> maxRange_;
  std::optional<std::uint64_t> last_;
  std::optional<std::uint64_t> total_;
};

struct PowerMonitorOptions {
  // Where sys/ and proc/ are looked up: "/" in production, a fake tree in tests.
  std::filesystem::path root = "/";
};

// Finds the power sources once, at construction, and reads them on demand.
//
// - NPU power: the hwmon whose `name` is `amdxdna` (sys/class/hwmon/hwmon*/), power1_input, else
//   power1_average, in microwatts. The driver registers it only when PMF sensors work.
// - APU (SoC) power: the first hwmon named `amdgpu` with power1_average, else power1_input,
//   in microwatts. On a machine with a discrete AMD GPU as well, "first" may be that GPU; the
//   description names the directory chosen.
// - Package energy: sys/class/powercap/intel-rapl:0/energy_uj (AMD Zen uses the intel-rapl
//   names too), unwrapped with max_energy_range_uj. Root-only (0400) since Linux 5.10.
// - NPU busy time: summed over this process's DRM clients of the amdxdna driver, from
//   proc/self/fdinfo/*: files whose `drm-driver` starts with "amdxdna" (mainline names it
//   amdxdna_accel_driver), every `drm-engine-<name>: <N> ns` line in them (the engine name
//   differs between driver trees: npu-amdxdna, amdxdna_accel_driver, amdxdna), each
//   drm-client-id counted once (a dup()ed fd shows the same client twice). The NPU may be
//   opened after discovery, so this one is looked up at every read; it is absent while no
//   such client is open or the driver prints no engine line (Linux 7.2's in-tree driver).
//
// A file found at discovery that later fails to read or parse reads as absent for that call.
//
// Threads: construct on the control plane; the readers may be called from any thread
// (packageEnergyJoules() takes a mutex for the wrap state, the others share nothing).
class PowerMonitor {
 public:
  explicit PowerMonitor(PowerMonitorOptions options = {});

  std::optional<double> npuPowerWatts() const;
  std::optional<double> apuPowerWatts() const;
  // A counter: joules since some point before the first call, monotonic across wraps.
  std::optional<double> packageEnergyJoules();
  std::optional<double> npuBusySeconds() const;

  // What was found and where, what is missing and why; one line per source. Logged at info
  // by the constructor.
  const std::string& description() const { return description_; }

 private:
  std::filesystem::path root_;
  std::optional<std::filesystem::path> npuPowerFile_;
  std::optional<std::filesystem::path> apuPowerFile_;
  std::optional<std::filesystem::path> energyFile_;
  std::string description_;

  std::mutex energyMutex_;
  std::optional<WrappingCounter> energy_;  // engaged when energyFile_ is
};

// Registers vigil_npu_power_watts, vigil_apu_power_watts (gauges),
// vigil_package_energy_joules_total and vigil_npu_busy_seconds_total (counters) as callback
// series reading `monitor` at scrape time. All four are registered whatever was found: a
// missing source is a series that is absent from every scrape, exactly like a source that
// fails at run time, so dashboards and alerts (absent()) treat both cases one way. The
// callbacks share ownership of the monitor, so it lives as long as the registry needs it.
void registerPowerMetrics(Registry& registry, std::shared_ptr<PowerMonitor> monitor);

}  // namespace vigil
