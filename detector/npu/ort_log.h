#pragma once

#include <onnxruntime_c_api.h>

namespace vigil {

// ONNX Runtime's messages into Vigil's log, the logger `param` names (a const char*; null:
// "npu"; spdlog's default before the daemon made it), each at its own level ("ONNX Runtime
// (<logid>): ..."), instead of its own coloured lines on standard error, outside the log: an
// OrtLoggingFunction for CreateEnvWithCustomLogger (and Ort::Env's constructor that takes one).
void logOrtMessage(void* param, OrtLoggingLevel severity, const char* category, const char* logid,
                   const char* location, const char* message);

}  // namespace vigil
