#include "daemon/capture/file_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <opencv2/videoio.hpp>
#include <thread>

#include "daemon/config.h"

namespace vigil {

namespace {

std::string fourccName(double fourcc) {
  auto code = static_cast<unsigned>(fourcc);
  std::string s;
  for (int i = 0; i < 4; ++i) {
    char c = static_cast<char>((code >> (8 * i)) & 0xFF);
    if (c >= 32 && c < 127) s += c;
  }
  return s.empty() ? "unknown" : s;
}

class FileSource final : public FrameSource {
 public:
  explicit FileSource(const CameraConfig& camera)
      : location_(camera.location), loop_(camera.loop) {}

  Expected<SourceInfo> open() override {
    close();
    if (auto opened = openCapture(); !opened) return tl::unexpected(opened.error());
    SourceInfo source;
    source.width = static_cast<int>(capture_.get(cv::CAP_PROP_FRAME_WIDTH));
    source.height = static_cast<int>(capture_.get(cv::CAP_PROP_FRAME_HEIGHT));
    source.fps = capture_.get(cv::CAP_PROP_FPS);
    source.pixelFormat = fourccName(capture_.get(cv::CAP_PROP_FOURCC)) + " (ffmpeg)";
    source.description = loop_ ? "file, looped" : "file";
    // A file is replayed at its own rate, as a camera would deliver it.
    period_ = source.fps > 0 && source.fps < 1000
                  ? std::chrono::duration_cast<SteadyClock::duration>(
                        std::chrono::duration<double>(1.0 / source.fps))
                  : SteadyClock::duration::zero();
    nextFrame_ = SteadyClock::now();
    sequence_ = 0;
    open_ = true;
    return source;
  }

  Expected<void> read(Frame& frame, std::chrono::milliseconds timeout) override {
    if (!open_) return makeError(ErrorCode::kUnavailable, "{}: not open", location_);
    if (period_ != SteadyClock::duration::zero()) {
      auto now = SteadyClock::now();
      if (nextFrame_ > now + timeout) {
        std::this_thread::sleep_for(timeout);
        return makeError(ErrorCode::kTimeout, "{}: next frame not due yet", location_);
      }
      std::this_thread::sleep_until(nextFrame_);
      // After a stall (slow decode, paused process) continue from now instead of racing.
      nextFrame_ = std::max(nextFrame_ + period_, SteadyClock::now() - period_);
    }
    try {
      if (!capture_.read(frame.image) || frame.image.empty()) {
        if (!loop_ || sequence_ == 0) {
          return makeError(sequence_ == 0 ? ErrorCode::kUnavailable : ErrorCode::kEndOfStream,
                           "{}: {}", location_,
                           sequence_ == 0 ? "no decodable frame" : "end of file");
        }
        // Loop: back to the first frame. Seeking is unreliable for some containers; reopening
        // is not, and costs a few milliseconds once per pass.
        capture_.release();
        if (auto opened = openCapture(); !opened) return tl::unexpected(opened.error());
        if (!capture_.read(frame.image) || frame.image.empty()) {
          return makeError(ErrorCode::kUnavailable, "{}: cannot restart the loop", location_);
        }
      }
    } catch (const cv::Exception& e) {
      return makeError(ErrorCode::kInvalidData, "{}: cannot decode frame: {}", location_, e.what());
    }
    if (frame.image.type() != CV_8UC3) {
      return makeError(ErrorCode::kInvalidData, "{}: decoder gave pixel type {}, not BGR",
                       location_, frame.image.type());
    }
    frame.captureTime = SteadyClock::now();
    frame.sequence = sequence_++;
    return {};
  }

  void close() override {
    if (open_) capture_.release();
    open_ = false;
  }

  ~FileSource() override { close(); }

 private:
  // Opens the file for decoding, at the start and at every loop: only a regular file, since
  // FFmpeg's open of a FIFO waits for a writer and nothing could interrupt it.
  Expected<void> openCapture() {
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
    try {
      if (!capture_.open(location_, cv::CAP_FFMPEG)) {
        return makeError(ErrorCode::kUnavailable,
                         "{}: cannot open (missing or not a video FFmpeg can decode)", location_);
      }
    } catch (const cv::Exception& e) {
      return makeError(ErrorCode::kUnavailable, "{}: cannot open: {}", location_, e.what());
    }
    return {};
  }

  std::string location_;
  bool loop_;
  bool open_ = false;
  cv::VideoCapture capture_;
  SteadyClock::duration period_{};
  SteadyClock::time_point nextFrame_{};
  std::uint64_t sequence_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> makeFileSource(const CameraConfig& camera) {
  return std::make_unique<FileSource>(camera);
}

}  // namespace vigil
