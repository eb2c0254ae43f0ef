#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "detector/backend.h"
#include "detector/cpu_stage.h"

namespace vigil {

// The fast CPU backend: ONNX Runtime's CPU execution provider, one session per stage of the
// manifest (every stage must be runtime "onnx"), a stage's outputs feeding the next stage's
// inputs by name.
//
// Session options, chosen on purpose for a small always-on box:
//  - intra-op threads = options.threads (0: the machine's hardware threads), inter-op 1,
//    sequential execution;
//  - worker threads do not spin waiting for work unless options.spinning: on 2 cores spinning
//    workers steal the CPU from capture and the other threads of the daemon;
//  - all graph optimizations.
// At load every stage's input and output names, element types and shapes are checked against
// the manifest; a mismatch is kInvalidData naming the file, the tensor, both shapes.
// Buffers: the next stage's inputs and every intermediate output live in buffers allocated at
// load; the caller's input and output tensors are wrapped once (again only if the caller moves
// its storage), so infer() neither copies the frame nor allocates.
// The runtime library is loaded by the dynamic linker; its C API must support the headers'
// ORT_API_VERSION, else creation fails with kUnsupported saying both versions.
Expected<std::unique_ptr<InferenceBackend>> createOrtBackend(const ModelManifest& manifest,
                                                             const BackendOptions& options);

// One stage on ONNX Runtime's CPU EP (see CpuStage): the CPU reference of an integer (QDQ) NPU
// stage. Inputs and outputs are checked against `spec` like the backend's.
Expected<std::unique_ptr<CpuStage>> loadOrtStage(const std::filesystem::path& file,
                                                 const StageSpec& spec);

// "1.21.0" for the runtime library in use, or the reason it cannot be used.
Expected<std::string> ortRuntimeVersion();

}  // namespace vigil
