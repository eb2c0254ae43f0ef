#pragma once

#include <chrono>
#include <cstdint>
#include <opencv2/core.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "daemon/capture/picture/captured_picture.h"
#include "daemon/pipeline/detection_feedback.h"
#include "daemon/settings/motion_settings.h"
#include "detector/box.h"

namespace vigil {

// Motion on a small grey picture: the frame is shrunk to kWidth pixels wide, blurred, and
// compared with a running-average background (cv::accumulateWeighted, time constant
// kBackgroundSeconds, so a person who stops moving fades into it); pixels differing by more than
// `threshold` and outside the masks are changed, dilated to merge a moving body into one region.
// Motion: the changed fraction of the unmasked frame is at least `minArea`.
// Where: with `findBoxes`, the bounding boxes of the changed pixels' connected parts too (for
// detection regions, regions.h), and then a part of at least a quarter of `minArea` is motion by
// itself (a person across a yard changes fewer pixels than the whole-frame fraction asks for).
// The first frame (and a change of frame size) only sets the background.
// Threads: one (the camera's capture thread). Buffers are allocated for the first frame and
// reused; cv::Exception from OpenCV is caught and reported as "no motion measured".
class MotionDetector {
 public:
  static constexpr int kWidth = 160;
  // With boxes: half as fine again, so that a person 50 pixels tall in a 1080p picture still
  // changes a few pixels of it; still what a 1080p JPEG decodes to at 1/8 scale (240x135), so
  // the check costs an MJPEG camera no larger decode.
  static constexpr int kBoxesWidth = 240;
  static constexpr double kBackgroundSeconds = 2.0;

  MotionDetector(int threshold, float minArea, std::vector<Polygon> masks, bool findBoxes = false);

  struct Result {
    bool motion = false;
    double changedFraction = 0;  // of the unmasked pixels
    // With findBoxes: the changed parts' bounding boxes, in fractions of the picture's width
    // and height (0..1), largest first.
    std::vector<Box> boxes;
  };

  int width() const { return findBoxes_ ? kBoxesWidth : kWidth; }
  bool findsBoxes() const { return findBoxes_; }

  // `image`: an 8-bit BGR or grey frame of any size (shrunk to kWidth here); `sinceLast`: time
  // since the previous call (background update). nullopt when the frame could not be analysed
  // (empty, wrong type, OpenCV error).
  std::optional<Result> update(const cv::Mat& image, std::chrono::nanoseconds sinceLast);

  // The next frame only sets the background again (after a stretch nothing was analysed).
  void forget() { background_.release(); }
  // Boxes from the next frame on (or not): the background starts again at the new width.
  void setFindBoxes(bool on);

 private:
  void prepare(cv::Size small);
  // The changed parts of changed_ into `r` (boxes, and motion by a large enough part).
  void findBoxes(Result& r);

  int threshold_;
  float minArea_;
  bool findBoxes_;
  cv::Mat labels_, stats_, centroids_;      // reused by findBoxes
  std::vector<std::pair<int, Box>> parts_;  // reused by findBoxes: area, box
  std::vector<Polygon> masks_;
  cv::Size size_;         // of the shrunk frame
  cv::Mat small_, grey_;  // reused
  cv::Mat background_;    // CV_32F
  cv::Mat greyFloat_, diff_, changed_;
  cv::Mat valid_;  // 255 where motion counts (outside every mask)
  cv::Mat kernel_;
  int validPixels_ = 0;
};

enum class MotionState {
  kOff,     // gating disabled: every frame the scheduler wants is offered
  kMotion,  // motion within idle_after (or just started): full detect_fps
  kPerson,  // the latest detection shows a person: full detect_fps without a motion check (it
            // could not lower the rate); with still_detect_interval set, the check runs and
            // this is the state once nothing moved for idle_after: that interval while the
            // latest detection still shows them, full detect_fps otherwise
  kIdle,    // nothing moved for idle_after, nobody present: idle_detect_interval
};
std::string_view motionStateName(MotionState state);

// Decides, per captured frame, whether it goes to the scheduler. A frame is analysed at most
// once per detect period (the scheduler would not take more), so motion costs a few small
// image operations per detection, not per captured frame. Between analyses the last decision
// holds for full-rate states (the scheduler keeps the freshest frame); in reduced states the
// frames in between are not offered and not counted. An analysed frame that a reduced state
// holds back is "gated": a detection that would have run without gating. While the latest
// detection shows a person and still_detect_interval is 0, nothing motion says could lower the
// rate: the frames are offered without a check (on an active MJPEG camera the check's own
// decode was a seventh of the CPU), a seen person counts as motion, and the check starts again
// from a new background when they are no longer seen.
// Threads: one (the camera's capture thread); the clock is passed in, so tests replay time.
class MotionGate {
 public:
  using Clock = std::chrono::steady_clock;

  MotionGate(const MotionSettings& settings, std::vector<Polygon> cameraMasks,
             std::chrono::nanoseconds detectPeriod);

  struct Decision {
    bool offer = false;
    bool gated = false;     // analysed and held back
    bool analysed = false;  // the motion detector looked at this frame
  };

  // What the detector last said about persons on this camera (told by the floors above through
  // the camera's DetectionFeedback).
  using Person = DetectionFeedback::Person;

  // `picture` is decoded (small and grey) only when this frame is analysed.
  Decision admit(const CapturedPicture& picture, Clock::time_point now, Person person);

  // Where things move, for detection regions (MotionDetector's boxes): while on, every frame
  // the gate would let through unchecked because a person is seen is checked too (a second
  // person far away is found where they move, not only by the whole-picture pass).
  void setFindBoxes(bool on) { detector_.setFindBoxes(on); }
  // The boxes of the last analysed frame (fractions of the picture); empty without findBoxes.
  const std::vector<Box>& boxes() const { return boxes_; }

  MotionState state() const { return state_; }
  double changedFraction() const { return changedFraction_; }

 private:
  MotionSettings settings_;
  MotionDetector detector_;
  std::chrono::nanoseconds detectPeriod_;
  MotionState state_ = MotionState::kMotion;
  std::optional<Clock::time_point> lastAnalysis_;
  bool resting_ = false;  // frames offered unchecked: a person is seen
  Clock::time_point lastMotion_{};
  std::optional<Clock::time_point> lastOffered_;
  bool fullRate_ = true;  // the last analysis chose the full rate
  double changedFraction_ = 0;
  std::vector<Box> boxes_;
};

}  // namespace vigil
