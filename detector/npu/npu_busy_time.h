#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "foundation/error.h"

namespace vigil {

// The NPU's own word that it worked: the amdxdna driver lists, in /proc/<pid>/fdinfo/<fd> of
// each DRM client, the time the NPU spent on that client's jobs (drm-usage-stats.rst;
// drivers/accel/amdxdna amdxdna_show_fdinfo). A runtime that says it ran on the NPU while this
// stays flat ran somewhere else.

// One fdinfo file: `key:\tvalue` lines.
struct DrmFdinfo {
  bool npu = false;  // drm-driver starts with "amdxdna" (mainline: amdxdna_accel_driver)
  std::optional<std::string> clientId;
  // Sum of every `drm-engine-<name>: <N> ns` line (the engine name differs between driver
  // trees: npu-amdxdna, amdxdna_accel_driver, amdxdna); nullopt when there is none.
  std::optional<std::uint64_t> busyNs;
};
DrmFdinfo parseDrmFdinfo(std::string_view text);

// This process's amdxdna clients (`proc` = /proc/self, or a test tree with fdinfo/), each
// drm-client-id counted once (a dup()ed fd shows the same client twice).
struct NpuClientUsage {
  int clients = 0;
  std::optional<std::uint64_t> busyNs;  // nullopt: no client, or the driver prints no engine line
};
NpuClientUsage npuClientUsage(const std::filesystem::path& proc = "/proc/self");

// Checks, every `everyRuns` successful runs (and at the first after restart()), that the busy
// time grew since the last check. Threads: one caller (the inference worker).
class NpuBusyWatch {
 public:
  using Reader = std::function<NpuClientUsage()>;
  explicit NpuBusyWatch(
      Reader read = [] { return npuClientUsage(); }, int everyRuns = 16);

  // A new session: the next run is checked against the busy time now.
  void restart();
  // After a successful run: kNotOnNpu when the process has no amdxdna client at all, or the
  // busy time did not grow over the runs since the last check. A driver that prints no busy
  // time cannot be checked: that is said once (unverifiable()) and is not an error.
  Expected<void> afterRun();
  bool unverifiable() const { return unverifiable_; }

 private:
  Reader read_;
  int everyRuns_;
  int runsSinceCheck_ = 0;
  bool first_ = true;
  bool unverifiable_ = false;
  std::optional<std::uint64_t> last_;
};

}  // namespace vigil
