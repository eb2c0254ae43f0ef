#include "detector/npu/npu_environment.h"

#include <fmt/format.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace vigil {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The first line of a sysfs attribute, empty when absent.
std::string readAttribute(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
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
  const std::filesystem::path sysfs = root / "sys/class/accel/accel0/device";
  e.deviceName = readAttribute(sysfs / "vbnv");
  e.firmwareVersion = readAttribute(sysfs / "fw_version");
  const std::string vendor = readAttribute(sysfs / "vendor");
  const std::string device = readAttribute(sysfs / "device");
  if (!vendor.empty() && !device.empty()) {
    e.pciId = fmt::format("{}:{}", vendor.substr(vendor.rfind('x') + 1),
                          device.substr(device.rfind('x') + 1));
  }
  e.driverVersion = readAttribute(root / "sys/module/amdxdna/version");
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

std::optional<std::string> npuTargetOfDevice(std::string_view vbnv) {
  if (vbnv.find("npu1") != std::string_view::npos) return "npu1";
  // amdxdna's npu2 is an early NPU4 (it shares npu4's device description): XDNA2 as well.
  for (std::string_view xdna2 : {"npu2", "npu4", "npu5", "npu6"}) {
    if (vbnv.find(xdna2) != std::string_view::npos) return "npu2";
  }
  return std::nullopt;
}

std::vector<std::string> bundleMismatches(std::string_view target, int minXrtMajor, int minXrtMinor,
                                          int xrtMajor, int xrtMinor, const NpuEnvironment& host) {
  std::vector<std::string> out;
  if (std::pair(xrtMajor, xrtMinor) < std::pair(minXrtMajor, minXrtMinor)) {
    out.push_back(fmt::format(
        "the bundle needs XRT >= {}.{} (min_xrt_version), this build runs XRT {}.{}: rebuild "
        "Vigil against a newer XRT (libxrt-dev from Debian sid or AMD's packages, with the "
        "matching libxrt_driver_xdna)",
        minXrtMajor, minXrtMinor, xrtMajor, xrtMinor));
  }
  auto device = npuTargetOfDevice(host.deviceName);
  if (device && *device != target) {
    out.push_back(fmt::format(
        "the bundle is built for {} but the NPU is {} ({}, firmware {}): a design does not load "
        "across NPU generations; use a bundle built for {}",
        target, host.deviceName, *device == "npu1" ? "XDNA" : "XDNA2",
        host.firmwareVersion.empty() ? "unknown" : host.firmwareVersion, *device));
  }
  return out;
}

std::optional<std::string> explainHwContextFailure(std::string_view xrtMessage) {
  for (std::string_view sign : {"CREATE_HWCTX", "MGMT_ERT_NOAVAIL", "0x2000003"}) {
    if (xrtMessage.find(sign) != std::string_view::npos) {
      return fmt::format(
          "no free NPU hardware context ({}): the amdxdna driver has 6 on npu1 and 16 on "
          "npu4/5/6, shared by every process; close other NPU applications (xrt-smi examine "
          "lists them) and Vigil retries",
          xrtMessage);
    }
  }
  return std::nullopt;
}

}  // namespace vigil
