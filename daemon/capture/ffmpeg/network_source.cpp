#include "daemon/capture/ffmpeg/network_source.h"

#include <chrono>

#include "daemon/capture/ffmpeg/ffmpeg_reader.h"
#include "daemon/settings/settings.h"

namespace vigil {

namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kStreamOpenTimeout = 5s;
constexpr std::chrono::milliseconds kStreamReadTimeout = 2s;

class NetworkSource final : public FrameSource {
 public:
  explicit NetworkSource(const CameraConfig& camera)
      : location_(camera.location),
        hw_(camera.hwDecode),
        detectFps_(camera.detectFps),
        reader_(camera.location) {
    reader_.setSkipLoopFilter(camera.skipLoopFilter);
    reader_.setPicturesOnly(camera.picturesOnly);
  }

  Expected<SourceInfo> open() override {
    auto info = reader_.open(kStreamOpenTimeout, location_.starts_with("rtsp"), hw_);
    if (!info) return info;
    info->description = "network stream";
    // A camera taking at most every other picture needs none that nothing refers to (most
    // B-frames): the picture it takes is then the newest reference picture, at most a run of
    // B-frames (two or three, 100 ms at 30 frames/s) older.
    if (info->fps > 0 && 2 * detectFps_ <= info->fps && reader_.setSkipNonReference(true)) {
      info->description += ", non-reference pictures skipped";
    }
    sequence_ = 0;
    return info;
  }

  Expected<void> read(Frame& frame, std::chrono::milliseconds) override {
    auto ok = reader_.read(frame.picture, kStreamReadTimeout);
    if (!ok) {
      // A camera's stream has no end: one that ends was lost, and is reopened.
      if (ok.error().code == ErrorCode::kEndOfStream) ok.error().code = ErrorCode::kUnavailable;
      return ok;
    }
    frame.captureTime = SteadyClock::now();
    frame.sequence = sequence_++;
    return {};
  }

  void close() override { reader_.close(); }
  void setKeyframesOnly(bool keyframesOnly) override { reader_.setKeyframesOnly(keyframesOnly); }
  bool skippingToKeyframe() const override { return reader_.skippingToKeyframe(); }
  void interrupt() override { reader_.interrupt(); }

 private:
  std::string location_;
  HwDecode hw_;
  double detectFps_;
  FfmpegReader reader_;
  std::uint64_t sequence_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> makeNetworkSource(const CameraConfig& camera) {
  return std::make_unique<NetworkSource>(camera);
}

}  // namespace vigil
