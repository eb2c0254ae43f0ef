#include "daemon/capture/frame/frame_sampler.h"

#include <fmt/format.h>

#include <opencv2/imgcodecs.hpp>
#include <system_error>

#include "daemon/base/log.h"

namespace vigil {

namespace {

bool isSampleOf(const std::filesystem::path& file, const std::string& camera) {
  const std::string name = file.filename().string();
  return name.size() > camera.size() + 5 && name.compare(0, camera.size() + 1, camera + "-") == 0 &&
         file.extension() == ".jpg";
}

}  // namespace

FrameSampler::FrameSampler(CalibrationSampleSettings settings, std::string camera)
    : settings_(std::move(settings)), camera_(std::move(camera)) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(settings_.dir, ec)) {
    if (isSampleOf(entry.path(), camera_)) ++saved_;
  }
}

bool FrameSampler::offer(const CapturedPicture& picture, SteadyClock::time_point now) {
  if (failed_ || saved_ >= settings_.maxFrames || picture.empty() || now < next_) return false;
  auto pixels = picture.bgr();
  return pixels && offer(*pixels, now);
}

bool FrameSampler::offer(const cv::Mat& image, SteadyClock::time_point now) {
  if (failed_ || saved_ >= settings_.maxFrames || image.empty()) return false;
  if (now < next_) return false;
  next_ = now + std::chrono::duration_cast<SteadyClock::duration>(
                    std::chrono::duration<double>(settings_.intervalS));
  auto log = logger("capture");
  std::error_code ec;
  std::filesystem::create_directories(settings_.dir, ec);
  // The number continues after the highest already there, so a restart never overwrites.
  std::filesystem::path file;
  for (int n = saved_ + 1;; ++n) {
    file = settings_.dir / fmt::format("{}-{:06d}.jpg", camera_, n);
    if (!std::filesystem::exists(file, ec)) break;
  }
  // Hidden while written (the encoder goes by the extension, so it stays .jpg).
  const std::filesystem::path partial = file.parent_path() / ("." + file.filename().string());
  bool written = false;
  try {
    written = !ec && cv::imwrite(partial.string(), image, {cv::IMWRITE_JPEG_QUALITY, 95});
  } catch (const cv::Exception& e) {
    log->debug("[cam={}] {}", camera_, e.what());
  }
  if (written) std::filesystem::rename(partial, file, ec);
  if (!written || ec) {
    std::filesystem::remove(partial, ec);
    failed_ = true;
    log->warn("[cam={}] calibration_samples: cannot write {}; no more samples this run", camera_,
              file.string());
    return false;
  }
  ++saved_;
  if (saved_ == settings_.maxFrames) {
    log->info("[cam={}] calibration_samples: {} frames in {}; done", camera_, saved_,
              settings_.dir.string());
  }
  return true;
}

}  // namespace vigil
