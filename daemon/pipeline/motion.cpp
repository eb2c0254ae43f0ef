#include "daemon/pipeline/motion.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

namespace vigil {

std::string_view motionStateName(MotionState state) {
  switch (state) {
    case MotionState::kOff:
      return "off";
    case MotionState::kMotion:
      return "motion";
    case MotionState::kPerson:
      return "person";
    case MotionState::kIdle:
      return "idle";
  }
  return "unknown";
}

MotionDetector::MotionDetector(int threshold, float minArea, std::vector<Polygon> masks,
                               bool findBoxes)
    : threshold_(threshold), minArea_(minArea), findBoxes_(findBoxes), masks_(std::move(masks)) {}

void MotionDetector::prepare(cv::Size small) {
  size_ = small;
  background_.release();
  valid_.create(small, CV_8UC1);
  valid_.setTo(255);
  for (const Polygon& polygon : masks_) {
    std::vector<cv::Point> points;
    points.reserve(polygon.size());
    for (const Point& p : polygon) {
      points.emplace_back(static_cast<int>(std::lround(p.x * static_cast<float>(small.width))),
                          static_cast<int>(std::lround(p.y * static_cast<float>(small.height))));
    }
    cv::fillPoly(valid_, std::vector<std::vector<cv::Point>>{points}, cv::Scalar(0));
  }
  validPixels_ = cv::countNonZero(valid_);
  // About 2% of the width: joins the changed pixels of one moving body without merging the
  // whole frame.
  kernel_ = cv::getStructuringElement(cv::MORPH_ELLIPSE, cv::Size(3, 3));
}

std::optional<MotionDetector::Result> MotionDetector::update(const cv::Mat& image,
                                                             std::chrono::nanoseconds sinceLast) {
  if (image.empty() || (image.type() != CV_8UC3 && image.type() != CV_8UC1)) return std::nullopt;
  try {
    const int height = std::max(
        1, static_cast<int>(std::lround(static_cast<double>(width()) * image.rows / image.cols)));
    const cv::Size small(width(), height);
    const bool fresh = small != size_ || background_.empty();
    if (small != size_) prepare(small);
    if (image.type() == CV_8UC3) {
      cv::resize(image, small_, small, 0, 0, cv::INTER_AREA);
      cv::cvtColor(small_, grey_, cv::COLOR_BGR2GRAY);
    } else {
      cv::resize(image, grey_, small, 0, 0, cv::INTER_AREA);
    }
    cv::GaussianBlur(grey_, grey_, cv::Size(5, 5), 0);
    if (fresh) {
      grey_.convertTo(background_, CV_32F);
      return Result{};
    }
    background_.convertTo(greyFloat_, CV_8U);
    cv::absdiff(grey_, greyFloat_, diff_);
    cv::threshold(diff_, changed_, threshold_, 255, cv::THRESH_BINARY);
    cv::dilate(changed_, changed_, kernel_);
    cv::bitwise_and(changed_, valid_, changed_);
    Result r;
    r.changedFraction =
        validPixels_ > 0 ? static_cast<double>(cv::countNonZero(changed_)) / validPixels_ : 0.0;
    r.motion = validPixels_ > 0 && r.changedFraction >= static_cast<double>(minArea_);
    if (findBoxes_) findBoxes(r);
    const double alpha =
        std::clamp(std::chrono::duration<double>(sinceLast).count() / kBackgroundSeconds, 0.0, 1.0);
    cv::accumulateWeighted(grey_, background_, alpha);
    return r;
  } catch (const cv::Exception&) {
    return std::nullopt;
  }
}

void MotionDetector::setFindBoxes(bool on) {
  if (on == findBoxes_) return;
  findBoxes_ = on;
  size_ = cv::Size();  // prepare() again at the new width
  background_.release();
}

void MotionDetector::findBoxes(Result& r) {
  const int parts = cv::connectedComponentsWithStats(changed_, labels_, stats_, centroids_, 8);
  const double minPart = static_cast<double>(minArea_) / 4 * validPixels_;
  // Two pixels of the motion picture: a speck of noise, not a body.
  constexpr int kSpeck = 2;
  const auto w = static_cast<float>(size_.width);
  const auto h = static_cast<float>(size_.height);
  std::vector<std::pair<int, Box>>& found = parts_;
  found.clear();
  for (int i = 1; i < parts; ++i) {  // 0 is the unchanged background
    const int area = stats_.at<int>(i, cv::CC_STAT_AREA);
    if (area <= kSpeck) continue;
    if (validPixels_ > 0 && area >= minPart) r.motion = true;
    found.emplace_back(area, Box{static_cast<float>(stats_.at<int>(i, cv::CC_STAT_LEFT)) / w,
                                 static_cast<float>(stats_.at<int>(i, cv::CC_STAT_TOP)) / h,
                                 static_cast<float>(stats_.at<int>(i, cv::CC_STAT_WIDTH)) / w,
                                 static_cast<float>(stats_.at<int>(i, cv::CC_STAT_HEIGHT)) / h});
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  r.boxes.clear();
  // Specks on a frame without motion are noise, not somewhere to look.
  if (!r.motion) return;
  for (const auto& [area, box] : found) r.boxes.push_back(box);
}

MotionGate::MotionGate(const MotionSettings& settings, std::vector<Polygon> cameraMasks,
                       std::chrono::nanoseconds detectPeriod)
    : settings_(settings),
      detector_(settings.threshold, settings.minArea,
                settings.masks ? *settings.masks : std::move(cameraMasks)),
      detectPeriod_(detectPeriod) {}

MotionGate::Decision MotionGate::admit(const CapturedPicture& picture, Clock::time_point now,
                                       Person person) {
  using std::chrono::nanoseconds;
  // Frames arrive with jitter: a frame a quarter period early still counts as on time, or a
  // 10 fps source analysed at 5 fps would often wait for the third frame instead of the second.
  const nanoseconds slack = detectPeriod_ / 4;
  Decision d;
  if (person == Person::kSeen && settings_.stillDetectInterval == nanoseconds::zero() &&
      !detector_.findsBoxes()) {
    // Full rate whatever moves: the check is not paid for.
    state_ = MotionState::kPerson;
    fullRate_ = true;
    resting_ = true;
    d.offer = true;
    return d;
  }
  if (resting_) {
    // Start afresh, as on the first frame: the background is as old as the person's stay, and
    // the idle timer starts now, as if they had moved until they were last seen.
    resting_ = false;
    lastAnalysis_.reset();
    detector_.forget();
  }
  if (!lastAnalysis_) lastMotion_ = now;  // start at the full rate until the scene is known
  if (lastAnalysis_ && now - *lastAnalysis_ < detectPeriod_ - slack) {
    d.offer = fullRate_;
    return d;
  }
  const nanoseconds since = lastAnalysis_ ? now - *lastAnalysis_ : nanoseconds::zero();
  lastAnalysis_ = now;
  d.analysed = true;
  // Decoded only here, once per detect period, small and grey (a JPEG at 1/4 or 1/8 scale,
  // FFmpeg's luma plane): never a full-size colour picture.
  auto grey = picture.grey(detector_.width());
  auto result = grey ? detector_.update(*grey, since) : std::nullopt;
  boxes_.clear();
  if (result) boxes_ = result->boxes;
  // A frame that cannot be analysed counts as motion: better a detection too many.
  if (!result || result->motion) lastMotion_ = now;
  changedFraction_ = result ? result->changedFraction : 0;
  if (now - lastMotion_ < settings_.idleAfter) {
    state_ = MotionState::kMotion;
  } else {
    state_ = person != Person::kNone ? MotionState::kPerson : MotionState::kIdle;
  }
  nanoseconds interval = nanoseconds::zero();
  if (state_ == MotionState::kIdle) interval = settings_.idleDetectInterval;
  // A missed detection of a still person is confirmed at the full rate, before clear_after.
  if (state_ == MotionState::kPerson && person == Person::kSeen) {
    interval = settings_.stillDetectInterval;
  }
  fullRate_ = interval == nanoseconds::zero();
  if (interval == nanoseconds::zero() || !lastOffered_ || now - *lastOffered_ >= interval - slack) {
    d.offer = true;
    lastOffered_ = now;
  } else {
    d.gated = true;
  }
  return d;
}

}  // namespace vigil
