#include "daemon/capture/file_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "daemon/capture/ffmpeg_reader.h"
#include "daemon/capture/stop_signal.h"
#include "daemon/config.h"

namespace vigil {

namespace {

// Opening a local file takes milliseconds; this only bounds a file on a hung network mount.
constexpr std::chrono::milliseconds kFileOpenTimeout{5000};
constexpr std::chrono::milliseconds kFileReadTimeout{5000};

class FileSource final : public FrameSource {
 public:
  explicit FileSource(const CameraConfig& camera)
      : location_(camera.location),
        loop_(camera.loop),
        hw_(camera.hwDecode),
        reader_(camera.location) {
    reader_.setSkipLoopFilter(camera.skipLoopFilter);
  }

  Expected<SourceInfo> open() override {
    close();
    auto source = openReader();
    if (!source) return source;
    source->description = loop_ ? "file, looped" : "file";
    // A file is replayed at its own rate, as a camera would deliver it.
    period_ = source->fps > 0 && source->fps < 1000
                  ? std::chrono::duration_cast<SteadyClock::duration>(
                        std::chrono::duration<double>(1.0 / source->fps))
                  : SteadyClock::duration::zero();
    nextFrame_ = SteadyClock::now();
    sequence_ = 0;
    return source;
  }

  Expected<void> read(Frame& frame, std::chrono::milliseconds timeout) override {
    if (!reader_.isOpen()) return makeError(ErrorCode::kUnavailable, "{}: not open", location_);
    if (period_ != SteadyClock::duration::zero()) {
      auto now = SteadyClock::now();
      if (nextFrame_ > now + timeout) {
        stop_.sleepFor(timeout);
        return makeError(ErrorCode::kTimeout, "{}: next frame not due yet", location_);
      }
      if (!stop_.sleepFor(std::chrono::ceil<std::chrono::milliseconds>(nextFrame_ - now))) {
        return makeError(ErrorCode::kTimeout, "{}: interrupted (stopping)", location_);
      }
      // After a stall (slow decode, paused process) continue from now instead of racing.
      nextFrame_ = std::max(nextFrame_ + period_, SteadyClock::now() - period_);
    }
    auto ok = reader_.read(frame.picture, kFileReadTimeout);
    if (!ok && ok.error().code == ErrorCode::kEndOfStream) {
      if (!loop_ || sequence_ == 0) {
        return makeError(sequence_ == 0 ? ErrorCode::kUnavailable : ErrorCode::kEndOfStream,
                         "{}: {}", location_,
                         sequence_ == 0 ? "no decodable frame" : "end of file");
      }
      // Loop: back to the first frame. Seeking is unreliable for some containers; reopening
      // is not, and costs a few milliseconds once per pass.
      if (auto reopened = openReader(); !reopened) return tl::unexpected(reopened.error());
      ok = reader_.read(frame.picture, kFileReadTimeout);
      if (!ok && ok.error().code == ErrorCode::kEndOfStream) {
        return makeError(ErrorCode::kUnavailable, "{}: cannot restart the loop", location_);
      }
    }
    if (!ok) return ok;
    frame.captureTime = SteadyClock::now();
    frame.sequence = sequence_++;
    return {};
  }

  void close() override { reader_.close(); }
  void interrupt() override {
    stop_.raise();  // a paced sleep ends at once
    reader_.interrupt();
  }

  ~FileSource() override { close(); }

 private:
  // Opens the file for decoding, at the start and at every loop: only a regular file, since
  // FFmpeg's open of a FIFO waits for a writer and nothing could interrupt it.
  Expected<SourceInfo> openReader() {
    struct stat info {};
    if (::stat(location_.c_str(), &info) != 0) {
      return makeError(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kUnavailable,
                       "{}: cannot open: {}", location_, std::strerror(errno));
    }
    if (!S_ISREG(info.st_mode)) {
      return makeError(ErrorCode::kInvalidArgument,
                       "{}: not a regular file (a FIFO, device or directory); file: sources are "
                       "video files",
                       location_);
    }
    // FFmpeg's own reason: "x.mp4: cannot open: Invalid data found when processing input".
    return reader_.open(kFileOpenTimeout, false, hw_);
  }

  std::string location_;
  bool loop_;
  HwDecode hw_;
  FfmpegReader reader_;
  StopSignal stop_;
  SteadyClock::duration period_{};
  SteadyClock::time_point nextFrame_{};
  std::uint64_t sequence_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> makeFileSource(const CameraConfig& camera) {
  return std::make_unique<FileSource>(camera);
}

}  // namespace vigil
