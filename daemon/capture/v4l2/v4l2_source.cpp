#include "daemon/capture/v4l2/v4l2_source.h"

#include <fmt/format.h>
#include <linux/videodev2.h>

#include <optional>
#include <string>

#include "daemon/base/log.h"
#include "daemon/capture/frame/stop_signal.h"
#include "daemon/capture/v4l2/v4l2_buffer_ring.h"
#include "daemon/capture/v4l2/v4l2_device.h"
#include "daemon/capture/v4l2/v4l2_devices.h"
#include "daemon/capture/v4l2/v4l2_format.h"
#include "daemon/settings/settings.h"

namespace vigil {

namespace {

using std::chrono::milliseconds;

class V4l2Source final : public FrameSource {
 public:
  explicit V4l2Source(const CameraConfig& camera) : camera_(camera), log_(logger("capture")) {}
  ~V4l2Source() override { close(); }
  V4l2Source(const V4l2Source&) = delete;
  V4l2Source& operator=(const V4l2Source&) = delete;

  Expected<SourceInfo> open() override {
    close();
    auto info = start();
    if (!info) close();
    return info;
  }

  Expected<void> read(Frame& frame, milliseconds timeout) override {
    if (!ring_.streaming()) {
      return makeError(ErrorCode::kUnavailable, "{}: device is not open", camera_.location);
    }
    auto buffer = ring_.dequeue(timeout, stop_.fd());
    if (!buffer) return tl::unexpected(buffer.error());
    return deliver(*buffer, frame);
  }

  std::uint64_t framesLost() const override { return lost_; }
  // Wakes a read waiting for the device: a stop never waits out the read's timeout.
  void interrupt() override { stop_.raise(); }

  void close() override {
    lastSequence_.reset();  // a new stream numbers its buffers from 0 again
    if (!device_.isOpen()) return;
    // Best effort from here on: after an unplug every call fails with ENODEV, and the fd must
    // still be released so the node can be reused.
    ring_.release();
    device_.close();
    log_->debug("[cam={}] {}: closed", camera_.name, camera_.location);
  }

 private:
  Expected<SourceInfo> start() {
    if (camera_.location.empty()) {
      return makeError(ErrorCode::kInvalidArgument, "camera {}: no device path", camera_.name);
    }
    if (auto opened = device_.open(camera_.location, camera_.name, *log_); !opened) {
      return tl::unexpected(opened.error());
    }
    auto format = negotiateV4l2Format(device_.fd(), camera_, *log_);
    if (!format) return tl::unexpected(format.error());
    format_ = *format;
    if (auto streaming = ring_.start(device_.fd(), format_, camera_.location); !streaming) {
      return tl::unexpected(streaming.error());
    }

    SourceInfo info;
    info.width = format_.width;
    info.height = format_.height;
    info.fps = format_.fps;
    info.pixelFormat = fourccToString(format_.pixelFormat);
    info.description = device_.description();
    info.decoder = format_.pixelFormat == V4L2_PIX_FMT_YUYV ? "YUYV, converted on demand"
                                                            : "libjpeg, on demand";
    log_->info("[cam={}] {}: {}, {} {}x{} at {} fps, {} buffers", camera_.name, camera_.location,
               info.description, info.pixelFormat, info.width, info.height,
               info.fps > 0 ? fmt::format("{:g}", info.fps) : std::string("unknown"), ring_.size());
    return info;
  }

  // Converts a dequeued buffer into `frame` and hands the buffer back to the driver.
  Expected<void> deliver(const v4l2_buffer& buf, Frame& frame) {
    if (lastSequence_) lost_ += v4l2SequenceGap(*lastSequence_, buf.sequence);
    lastSequence_ = buf.sequence;
    Expected<void> converted;
    if ((buf.flags & V4L2_BUF_FLAG_ERROR) != 0) {
      converted = makeError(ErrorCode::kInvalidData,
                            "{}: corrupt frame (the driver flagged frame {} as damaged)",
                            camera_.location, buf.sequence);
    } else if (buf.bytesused == 0) {
      converted = makeError(ErrorCode::kInvalidData, "{}: corrupt frame (frame {} is empty)",
                            camera_.location, buf.sequence);
    } else {
      converted = captureV4l2Frame(format_.pixelFormat, ring_.bytes(buf), format_.width,
                                   format_.height, format_.bytesPerLine, frame.picture);
      if (!converted) converted.error().message.insert(0, camera_.location + ": ");
    }
    // Hand the buffer back before anything else so the driver never runs out, whatever
    // became of this frame.
    if (auto queued = ring_.requeue(buf.index); !queued) return queued;
    if (!converted) return converted;
    frame.sequence = buf.sequence;
    frame.captureTime =
        v4l2CaptureTime(buf.flags, buf.timestamp.tv_sec, buf.timestamp.tv_usec, SteadyClock::now());
    return {};
  }

  const CameraConfig camera_;
  std::shared_ptr<spdlog::logger> log_;
  V4l2Device device_;
  StopSignal stop_;
  V4l2BufferRing ring_;  // released before device_ closes (close())
  V4l2Format format_;
  std::optional<std::uint32_t> lastSequence_;  // of this stream's latest buffer
  std::uint64_t lost_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> makeV4l2Source(const CameraConfig& camera) {
  return std::make_unique<V4l2Source>(camera);
}

std::uint32_t v4l2SequenceGap(std::uint32_t previous, std::uint32_t current) {
  const std::uint32_t step = current - previous;  // modulo 2^32: a wrap is a small step
  if (step == 0 || step > 0x80000000U) return 0;
  return step - 1;
}

SteadyClock::time_point v4l2CaptureTime(std::uint32_t bufferFlags, std::int64_t seconds,
                                        std::int64_t microseconds, SteadyClock::time_point now) {
  const bool monotonic =
      (bufferFlags & V4L2_BUF_FLAG_TIMESTAMP_MASK) == V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
  if (!monotonic || (seconds == 0 && microseconds == 0)) return now;
  return SteadyClock::time_point(std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::seconds(seconds) + std::chrono::microseconds(microseconds)));
}

}  // namespace vigil
