// Detection on regions (detector/region_detector.h) with the real YOLOX-nano on real clip
// frames placed far away: a TUD-Stadtmitte frame at half its size in the middle of a 1080p
// picture whose rest is a blurred, darkened copy of it (scripts/make-far-clip.py's recipe), so
// that its persons are 30-100 pixels tall and reach a whole-picture detection 7-22 pixels tall.
#include "detector/region_detector.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include "tests/model_paths.h"

namespace vigil {
namespace {

constexpr int kFrame = 100;  // of TUD-Stadtmitte: six persons walking
constexpr double kScale = 0.5;

struct FarPicture {
  cv::Mat bgr;               // 1920x1080
  cv::Rect placed;           // where the clip's frame is
  std::vector<Box> persons;  // ground truth, in the picture's pixels
};

FarPicture farPicture() {
  FarPicture far;
  cv::VideoCapture video((testing::videosDir() / "TUD-Stadtmitte.mp4").string(), cv::CAP_FFMPEG);
  cv::Mat frame;
  for (int i = 1; i <= kFrame; ++i) video.read(frame);
  if (frame.empty()) return far;
  cv::resize(frame, far.bgr, {1920, 1080});
  cv::blur(far.bgr, far.bgr, {41, 41});
  far.bgr.convertTo(far.bgr, -1, 0.6);
  cv::Mat small;
  cv::resize(frame, small, {}, kScale, kScale, cv::INTER_AREA);
  far.placed = cv::Rect((1920 - small.cols) / 2, (1080 - small.rows) / 2, small.cols, small.rows);
  small.copyTo(far.bgr(far.placed));
  std::ifstream file(testing::videosDir() / "TUD-Stadtmitte.person.json");
  const auto gt = nlohmann::json::parse(file);
  int image = -1;
  for (const auto& i : gt["images"]) {
    if (i["frame_index"] == kFrame) image = i["id"];
  }
  for (const auto& a : gt["annotations"]) {
    if (a["image_id"] != image || a.value("iscrowd", 0) == 1) continue;
    const auto b = a["bbox"];
    far.persons.push_back({static_cast<float>((b[0].get<double>() - 1) * kScale + far.placed.x),
                           static_cast<float>((b[1].get<double>() - 1) * kScale + far.placed.y),
                           static_cast<float>(b[2].get<double>() * kScale),
                           static_cast<float>(b[3].get<double>() * kScale)});
  }
  return far;
}

// Ground-truth persons that a detection of at least `score` overlaps by IoU 0.5.
int found(const std::vector<Box>& persons, const std::vector<Detection>& detections,
          float score = 0.3F) {
  int n = 0;
  for (const Box& p : persons) {
    for (const Detection& d : detections) {
      if (d.score >= score && iou(p, d.box) >= 0.5F) {
        ++n;
        break;
      }
    }
  }
  return n;
}

std::unique_ptr<Detector> detector() {
  DetectorOptions options;
  options.model = testing::modelDir();
  options.backend = "cpu";
  options.classes = {"person"};
  auto made = Detector::create(options);
  EXPECT_TRUE(made) << made.error().message;
  return made ? std::move(*made) : nullptr;
}

class RegionDetectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    VIGIL_REQUIRE_MODEL();
    far_ = farPicture();
    ASSERT_FALSE(far_.bgr.empty()) << "TUD-Stadtmitte.mp4 absent at " << testing::videosDir();
    ASSERT_GE(far_.persons.size(), 4U);
    detector_ = detector();
    ASSERT_TRUE(detector_);
  }

  FarPicture far_;
  std::unique_ptr<Detector> detector_;
};

TEST_F(RegionDetectorTest, FarPersonsAreFoundOnAMotionRegionAndNotInTheWholePicture) {
  RegionDetector regions;
  DetectionResult whole;
  DetectionResult onRegions;
  RegionCounts counts{};
  ASSERT_TRUE(regions.detect(*detector_, far_.bgr, {}, whole, counts));
  EXPECT_EQ(counts[static_cast<std::size_t>(RegionKind::kWhole)], 1U);
  // The motion check's box: where the persons walk.
  const Box moving{static_cast<float>(far_.placed.x), static_cast<float>(far_.placed.y + 40),
                   static_cast<float>(far_.placed.width), 150};
  const auto plan =
      planRegions(far_.bgr.size(), std::vector<Box>{moving}, {}, false, regions.settings());
  ASSERT_EQ(plan.size(), 1U);
  EXPECT_EQ(plan[0].kind, RegionKind::kMotion);
  ASSERT_TRUE(regions.detect(*detector_, far_.bgr, plan, onRegions, counts));
  EXPECT_EQ(onRegions.width, 1920);
  const int wholeFound = found(far_.persons, whole.detections);
  const int regionFound = found(far_.persons, onRegions.detections);
  RecordProperty("whole", wholeFound);
  RecordProperty("regions", regionFound);
  EXPECT_GE(regionFound, static_cast<int>(far_.persons.size()) - 2) << "of " << far_.persons.size();
  EXPECT_GE(regionFound, wholeFound + 2) << "whole picture found " << wholeFound;
}

TEST_F(RegionDetectorTest, APersonAcrossTwoRegionsIsCountedOnceAndNotLost) {
  RegionDetector regions;
  DetectionResult alone;
  RegionCounts counts{};
  // The tallest person, seen whole on a region of their own.
  const Box person =
      *std::max_element(far_.persons.begin(), far_.persons.end(),
                        [](const Box& a, const Box& b) { return a.height < b.height; });
  const cv::Rect own = regionAround(person, far_.bgr.size(), regions.settings());
  const std::vector<Region> single{{own, RegionKind::kTrack}};
  ASSERT_TRUE(regions.detect(*detector_, far_.bgr, single, alone, counts));
  ASSERT_EQ(found({person}, alone.detections), 1) << "the person alone is not found";
  // Two regions meeting at the person's middle: each holds half of them.
  const int middle = static_cast<int>(person.x + person.width / 2);
  const int top = std::clamp(static_cast<int>(person.y + person.height / 2) - 208, 0, 1080 - 416);
  const std::vector<Region> split{{cv::Rect(middle - 416, top, 416, 416), RegionKind::kMotion},
                                  {cv::Rect(middle, top, 416, 416), RegionKind::kMotion}};
  counts = {};
  DetectionResult across;
  ASSERT_TRUE(regions.detect(*detector_, far_.bgr, split, across, counts));
  EXPECT_EQ(counts[static_cast<std::size_t>(RegionKind::kEdge)], 1U)
      << "the cut person is detected again on a region centred on them";
  int overlapping = 0;
  for (const Detection& d : across.detections) {
    if (d.score >= 0.3F && iou(d.box, person) > 0.1F) ++overlapping;
  }
  EXPECT_EQ(overlapping, 1) << "counted once";
  EXPECT_EQ(found({person}, across.detections), 1) << "and found whole";
}

}  // namespace
}  // namespace vigil
