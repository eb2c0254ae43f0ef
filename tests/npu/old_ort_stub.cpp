// A library that looks like an ONNX Runtime too old for Vigil: OrtGetApiBase exists, but
// GetApi refuses every API version. No ONNX Runtime release old enough is at hand, so this
// fault is made, the only one in the Vitis AI route's tests. Built against ONNX Runtime's own
// header, so every function has the exact type Vigil calls it through.
#include <onnxruntime_c_api.h>

namespace {

const OrtApi* ORT_API_CALL noApi(uint32_t /*version*/) NO_EXCEPTION { return nullptr; }
const char* ORT_API_CALL oldVersion() NO_EXCEPTION { return "1.10.0"; }
const OrtApiBase kBase{noApi, oldVersion};

}  // namespace

const OrtApiBase* ORT_API_CALL OrtGetApiBase(void) NO_EXCEPTION { return &kBase; }
