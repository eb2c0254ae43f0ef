#include "daemon/capture/ffmpeg/ffmpeg_deadline.h"

#include "daemon/capture/ffmpeg/ffmpeg_decoder.h"

namespace vigil {

int FfmpegDeadline::expired(void* self) {
  const auto* deadline = static_cast<const FfmpegDeadline*>(self);
  return deadline->interrupted_ || deadline->pastDeadline() ? 1 : 0;
}

bool FfmpegDeadline::pastDeadline() const {
  return std::chrono::steady_clock::now().time_since_epoch().count() > deadline_;
}

void FfmpegDeadline::setFrom(std::chrono::milliseconds from) {
  deadline_ = (std::chrono::steady_clock::now() + from).time_since_epoch().count();
}

tl::unexpected<Error> FfmpegDeadline::failure(const std::string& location, const char* what, int rc,
                                              std::chrono::milliseconds limit) const {
  if (interrupted_) return makeError(ErrorCode::kUnavailable, "{}: interrupted (stop)", location);
  if (pastDeadline()) {
    return makeError(ErrorCode::kUnavailable, "{}: {}: nothing for {} ms", location, what,
                     limit.count());
  }
  return makeError(ErrorCode::kUnavailable, "{}: {}: {}", location, what, describeAvError(rc));
}

}  // namespace vigil
