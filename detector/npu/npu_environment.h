#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
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
  std::string deviceName;                     // amdxdna's vbnv, e.g. "RyzenAI-npu4"; empty: unknown
  std::string firmwareVersion;                // amdxdna's fw_version; empty: unknown
  std::string pciId;                          // "1022:17f0" of the accel device; empty: unknown
  std::string driverVersion;                  // /sys/module/amdxdna/version; empty: in-tree
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

// The bundle target ("npu1": XDNA, Phoenix/Hawk Point; "npu2": XDNA2, Strix/Strix Halo/Krackan)
// of a device named `vbnv` (amdxdna: RyzenAI-npu1; -npu2, -npu4, -npu5, -npu6); nullopt: unknown.
std::optional<std::string> npuTargetOfDevice(std::string_view vbnv);

// Why this build and device cannot run a bundle that asks for `target` and XRT >= min: an XRT
// older than the bundle needs (`xrtMajor.xrtMinor`, what this build runs), a device of the
// other NPU generation (the firmware version named, the design does not load across
// generations). One line each, with the fix; empty when nothing is known to be wrong.
std::vector<std::string> bundleMismatches(std::string_view target, int minXrtMajor, int minXrtMinor,
                                          int xrtMajor, int xrtMinor, const NpuEnvironment& env);

// The words for a failed hardware-context creation whose XRT message shows the amdxdna
// context limit (DRM_IOCTL_AMDXDNA_CREATE_HWCTX failing, MGMT_ERT_NOAVAIL): npu1 has 6 contexts,
// npu4/5/6 have 16, shared by every process on the machine. nullopt for any other message.
std::optional<std::string> explainHwContextFailure(std::string_view xrtMessage);

}  // namespace vigil
