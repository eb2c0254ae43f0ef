#pragma once

#include <onnxruntime_cxx_api.h>

namespace vigil {

// The session options cpu-ort runs every model with, for a small always-on box: `threads`
// intra-op threads, one inter-op thread, sequential execution, every graph optimisation, and
// the threads spinning between runs only when `spinning` (see ort_backend.h). The benches that
// compare with ONNX Runtime used directly take them from here too.
Ort::SessionOptions ortSessionOptions(int threads, bool spinning);

}  // namespace vigil
