#include "daemon/capture/ffmpeg/file_source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "daemon/capture/ffmpeg/ffmpeg_reader.h"
#include "daemon/capture/frame/stop_signal.h"
#include "daemon/settings/settings.h"

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
    reader_.setPicturesOnly(camera.picturesOnly);
    reader_.setPacing([this] { return waitForPacket(); });
  }

  Expected<SourceInfo> open() override {
    close();
    auto source = openReader();
    if (!source) return source;
    source->description = loop_ ? "file, looped" : "file";
    // A file is replayed at its own rate, as a camera would deliver it: a packet a frame period
    // (waitForPacket), so skipping to keyframes while idle skips the time between them too.
    period_ = source->fps > 0 && source->fps < 1000
                  ? std::chrono::duration_cast<SteadyClock::duration>(
                        std::chrono::duration<double>(1.0 / source->fps))
                  : SteadyClock::duration::zero();
    nextPacket_ = SteadyClock::now();
    fps_ = source->fps;
    sequence_ = passStart_ = 0;
    keyframesOnly_ = false;
    return source;
  }

  Expected<void> read(Frame& frame, std::chrono::milliseconds) override {
    if (!reader_.isOpen()) return makeError(ErrorCode::kUnavailable, "{}: not open", location_);
    auto ok = reader_.read(frame.picture, kFileReadTimeout);
    if (!ok && ok.error().code == ErrorCode::kEndOfStream) {
      if (!loop_ || sequence_ == 0) {
        return makeError(sequence_ == 0 ? ErrorCode::kUnavailable : ErrorCode::kEndOfStream,
                         "{}: {}", location_,
                         sequence_ == 0 ? "no decodable frame" : "end of file");
      }
      // Loop: back to the first frame. Seeking is unreliable for some containers; reopening
      // is not, and costs a few milliseconds once per pass.
      passStart_ = sequence_;
      if (auto reopened = openReader(); !reopened) return tl::unexpected(reopened.error());
      reader_.setKeyframesOnly(keyframesOnly_);
      ok = reader_.read(frame.picture, kFileReadTimeout);
      if (!ok && ok.error().code == ErrorCode::kEndOfStream) {
        return makeError(ErrorCode::kUnavailable, "{}: cannot restart the loop", location_);
      }
    }
    if (!ok) return ok;
    frame.captureTime = SteadyClock::now();
    frame.sequence = frameNumber();
    return {};
  }

  void close() override { reader_.close(); }
  void setKeyframesOnly(bool keyframesOnly) override {
    keyframesOnly_ = keyframesOnly;
    reader_.setKeyframesOnly(keyframesOnly);
  }
  bool skippingToKeyframe() const override { return reader_.skippingToKeyframe(); }
  void interrupt() override {
    stop_.raise();  // a paced sleep ends at once
    reader_.interrupt();
  }

  ~FileSource() override { close(); }

 private:
  // FfmpegReader's pacing: the next packet is due a frame period after the last; false when
  // stopped. After a stall (slow decode, paused process) the file goes on from now instead of
  // racing to catch up.
  bool waitForPacket() {
    if (period_ == SteadyClock::duration::zero()) return true;
    if (!stop_.sleepFor(
            std::chrono::ceil<std::chrono::milliseconds>(nextPacket_ - SteadyClock::now()))) {
      return false;
    }
    nextPacket_ = std::max(nextPacket_ + period_, SteadyClock::now() - period_);
    return true;
  }

  // The picture just read's frame number in the file (from its timestamp: pictures skipped while
  // idle are counted too), counting on over the loops; always more than the last.
  std::uint64_t frameNumber() {
    std::uint64_t number = sequence_;
    if (auto time = reader_.pictureTime(); time && *time >= 0 && fps_ > 0) {
      number =
          std::max(number, passStart_ + static_cast<std::uint64_t>(std::llround(*time * fps_)));
    }
    sequence_ = number + 1;
    return number;
  }

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
  SteadyClock::time_point nextPacket_{};
  bool keyframesOnly_ = false;  // told by the motion gate; the reader forgets it at each loop
  double fps_ = 0;
  std::uint64_t sequence_ = 0;   // the next frame number at least
  std::uint64_t passStart_ = 0;  // the first frame number of this pass through the file
};

}  // namespace

std::unique_ptr<FrameSource> makeFileSource(const CameraConfig& camera) {
  return std::make_unique<FileSource>(camera);
}

}  // namespace vigil
