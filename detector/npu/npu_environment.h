#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace vigil {

// What the host offers an NPU, read without touching XRT: the amdxdna driver, the device node
// and whether this process may open it, the memlock limit that pins buffers, and the
// environment that silently changes XRT's behaviour. `vigil doctor` prints it; the NPU backend
// turns a failed open into the specific reason found here.
struct NpuEnvironment {
  std::filesystem::path deviceNode = "/dev/accel/accel0";
  bool deviceExists = false;
  bool deviceAccessible = false;              // open(O_RDWR) would be allowed
  std::string deviceGroup;                    // owning group of the node, e.g. "render"
  bool driverLoaded = false;                  // /sys/module/amdxdna exists
  std::optional<std::uint64_t> memlockBytes;  // RLIMIT_MEMLOCK soft limit; nullopt: unlimited
  bool xrtIniInCwd = false;                   // ./xrt.ini (read by XRT unless XRT_INI_PATH is set)
  std::string xrtIniPath;                     // $XRT_INI_PATH
  std::string emulationMode;                  // $XCL_EMULATION_MODE
  std::string xilinxXrt;                      // $XILINX_XRT
};

// Reads the environment. `root` prefixes /dev and /sys (tests point it at a temp dir).
NpuEnvironment probeNpuEnvironment(const std::filesystem::path& root = "/");

// The buffers of a YOLOX backbone need a few MiB pinned; below this memlock limit XRT buffer
// allocation fails on real devices.
constexpr std::uint64_t kMinMemlockBytes = 64ULL << 20;

// Problems that stop or endanger the NPU, each one line saying what and how to fix it. Empty
// when nothing is wrong. Under XCL_EMULATION_MODE=noop the device checks are skipped (nothing
// runs on a device then, and the list says so).
std::vector<std::string> npuEnvironmentProblems(const NpuEnvironment& env);

}  // namespace vigil
