#pragma once

#include <fmt/format.h>

#include <string>
#include <tl/expected.hpp>
#include <utility>

namespace vigil {

// What went wrong, coarse enough for callers to choose a reaction (retry, fall back, give up)
// and with a message that says where and why for the human reading the log.
enum class ErrorCode {
  kInvalidArgument,   // the caller passed something unusable
  kNotFound,          // a file or device does not exist
  kPermissionDenied,  // it exists, but this process may not read or open it
  kInvalidData,       // a file exists but its content is wrong (corrupt image, bad manifest)
  kUnverifiedModel,   // weights whose hash the manifest does not list
  kBackendFailure,    // the inference runtime reported an error
  kInvalidOutput,     // the runtime reported success but the output is NaN/Inf or malformed
  kUnsupported,       // this build or this machine cannot do it
  kTimeout,           // nothing arrived within the deadline; trying again may work
  kUnavailable,       // a device or stream is gone (unplugged, refused, ended); reopen later
  kEndOfStream,       // a finite source (a file that does not loop) has no more frames
  kNotOnNpu,          // it ran, but not on the NPU it was asked for (work left on the CPU)
};

struct Error {
  ErrorCode code;
  std::string message;
};

template <typename T>
using Expected = tl::expected<T, Error>;

template <typename... Args>
tl::unexpected<Error> makeError(ErrorCode code, fmt::format_string<Args...> format,
                                Args&&... args) {
  return tl::unexpected(Error{code, fmt::format(format, std::forward<Args>(args)...)});
}

std::string_view errorCodeName(ErrorCode code);

}  // namespace vigil
