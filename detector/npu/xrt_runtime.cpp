#include "detector/npu/xrt_runtime.h"

#include <fmt/format.h>
#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

#include <cstdint>
#include <cstring>
#include <map>

#include "detector/npu/npu_buffer_files.h"
#include "detector/npu/npu_environment.h"

#if __has_include(<xrt/xrt_hw_context.h>) && !defined(VIGIL_XRT_FORCE_LEGACY)
#define VIGIL_XRT_MODERN 1
#include <xrt/xrt_hw_context.h>
#endif
#if defined(VIGIL_XRT_REQUIRE_MODERN) && !defined(VIGIL_XRT_MODERN)
#error "VIGIL_XRT_REQUIRE_MODERN: these XRT headers have no xrt/xrt_hw_context.h"
#endif
#if __has_include(<xrt/experimental/xrt_xclbin.h>)
#include <xrt/experimental/xrt_xclbin.h>
#else
#include <experimental/xrt_xclbin.h>
#endif
// The ELF flows, on the modern path only (../shared/notes/npu-xrt.md 1.2-1.4):
//   VIGIL_XRT_ELF       xclbin+elf: xrt::elf, xrt::module, xrt::ext::kernel(ctx, module, name),
//                       xrt::ext::bo; XRT 2.16-2.18 have them under experimental/;
//   VIGIL_XRT_FULL_ELF  full-elf: hw_context(device, elf), xrt::ext::kernel(ctx, name); XRT 2.19,
//                       the release that also moved the headers to xrt/experimental/.
#if defined(VIGIL_XRT_MODERN) && __has_include(<xrt/experimental/xrt_elf.h>)
#define VIGIL_XRT_ELF 1
#define VIGIL_XRT_FULL_ELF 1
#include <xrt/experimental/xrt_elf.h>
#include <xrt/experimental/xrt_ext.h>
#include <xrt/experimental/xrt_module.h>
#elif defined(VIGIL_XRT_MODERN) && __has_include(<experimental/xrt_elf.h>)
#define VIGIL_XRT_ELF 1
#include <experimental/xrt_elf.h>
#include <experimental/xrt_ext.h>
#include <experimental/xrt_module.h>
#endif
#if defined(VIGIL_XRT_REQUIRE_FULL_ELF) && !defined(VIGIL_XRT_FULL_ELF)
#error "VIGIL_XRT_REQUIRE_FULL_ELF: the ELF flows are not compiled (no xrt/experimental/xrt_elf.h)"
#endif
#if defined(VIGIL_XRT_FULL_ELF) && XRT_VERSION_CODE < XRT_VERSION(2, 19)
#error "xrt/experimental/xrt_elf.h before XRT 2.19: hw_context(device, elf) may be missing"
#endif

namespace vigil {

std::string xrtVersion() {
  return fmt::format("{}.{}", XRT_MAJOR(XRT_VERSION_CODE), XRT_MINOR(XRT_VERSION_CODE));
}

std::string xrtApiLevel() {
#if defined(VIGIL_XRT_FULL_ELF)
  return "modern (register_xclbin + hw_context; flows xclbin+insts, xclbin+elf, full-elf)";
#elif defined(VIGIL_XRT_ELF)
  return "modern (register_xclbin + hw_context; flows xclbin+insts, xclbin+elf)";
#elif defined(VIGIL_XRT_MODERN)
  return "modern (register_xclbin + hw_context; flow xclbin+insts)";
#else
  return "legacy (load_xclbin, XRT 2.13: noop shim / Alveo only)";
#endif
}

bool xrtRunsFlow(std::string_view flow) {
#ifdef VIGIL_XRT_ELF
  if (flow == "xclbin+elf") return true;
#endif
#ifdef VIGIL_XRT_FULL_ELF
  if (flow == "full-elf") return true;
#endif
  return flow == "xclbin+insts";
}

Error elfFlowUnsupported(std::string_view flow) {
  // xclbin+elf: xrt::elf + xrt::module + xrt::ext::kernel (2.16); full-elf: a hw_context made
  // from the ELF alone (2.19). See ../shared/notes/npu-xrt.md, "Which XRT release has what".
  const char* needs = flow == "full-elf" ? "XRT >= 2.19 (hw_context from an ELF, xrt::ext::kernel)"
                                         : "XRT >= 2.16 (xrt::elf, xrt::module, xrt::ext::kernel)";
#if defined(VIGIL_XRT_ELF)
  // Only full-elf can land here: XRT 2.16-2.18 headers.
  const std::string have = fmt::format(
      "this build was compiled against XRT {} headers, which have xrt::elf but no hardware "
      "context made from an ELF, and runs the xclbin+insts and xclbin+elf flows only",
      xrtVersion());
#elif __has_include(<xrt/experimental/xrt_elf.h>) || __has_include(<experimental/xrt_elf.h>)
  const std::string have = fmt::format(
      "this build (XRT {} headers) has the ELF API but uses the legacy API path "
      "(VIGIL_XRT_FORCE_LEGACY), which runs the xclbin+insts flow only",
      xrtVersion());
#else
  const std::string have = fmt::format(
      "this build was compiled against XRT {} headers, which lack the ELF API "
      "(xrt/experimental/xrt_elf.h), and runs the xclbin+insts flow only",
      xrtVersion());
#endif
  return Error{ErrorCode::kUnsupported,
               fmt::format("the bundle's flow {} needs {}; {}", flow, needs, have)};
}

namespace {

// Runs `fn`, one step of XRT's life cycle named by `what`, and turns what XRT throws into an
// Error with the cause: kUnavailable for a device that does not open, a hardware context the
// driver refuses (explainHwContextFailure) or buffers that cannot be pinned; kBackendFailure
// otherwise.
template <typename Fn>
Expected<void> guard(const std::string& what, Fn&& fn) {
  try {
    fn();
    return {};
  } catch (const std::exception& e) {
    std::string message = e.what();
    ErrorCode code = ErrorCode::kBackendFailure;
    std::string hint;
    if (what == "open device") {
      code = ErrorCode::kUnavailable;
    } else if (auto why = explainHwContextFailure(message); why && what.rfind("load", 0) == 0) {
      return makeError(ErrorCode::kUnavailable, "XRT {}: {}", what, *why);
    } else if (what == "allocate buffers") {
      code = ErrorCode::kUnavailable;
      hint = "; buffer pinning fails under a low RLIMIT_MEMLOCK (LimitMEMLOCK=infinity)";
    }
    return makeError(code, "XRT {}: {}{}", what, message, hint);
  }
}

// Whether this build, its XRT and this machine can run the bundle: its flow, its target NPU and
// the XRT version it needs; kUnsupported naming every mismatch.
Expected<void> checkRunsBundle(const NpuStageSpec& spec) {
  if (!xrtRunsFlow(spec.flow)) return tl::unexpected(elfFlowUnsupported(spec.flow));
  auto mismatches =
      bundleMismatches(spec.target, spec.minXrtMajor, spec.minXrtMinor, XRT_MAJOR(XRT_VERSION_CODE),
                       XRT_MINOR(XRT_VERSION_CODE), probeNpuEnvironment());
  if (!mismatches.empty()) {
    std::string all = mismatches.front();
    for (std::size_t i = 1; i < mismatches.size(); ++i) all += "; " + mismatches[i];
    return makeError(ErrorCode::kUnsupported, "{}", all);
  }
  return {};
}

class XrtRuntime final : public NpuRuntime {
 public:
  explicit XrtRuntime(unsigned index) : index_(index) {}
  ~XrtRuntime() override { closeDevice(); }

  std::string describe() const override {
    return fmt::format("XRT {} {} API, device {}", xrtVersion(), level(), index_);
  }

  Expected<void> openDevice() override {
    return guard("open device", [&] { device_ = xrt::device(index_); });
  }

  Expected<void> load(const NpuStageSpec& spec, const std::filesystem::path& dir) override {
    spec_ = &spec;
    if (auto ok = checkRunsBundle(spec); !ok) return ok;
    // The file the hardware context is made from: the xclbin, or for full-elf the ELF.
    const std::string design =
        (dir / (spec.flow == "full-elf" ? spec.instructions : spec.xclbin)).string();
    auto loaded = guard("load " + design, [&] {
#ifdef VIGIL_XRT_FULL_ELF
      if (spec.flow == "full-elf") {
        // The ELF is the whole design; the kernel name is the ELF's, matched exactly.
        xrt::elf elf(design);
        context_ = xrt::hw_context(device_, elf);
        kernel_ = xrt::ext::kernel(context_, spec.kernel);
        return;
      }
#endif
      xrt::xclbin xclbin(design);
      const std::string name = kernelNamed(xclbin, spec.kernel);
#ifdef VIGIL_XRT_MODERN
      device_.register_xclbin(xclbin);
#ifdef VIGIL_XRT_ELF
      if (spec.flow == "xclbin+elf") {
        module_ = xrt::module(xrt::elf((dir / spec.instructions).string()));
        context_ = xrt::hw_context(device_, xclbin.get_uuid());
        kernel_ = xrt::ext::kernel(context_, module_, name);
        return;
      }
#endif
      context_ = xrt::hw_context(device_, xclbin.get_uuid());
      kernel_ = xrt::kernel(context_, name);
#else
      auto uuid = device_.load_xclbin(xclbin);
      kernel_ = xrt::kernel(device_, uuid, name);
#endif
    });
    if (!loaded) return loaded;
    // The ELF carries the instructions: the ELF flows pass the kernel 0 words.
    return files_.read(spec, dir, !elfFlow());
  }

  Expected<void> allocate() override {
    return guard("allocate buffers", [&] {
      run_ = xrt::run(kernel_);
      for (const NpuArgument& a : spec_->arguments) {
        switch (a.role) {
          case NpuArgRole::kOpcode:
            run_.set_arg(a.index, static_cast<std::uint32_t>(a.value));
            break;
          case NpuArgRole::kInstructionCount:
            run_.set_arg(a.index, files_.instructionWords());
            break;
          case NpuArgRole::kInstructions: {
            if (elfFlow()) {
              // The ELF carries the instructions; its kernel keeps the slot, passed 0.
              run_.set_arg(a.index, std::uint32_t{0});
              break;
            }
            if (files_.instructions().size() != a.bytes) {
              throw std::runtime_error(fmt::format("{} has {} bytes, the manifest says {}",
                                                   spec_->instructions,
                                                   files_.instructions().size(), a.bytes));
            }
            bind(a, xrt::bo(device_, a.bytes, XCL_BO_FLAGS_CACHEABLE, kernel_.group_id(a.index)));
            break;
          }
          default:
            bind(a, dataBuffer(a));
        }
      }
    });
  }

  std::span<std::byte> buffer(int argIndex) override {
    auto it = buffers_.find(argIndex);
    if (it == buffers_.end()) return {};
    return {it->second.map<std::byte*>(), it->second.size()};
  }

  Expected<void> start() override {
    return guard("start", [&] {
      for (const NpuArgument& a : spec_->arguments) {
        if (a.role == NpuArgRole::kInput) buffers_[a.index].sync(XCL_BO_SYNC_BO_TO_DEVICE);
      }
      run_.start();
    });
  }

  Expected<void> wait(std::chrono::milliseconds timeout) override {
    bool timedOut = false;
    auto ok = guard("wait", [&] {
#ifdef VIGIL_XRT_MODERN
      // wait2 throws xrt::run::command_error when the command fails.
      timedOut = run_.wait2(timeout) == std::cv_status::timeout;
#else
      ert_cmd_state state = run_.wait(timeout);
      if (state == ERT_CMD_STATE_TIMEOUT) {
        timedOut = true;
      } else if (state != ERT_CMD_STATE_COMPLETED) {
        throw std::runtime_error(fmt::format("run ended in state {}", static_cast<int>(state)));
      }
#endif
      if (timedOut) {
        run_.abort();
        return;
      }
      for (const NpuArgument& a : spec_->arguments) {
        if (a.role == NpuArgRole::kOutput) buffers_[a.index].sync(XCL_BO_SYNC_BO_FROM_DEVICE);
      }
    });
    if (ok && timedOut) {
      return makeError(ErrorCode::kTimeout, "the NPU run did not finish within {} ms",
                       timeout.count());
    }
    return ok;
  }

  void unload() override {
    try {
      run_ = xrt::run();
      buffers_.clear();
      kernel_ = xrt::kernel();
#ifdef VIGIL_XRT_ELF
      module_ = xrt::module();
#endif
#ifdef VIGIL_XRT_MODERN
      context_ = xrt::hw_context();
#endif
    } catch (const std::exception&) {
      // Tearing down after a device fault: nothing left to save.
    }
  }

  void closeDevice() override {
    unload();
    try {
      device_ = xrt::device();
    } catch (const std::exception&) {
    }
  }

 private:
  static const char* level() {
#ifdef VIGIL_XRT_MODERN
    return "modern";
#else
    return "legacy";
#endif
  }

  bool elfFlow() const { return spec_->flow != "xclbin+insts"; }

  // The full name of the xclbin's first kernel whose name starts with `prefix`: the one
  // mlir-aie's host code picks.
  static std::string kernelNamed(const xrt::xclbin& xclbin, const std::string& prefix) {
    for (const auto& k : xclbin.get_kernels()) {
      if (k.get_name().rfind(prefix, 0) == 0) return k.get_name();
    }
    throw std::runtime_error(fmt::format("no kernel named {}* in the xclbin", prefix));
  }

  // A data buffer (input, output, weights, scratch): HOST_ONLY in the argument's memory group, or
  // for the ELF flows an xrt::ext::bo, which needs no group.
  xrt::bo dataBuffer(const NpuArgument& a) {
#ifdef VIGIL_XRT_ELF
    if (elfFlow()) return xrt::ext::bo(device_, a.bytes);
#endif
    return xrt::bo(device_, a.bytes, XRT_BO_FLAGS_HOST_ONLY, kernel_.group_id(a.index));
  }

  // Fills `bo` as initialContentOf() says, syncs what it filled to the device and binds it.
  void bind(const NpuArgument& a, xrt::bo bo) {
    const InitialContent content = initialContentOf(a.role);
    if (content == InitialContent::kInstructions) {
      const std::vector<char>& instructions = files_.instructions();
      std::memcpy(bo.map<void*>(), instructions.data(), instructions.size());
    } else if (content == InitialContent::kWeights) {
      const std::vector<char>& weights = files_.weights(a.index);
      std::memcpy(bo.map<void*>(), weights.data(), weights.size());
    } else if (content == InitialContent::kZeros) {
      std::memset(bo.map<void*>(), 0, bo.size());
    }
    if (content != InitialContent::kNone) bo.sync(XCL_BO_SYNC_BO_TO_DEVICE);
    run_.set_arg(a.index, bo);
    buffers_[a.index] = std::move(bo);
  }

  unsigned index_;
  const NpuStageSpec* spec_ = nullptr;
  xrt::device device_;
#ifdef VIGIL_XRT_MODERN
  xrt::hw_context context_;
#endif
#ifdef VIGIL_XRT_ELF
  xrt::module module_;  // xclbin+elf: the kernel's instructions, kept as long as the kernel
#endif
  xrt::kernel kernel_;
  xrt::run run_;
  std::map<int, xrt::bo> buffers_;
  NpuBufferFiles files_;  // what allocate() copies into the instruction and weights buffers
};

}  // namespace

std::unique_ptr<NpuRuntime> makeXrtRuntime(unsigned deviceIndex) {
  return std::make_unique<XrtRuntime>(deviceIndex);
}

}  // namespace vigil
