#include "daemon/capture/stream_source.h"

#include <opencv2/videoio.hpp>
#include <thread>

#include "daemon/config.h"

namespace vigil {

namespace {

// FFmpeg blocks inside open() and read(); these bound how long, so a stalled stream is noticed
// and a stop request is served within a few seconds.
constexpr int kOpenTimeoutMs = 5000;
constexpr int kReadTimeoutMs = 2000;

std::string fourccName(double fourcc) {
  auto code = static_cast<unsigned>(fourcc);
  std::string s;
  for (int i = 0; i < 4; ++i) {
    char c = static_cast<char>((code >> (8 * i)) & 0xFF);
    if (c >= 32 && c < 127) s += c;
  }
  return s.empty() ? "unknown" : s;
}

class StreamSource final : public FrameSource {
 public:
  explicit StreamSource(const CameraConfig& camera)
      : location_(camera.location), isFile_(camera.kind == SourceKind::kFile), loop_(camera.loop) {}

  Expected<SourceInfo> open() override {
    close();
    try {
      if (!capture_.open(location_, cv::CAP_FFMPEG,
                         {cv::CAP_PROP_OPEN_TIMEOUT_MSEC, kOpenTimeoutMs,
                          cv::CAP_PROP_READ_TIMEOUT_MSEC, kReadTimeoutMs})) {
        return makeError(ErrorCode::kUnavailable, "{}: cannot open ({})", location_,
                         isFile_ ? "missing or not a video FFmpeg can decode"
                                 : "refused, unreachable or not a stream FFmpeg understands");
      }
    } catch (const cv::Exception& e) {
      return makeError(ErrorCode::kUnavailable, "{}: cannot open: {}", location_, e.what());
    }
    SourceInfo info;
    info.width = static_cast<int>(capture_.get(cv::CAP_PROP_FRAME_WIDTH));
    info.height = static_cast<int>(capture_.get(cv::CAP_PROP_FRAME_HEIGHT));
    info.fps = capture_.get(cv::CAP_PROP_FPS);
    info.pixelFormat = fourccName(capture_.get(cv::CAP_PROP_FOURCC)) + " (ffmpeg)";
    info.description = isFile_ ? (loop_ ? "file, looped" : "file") : "network stream";
    // A file is replayed at its own rate, as a camera would deliver it.
    period_ = isFile_ && info.fps > 0 && info.fps < 1000
                  ? std::chrono::duration_cast<SteadyClock::duration>(
                        std::chrono::duration<double>(1.0 / info.fps))
                  : SteadyClock::duration::zero();
    nextFrame_ = SteadyClock::now();
    sequence_ = 0;
    open_ = true;
    return info;
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
        if (!isFile_) {
          return makeError(ErrorCode::kUnavailable, "{}: stream ended or stalled for {} ms",
                           location_, kReadTimeoutMs);
        }
        if (!loop_ || sequence_ == 0) {
          return makeError(sequence_ == 0 ? ErrorCode::kUnavailable : ErrorCode::kEndOfStream,
                           "{}: {}", location_,
                           sequence_ == 0 ? "no decodable frame" : "end of file");
        }
        // Loop: back to the first frame. Seeking is unreliable for some containers; reopening
        // is not, and costs a few milliseconds once per pass.
        capture_.release();
        if (!capture_.open(location_, cv::CAP_FFMPEG) || !capture_.read(frame.image) ||
            frame.image.empty()) {
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

  ~StreamSource() override { close(); }

 private:
  std::string location_;
  bool isFile_;
  bool loop_;
  bool open_ = false;
  cv::VideoCapture capture_;
  SteadyClock::duration period_{};
  SteadyClock::time_point nextFrame_{};
  std::uint64_t sequence_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> makeStreamSource(const CameraConfig& camera) {
  return std::make_unique<StreamSource>(camera);
}

}  // namespace vigil
