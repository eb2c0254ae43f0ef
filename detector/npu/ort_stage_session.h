#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "detector/model_manifest.h"
#include "detector/npu/ort_library.h"
#include "detector/npu/run_watchdog.h"
#include "foundation/error.h"

struct OrtSession;
struct OrtRunOptions;
struct OrtMemoryInfo;
struct OrtValue;
struct OrtStatus;

namespace vigil {

// An OrtStatus as an Expected (the status released): `code` with ONNX Runtime's words, its
// version and file.
Expected<void> ortCheck(const OrtLibrary& lib, OrtStatus* status,
                        ErrorCode code = ErrorCode::kBackendFailure);

// The session of an NPU stage on ONNX Runtime (the Vitis AI runtime's, and the CPU provider's in
// ort_cpu_runtime.h) behind NpuRuntime: the stage's tensors as host buffers bound once, and its
// runs, each watched: a run that passes its timeout is cut through its OrtRunOptions
// (RunOptionsSetTerminate, from the watchdog's thread) and fails as kTimeout. ONNX Runtime checks
// the flag between nodes, so a cut run returns within one node's time.
//
// Ownership and threads: owned by its runtime, called from one thread; adopt() takes the
// session, release() drops it with its buffers (the watchdog's thread stays for the next one).
class OrtStageSession {
 public:
  explicit OrtStageSession(const OrtLibrary& lib) : lib_(lib) {}
  ~OrtStageSession() { release(); }
  OrtStageSession(const OrtStageSession&) = delete;
  OrtStageSession& operator=(const OrtStageSession&) = delete;

  // Takes a session from CreateSession and makes its run options.
  Expected<void> adopt(OrtSession* session);
  bool open() const { return session_ != nullptr; }
  // One float32 host buffer per tensor argument of `spec` (inputs, then outputs), zeroed.
  Expected<void> bind(const NpuStageSpec& spec);
  std::span<std::byte> buffer(int argIndex);
  // One run, cut at `timeout`: kTimeout saying so, or kBackendFailure with ONNX Runtime's words.
  Expected<void> run(std::chrono::milliseconds timeout);
  void release();

 private:
  struct Binding {
    int index = 0;
    std::string name;
    bool input = false;
    std::vector<std::byte> data;
    OrtValue* value = nullptr;
  };

  const OrtLibrary& lib_;
  OrtSession* session_ = nullptr;
  OrtRunOptions* runOptions_ = nullptr;
  OrtMemoryInfo* memory_ = nullptr;
  std::vector<Binding> bindings_;
  // Made once in bind(), so a run allocates nothing.
  std::vector<const char*> inNames_, outNames_;
  std::vector<const OrtValue*> ins_;
  std::vector<OrtValue*> outs_;
  RunWatchdog watchdog_;
};

}  // namespace vigil
