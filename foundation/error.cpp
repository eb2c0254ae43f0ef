#include "foundation/error.h"

namespace vigil {

std::string_view errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kPermissionDenied:
      return "permission denied";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kInvalidData:
      return "invalid data";
    case ErrorCode::kUnverifiedModel:
      return "unverified model";
    case ErrorCode::kBackendFailure:
      return "backend failure";
    case ErrorCode::kInvalidOutput:
      return "invalid output";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kEndOfStream:
      return "end of stream";
    case ErrorCode::kNotOnNpu:
      return "not on the NPU";
  }
  return "unknown";
}

}  // namespace vigil
