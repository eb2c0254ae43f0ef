// A library that looks like an ONNX Runtime too old for Vigil: OrtGetApiBase exists, but
// GetApi refuses every API version. No ONNX Runtime release old enough is at hand, so this
// fault is made, the only one in the Vitis AI route's tests.
namespace {

struct ApiBase {
  const void* (*getApi)(unsigned version);
  const char* (*getVersionString)();
};

const void* noApi(unsigned /*version*/) { return nullptr; }
const char* oldVersion() { return "1.10.0"; }
const ApiBase kBase{noApi, oldVersion};

}  // namespace

extern "C" __attribute__((visibility("default"))) const ApiBase* OrtGetApiBase() { return &kBase; }
