#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "detector/npu/npu_runtime.h"

namespace vigil {

// The XRT implementation of NpuRuntime (only in builds with VIGIL_WITH_XRT; XRT's headers stay
// inside xrt_runtime.cpp). Two API levels, chosen at compile time from the headers:
//   modern (XRT >= 2.15, xrt/xrt_hw_context.h): register_xclbin, one hw_context,
//          kernel(ctx, name), wait2 with a timeout; what amdxdna NPUs require. Where the ELF
//          headers exist it also runs xclbin+elf (xrt::elf, xrt::module,
//          xrt::ext::kernel(ctx, module, name), XRT >= 2.16) and full-elf (hw_context(device,
//          elf), xrt::ext::kernel(ctx, name), XRT >= 2.19);
//   legacy (XRT 2.13, Debian 12): load_xclbin, kernel(device, uuid, name), wait(ms); only useful
//          under XRT's noop shim here (the NPU shim refuses load_xclbin); xclbin+insts only.
// Buffers: xclbin+insts: instructions CACHEABLE, data HOST_ONLY, each in the memory group of
// its argument; ELF flows: xrt::ext::bo, the instruction slot passed 0. Allocated once in
// allocate(). Every XRT exception is caught here and becomes an Error.
// The modern path is only compile-checked (npu.xrt_modern_compile); it has never run on an NPU.
std::unique_ptr<NpuRuntime> makeXrtRuntime(unsigned deviceIndex = 0);

// "2.13" and "legacy (load_xclbin)" or "modern (hw_context)", of the headers this was built with.
std::string xrtVersion();
std::string xrtApiLevel();

// Whether this build can run a bundle of that flow (see above).
bool xrtRunsFlow(std::string_view flow);

// load()'s error for a bundle whose flow this build cannot run (xclbin+elf, full-elf): names
// the flow, the XRT version it needs and what this build has.
Error elfFlowUnsupported(std::string_view flow);

}  // namespace vigil
