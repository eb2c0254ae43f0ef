#include "detector/npu/npu_environment.h"

#include <fmt/format.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace vigil {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

NpuEnvironment probeNpuEnvironment(const std::filesystem::path& root) {
  NpuEnvironment e;
  e.deviceNode = root / "dev/accel/accel0";
  std::error_code ec;
  e.driverLoaded = std::filesystem::exists(root / "sys/module/amdxdna", ec);
  struct stat st {};
  if (::stat(e.deviceNode.c_str(), &st) == 0) {
    e.deviceExists = true;
    e.deviceAccessible = ::access(e.deviceNode.c_str(), R_OK | W_OK) == 0;
    if (const struct group* g = ::getgrgid(st.st_gid); g != nullptr) e.deviceGroup = g->gr_name;
  }
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    e.memlockBytes = static_cast<std::uint64_t>(rl.rlim_cur);
  }
  e.xrtIniPath = env("XRT_INI_PATH");
  e.xrtIniInCwd = e.xrtIniPath.empty() && std::filesystem::exists("xrt.ini", ec);
  e.emulationMode = env("XCL_EMULATION_MODE");
  e.xilinxXrt = env("XILINX_XRT");
  return e;
}

std::vector<std::string> npuEnvironmentProblems(const NpuEnvironment& e) {
  std::vector<std::string> problems;
  if (!e.emulationMode.empty()) {
    problems.push_back(
        fmt::format("XCL_EMULATION_MODE={} is set: XRT runs its {} shim, nothing runs on an NPU",
                    e.emulationMode, e.emulationMode));
  } else if (!e.deviceExists) {
    problems.push_back(fmt::format(
        "{}: no NPU device node{}; an AMD Ryzen AI NPU needs the amdxdna driver (Linux >= 6.14)",
        e.deviceNode.string(),
        e.driverLoaded ? " although amdxdna is loaded (no NPU found by the driver?)"
                       : " and amdxdna is not loaded (modprobe amdxdna)"));
  } else if (!e.deviceAccessible) {
    problems.push_back(fmt::format(
        "{}: permission denied; add the service user to group '{}' (usermod -aG {} USER) and "
        "log in again",
        e.deviceNode.string(), e.deviceGroup.empty() ? "render" : e.deviceGroup,
        e.deviceGroup.empty() ? "render" : e.deviceGroup));
  }
  if (e.memlockBytes && *e.memlockBytes < kMinMemlockBytes) {
    problems.push_back(fmt::format(
        "RLIMIT_MEMLOCK is {} KiB: NPU buffers are pinned and need more; set LimitMEMLOCK=infinity "
        "in the unit (vigil.service has it) or `ulimit -l unlimited`",
        *e.memlockBytes / 1024));
  }
  if (e.xrtIniInCwd) {
    problems.push_back(
        "an xrt.ini in the working directory changes XRT's behaviour silently; remove it or "
        "run from another directory (the service uses WorkingDirectory=)");
  }
  return problems;
}

}  // namespace vigil
