#include "detector/coco_eval.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace vigil {
namespace {

using ::testing::HasSubstr;
using Detections = std::map<std::int64_t, std::vector<ScoredBox>>;

// Notation in the derivations below: ranked detections are listed best score first as TP, FP or
// IG (ignored); rc/pr are pycocotools' cumulative recall and precision, q the 101 interpolated
// precisions at recall thresholds 0, 0.01, ..., 1. A single TP alone has precision 1/(1+2^-52),
// which EXPECT_DOUBLE_EQ (4 ulps) accepts as 1.

CocoDataset datasetWithImages(std::vector<std::int64_t> ids) {
  CocoDataset dataset;
  for (std::int64_t id : ids) dataset.images.push_back({id, "", 640, 480});
  return dataset;
}

void addTruth(CocoDataset& dataset, std::int64_t imageId, Box box, bool isCrowd = false) {
  dataset.annotations.push_back(
      {imageId, box, static_cast<double>(box.width) * static_cast<double>(box.height), isCrowd});
}

void expectAllMetrics(const CocoMetrics& metrics, double ap, double ap50, double ap75, double ar) {
  EXPECT_DOUBLE_EQ(metrics.ap, ap);
  EXPECT_DOUBLE_EQ(metrics.ap50, ap50);
  EXPECT_DOUBLE_EQ(metrics.ap75, ap75);
  EXPECT_DOUBLE_EQ(metrics.ar, ar);
}

// Two boxes found exactly: TP TP at every threshold, rc reaches 1 with pr 1 -> q = 1 everywhere.
TEST(CocoEvalTest, PerfectDetectionScoresOne) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 10, 10});
  addTruth(dataset, 1, {20, 20, 10, 10});
  Detections detections{{1, {{{0, 0, 10, 10}, 0.9F}, {{20, 20, 10, 10}, 0.8F}}}};

  CocoMetrics metrics = evaluateCoco(dataset, detections);
  expectAllMetrics(metrics, 1.0, 1.0, 1.0, 1.0);
  EXPECT_EQ(metrics.images, 1);
  EXPECT_EQ(metrics.positives, 2);
}

// One positive, nothing detected: no recall threshold is reached (q = 0) and recall is 0.
TEST(CocoEvalTest, NoDetectionsScoresZero) {
  CocoDataset dataset = datasetWithImages({1, 2});
  addTruth(dataset, 1, {0, 0, 10, 10});

  CocoMetrics metrics = evaluateCoco(dataset, {});
  expectAllMetrics(metrics, 0.0, 0.0, 0.0, 0.0);
  EXPECT_EQ(metrics.images, 2);
  EXPECT_EQ(metrics.positives, 1);
}

// TP (0.9) then the duplicate FP (0.8): rc = [1, 1], pr = [1, 1/2]. Every recall threshold is
// first reached at index 0, so q = 1 and the late FP costs nothing.
TEST(CocoEvalTest, DuplicateBelowTheMatchDoesNotLowerPrecision) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 10, 10});
  Detections detections{{1, {{{0, 0, 10, 10}, 0.9F}, {{0, 0, 10, 10}, 0.8F}}}};

  expectAllMetrics(evaluateCoco(dataset, detections), 1.0, 1.0, 1.0, 1.0);
}

// A stray box (IoU 0.4 with the only truth, FP everywhere) scores 0.9, the exact box 0.8:
// FP TP -> rc = [0, 1], pr = [0, 1/2], interpolated [1/2, 1/2] -> q = 1/2 everywhere.
TEST(CocoEvalTest, HigherScoredFalsePositiveHalvesPrecision) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 10, 10});
  Detections detections{{1, {{{0, 0, 10, 10}, 0.8F}, {{0, 0, 10, 4}, 0.9F}}}};

  expectAllMetrics(evaluateCoco(dataset, detections), 0.5, 0.5, 0.5, 1.0);
}

// Greedy by score, not by overlap: the looser duplicate (IoU 0.68) scores 0.9, the exact box 0.8.
// Thresholds 0.50-0.65 (4 of 10): the loose one takes the truth, the exact one is a later FP:
// TP FP -> q = 1. Thresholds 0.70-0.95 (6): the loose one misses, the exact one matches:
// FP TP -> q = 1/2 (as above). AP = (4 * 1 + 6 * 0.5) / 10 = 0.7; recall 1 everywhere.
TEST(CocoEvalTest, HigherScoredLooseDuplicateTakesTheMatch) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 10, 10});
  Detections detections{{1, {{{0, 0, 10, 10}, 0.8F}, {{0, 0, 10, 6.8F}, 0.9F}}}};

  expectAllMetrics(evaluateCoco(dataset, detections), 0.7, 1.0, 0.5, 1.0);
}

// The 0.95 box lies inside a crowd region: its overlap is intersection / its own area = 1, so it
// matches the crowd and is ignored. Ranked: IG TP -> tp = [0, 1], fp = [0, 0], rc = [0, 1],
// pr = [0, 1] interpolated to [1, 1] -> AP 1. Counted as FP it would give 0.5; a crowd counted
// as a positive would leave recall at 1/2.
TEST(CocoEvalTest, DetectionOnCrowdRegionIsIgnored) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {50, 50, 40, 40}, /*isCrowd=*/true);
  addTruth(dataset, 1, {0, 0, 10, 10});
  Detections detections{{1, {{{0, 0, 10, 10}, 0.9F}, {{60, 60, 10, 10}, 0.95F}}}};

  CocoMetrics metrics = evaluateCoco(dataset, detections);
  expectAllMetrics(metrics, 1.0, 1.0, 1.0, 1.0);
  EXPECT_EQ(metrics.positives, 1);
}

// Two small boxes (standard IoU with the crowd box only 0.04) inside one 100x100 crowd region,
// then the real person: a crowd region is not used up by a match, so both are ignored:
// IG IG TP -> AP 1. Had the first consumed the crowd, the second would be an FP before the TP
// (FP at rank 2 -> q = 1/2, AP 0.5).
TEST(CocoEvalTest, CrowdRegionAbsorbsSeveralDetections) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 100, 100}, /*isCrowd=*/true);
  addTruth(dataset, 1, {200, 200, 10, 10});
  Detections detections{
      {1, {{{10, 10, 20, 20}, 0.9F}, {{50, 50, 20, 20}, 0.8F}, {{200, 200, 10, 10}, 0.7F}}}};

  CocoMetrics metrics = evaluateCoco(dataset, detections);
  expectAllMetrics(metrics, 1.0, 1.0, 1.0, 1.0);
  EXPECT_EQ(metrics.positives, 1);
}

// A box inside a crowd region that also overlaps a real person with IoU 292 / 400 = 0.73 (its
// crowd overlap is 1). Listed crowd first, yet the real truth is tried first and, once matched,
// never traded for the ignored region: TP at 0.50-0.70 (5 thresholds, q = 1). At 0.75-0.95 it
// falls back to the crowd and is ignored, leaving no TP (q = 0): AP = AR = 5 / 10, AP75 0.
// Preferring the crowd's larger overlap would ignore it everywhere: AP 0.
TEST(CocoEvalTest, RealMatchIsKeptOverCrowdRegion) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 100, 100}, /*isCrowd=*/true);
  addTruth(dataset, 1, {10, 10, 20, 20});
  Detections detections{{1, {{{10, 10, 20, 14.6F}, 0.9F}}}};

  CocoMetrics metrics = evaluateCoco(dataset, detections);
  expectAllMetrics(metrics, 0.5, 1.0, 0.0, 0.5);
  EXPECT_EQ(metrics.positives, 1);
}

// Image 2 has no truth, so its two boxes are FPs. Ranked: FP(0.9) TP(0.5) FP(0.4):
// tp = [0, 1, 1], fp = [1, 1, 2], rc = [0, 1, 1], pr = [0, 1/2, 1/3], interpolated
// [1/2, 1/2, 1/3] -> q = 1/2 at every recall threshold: precision drops from 1 to 1/2.
TEST(CocoEvalTest, DetectionsOnImageWithoutTruthAreFalsePositives) {
  CocoDataset dataset = datasetWithImages({1, 2});
  addTruth(dataset, 1, {0, 0, 10, 10});
  Detections detections{{1, {{{0, 0, 10, 10}, 0.5F}}},
                        {2, {{{0, 0, 10, 10}, 0.9F}, {{30, 30, 10, 10}, 0.4F}}}};

  expectAllMetrics(evaluateCoco(dataset, detections), 0.5, 0.5, 0.5, 1.0);
}

// IoU 0.58 (a 100x58 box inside a 100x100 one): TP at thresholds 0.50 and 0.55, missed at the
// 8 others. Two such pairs so that every precision is exactly 1: q = 1 at 2 thresholds, 0 at 8.
// AP = 2 / 10, AP50 = 1, AP75 = 0, AR = (1 + 1) / 10.
TEST(CocoEvalTest, IouBetweenThresholdsCountsOnlyBelowIt) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 100, 100});
  addTruth(dataset, 1, {200, 0, 100, 100});
  Detections detections{{1, {{{0, 0, 100, 58}, 0.9F}, {{200, 0, 100, 58}, 0.8F}}}};

  expectAllMetrics(evaluateCoco(dataset, detections), 0.2, 1.0, 0.0, 0.2);
}

// pycocotools matches when IoU >= threshold, and its threshold 0.60 is exactly the double 0.6,
// so an IoU of exactly 6000 / 10000 = 0.6 is a TP at 0.50, 0.55 and 0.60: AP = AR = 3 / 10.
TEST(CocoEvalTest, IouEqualToThresholdMatches) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 100, 100});
  addTruth(dataset, 1, {200, 0, 100, 100});
  Detections detections{{1, {{{0, 0, 100, 60}, 0.9F}, {{200, 0, 100, 60}, 0.8F}}}};

  expectAllMetrics(evaluateCoco(dataset, detections), 0.3, 1.0, 0.0, 0.3);
}

// Given in the order TP(0.8) TP(0.7) FP(0.9). With maxDetections = 2 the two best scores stay,
// FP(0.9) TP(0.8): rc = [0, 1/2], pr = [0, 1/2] interpolated [1/2, 1/2]; recall thresholds
// 0..0.50 (51 of 101) reach precision 1/2, the rest 0 -> AP = 51 * 0.5 / 101 = 51 / 202, AR 1/2.
// Keeping the first two given would be TP TP -> AP 1. With no limit: FP TP TP, rc = [0, 1/2, 1],
// pr = [0, 1/2, 2/3] interpolated to 2/3 everywhere -> AP 2/3, AR 1.
TEST(CocoEvalTest, MaxDetectionsKeepsHighestScores) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 10, 10});
  addTruth(dataset, 1, {20, 20, 10, 10});
  Detections detections{
      {1, {{{0, 0, 10, 10}, 0.8F}, {{20, 20, 10, 10}, 0.7F}, {{50, 50, 10, 10}, 0.9F}}}};

  expectAllMetrics(evaluateCoco(dataset, detections, 2), 51.0 / 202, 51.0 / 202, 51.0 / 202, 0.5);
  expectAllMetrics(evaluateCoco(dataset, detections), 2.0 / 3, 2.0 / 3, 2.0 / 3, 1.0);
}

// Without a single non-ignored truth precision and recall are undefined: -1, as in pycocotools.
TEST(CocoEvalTest, NoPositivesGivesMinusOne) {
  CocoMetrics empty = evaluateCoco(CocoDataset{}, {});
  expectAllMetrics(empty, -1, -1, -1, -1);
  EXPECT_EQ(empty.images, 0);
  EXPECT_EQ(empty.positives, 0);

  CocoDataset crowdOnly = datasetWithImages({1, 2});
  addTruth(crowdOnly, 1, {0, 0, 100, 100}, /*isCrowd=*/true);
  Detections detections{{1, {{{0, 0, 10, 10}, 0.9F}}}, {2, {{{0, 0, 10, 10}, 0.9F}}}};
  CocoMetrics metrics = evaluateCoco(crowdOnly, detections);
  expectAllMetrics(metrics, -1, -1, -1, -1);
  EXPECT_EQ(metrics.images, 2);
  EXPECT_EQ(metrics.positives, 0);
}

// Ties across images keep pycocotools' image order, sorted ids, whatever the file order: image 1
// (an FP) ranks before image 2 (the TP), FP TP -> q = 1/2 -> AP 0.5. File order would give 1.
TEST(CocoEvalTest, TiedScoresRankInImageIdOrder) {
  CocoDataset dataset = datasetWithImages({2, 1});
  addTruth(dataset, 2, {0, 0, 10, 10});
  Detections detections{{2, {{{0, 0, 10, 10}, 0.5F}}}, {1, {{{0, 0, 10, 10}, 0.5F}}}};

  expectAllMetrics(evaluateCoco(dataset, detections), 0.5, 0.5, 0.5, 1.0);
}

// Recall thresholds are numpy.linspace(0, 1, 101), whose point 70 is 70 * 0.01 =
// 0.7000000000000001, not 0.7. Ten truths, ranked TP x7, FP, TP x3: rc = .1 ... .7, .7, .8, .9,
// 1; pr interpolated = 1 up to the 7th TP, then max(7/8, 8/9, 9/10, 10/11) = 10/11. Thresholds
// 0..0.69 (70 points) reach precision 1; 0.7000000000000001 is first reached at rc = 0.8, so it
// and the 30 above get 10/11: AP = (70 + 31 * 10/11) / 101 = 1080 / 1111 (with i / 100 as the
// threshold it would be 1081 / 1111).
TEST(CocoEvalTest, RecallThresholdsFollowNumpyLinspace) {
  CocoDataset dataset = datasetWithImages({1});
  std::vector<ScoredBox> boxes;
  for (int i = 0; i < 10; ++i) {
    Box box{static_cast<float>(20 * i), 0, 10, 10};
    addTruth(dataset, 1, box);
    boxes.push_back({box, 0.99F - 0.01F * static_cast<float>(i < 7 ? i : i + 1)});
  }
  boxes.push_back({{500, 500, 10, 10}, 0.92F});  // between the 7th (0.93) and 8th (0.91) TP
  Detections detections{{1, boxes}};

  const double expected = 1080.0 / 1111.0;
  expectAllMetrics(evaluateCoco(dataset, detections), expected, expected, expected, 1.0);
}

// A non-crowd truth whose "area" lies outside [0, 1e10] is ignored like a crowd, but unlike a
// crowd it is used up by its first match: B1 (0.9) is ignored, B2 (0.85) finds it taken and is
// an FP, A (0.8) is a TP: IG FP TP -> rc = [0, 0, 1], pr = [0, 0, 1/2] -> q = 1/2, AP 0.5.
// It still counts among the dataset's positives (non-crowd), though not in the evaluation.
TEST(CocoEvalTest, TruthOutsideAreaRangeIsIgnoredButUsedUp) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 10, 10});
  dataset.annotations.push_back({1, {20, 20, 10, 10}, 2e10, false});
  Detections detections{
      {1, {{{20, 20, 10, 10}, 0.9F}, {{20, 20, 10, 10}, 0.85F}, {{0, 0, 10, 10}, 0.8F}}}};

  CocoMetrics metrics = evaluateCoco(dataset, detections);
  expectAllMetrics(metrics, 0.5, 0.5, 0.5, 1.0);
  EXPECT_EQ(metrics.positives, 2);
}

// An unmatched detection of 2e5 x 2e5 = 4e10 px is outside area range "all" and so ignored, not
// an FP: IG TP -> AP 1 (as an FP it would be FP TP -> 0.5).
TEST(CocoEvalTest, UnmatchedDetectionOutsideAreaRangeIsIgnored) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 10, 10});
  Detections detections{{1, {{{1000, 1000, 2e5F, 2e5F}, 0.9F}, {{0, 0, 10, 10}, 0.8F}}}};

  expectAllMetrics(evaluateCoco(dataset, detections), 1.0, 1.0, 1.0, 1.0);
}

// Detections for an image id the dataset does not list are left out: only the TP remains.
TEST(CocoEvalTest, DetectionsForUnknownImagesAreIgnored) {
  CocoDataset dataset = datasetWithImages({1});
  addTruth(dataset, 1, {0, 0, 10, 10});
  Detections detections{{1, {{{0, 0, 10, 10}, 0.5F}}}, {99, {{{0, 0, 10, 10}, 0.9F}}}};

  expectAllMetrics(evaluateCoco(dataset, detections), 1.0, 1.0, 1.0, 1.0);
}

// ---------------------------------------------------------------------------------------------

class CocoLoadTest : public ::testing::Test {
 protected:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }

  const std::filesystem::path& write(const std::string& text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::path(::testing::TempDir()) /
            (std::string("vigil_coco_") + info->name() + ".json");
    std::ofstream(path_) << text;
    return path_;
  }

  std::filesystem::path path_;
};

TEST_F(CocoLoadTest, KeepsImageOrderAndFiltersCategory) {
  const auto& file = write(R"({
    "images": [{"id": 7, "file_name": "b.jpg", "width": 640, "height": 480},
               {"id": 3, "file_name": "a.jpg", "width": 320, "height": 240}],
    "annotations": [
      {"id": 1, "image_id": 7, "category_id": 1, "bbox": [1, 2, 3, 4]},
      {"id": 2, "image_id": 3, "category_id": 2, "bbox": [0, 0, 5, 5], "area": 25, "iscrowd": 0},
      {"id": 3, "image_id": 3, "category_id": 1, "bbox": [10.5, 20, 30, 40.25], "area": 50.5,
       "iscrowd": 1}
    ],
    "categories": [{"id": 1, "name": "person"}, {"id": 2, "name": "bicycle"}]
  })");

  auto dataset = loadCocoDataset(file, 1);
  ASSERT_TRUE(dataset) << dataset.error().message;
  ASSERT_EQ(dataset->images.size(), 2U);
  EXPECT_EQ(dataset->images[0].id, 7);
  EXPECT_EQ(dataset->images[0].fileName, "b.jpg");
  EXPECT_EQ(dataset->images[0].width, 640);
  EXPECT_EQ(dataset->images[0].height, 480);
  EXPECT_EQ(dataset->images[1].id, 3);
  EXPECT_EQ(dataset->images[1].fileName, "a.jpg");

  ASSERT_EQ(dataset->annotations.size(), 2U);
  const CocoAnnotation& first = dataset->annotations[0];
  EXPECT_EQ(first.imageId, 7);
  EXPECT_FLOAT_EQ(first.box.x, 1);
  EXPECT_FLOAT_EQ(first.box.y, 2);
  EXPECT_FLOAT_EQ(first.box.width, 3);
  EXPECT_FLOAT_EQ(first.box.height, 4);
  EXPECT_DOUBLE_EQ(first.area, 12);  // absent: w * h
  EXPECT_FALSE(first.isCrowd);       // absent: 0

  const CocoAnnotation& second = dataset->annotations[1];
  EXPECT_EQ(second.imageId, 3);
  EXPECT_FLOAT_EQ(second.box.x, 10.5F);
  EXPECT_FLOAT_EQ(second.box.height, 40.25F);
  EXPECT_DOUBLE_EQ(second.area, 50.5);
  EXPECT_TRUE(second.isCrowd);

  auto bicycles = loadCocoDataset(file, 2);
  ASSERT_TRUE(bicycles) << bicycles.error().message;
  ASSERT_EQ(bicycles->annotations.size(), 1U);
  EXPECT_DOUBLE_EQ(bicycles->annotations[0].area, 25);
}

TEST_F(CocoLoadTest, MissingFileIsNotFound) {
  const auto file = std::filesystem::path(::testing::TempDir()) / "vigil_coco_does_not_exist.json";
  auto dataset = loadCocoDataset(file, 1);
  ASSERT_FALSE(dataset);
  EXPECT_EQ(dataset.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(dataset.error().message, HasSubstr("vigil_coco_does_not_exist.json"));
}

TEST_F(CocoLoadTest, MalformedJsonIsInvalidData) {
  const auto& file = write(R"({"images": [{"id": 1,}]})");
  auto dataset = loadCocoDataset(file, 1);
  ASSERT_FALSE(dataset);
  EXPECT_EQ(dataset.error().code, ErrorCode::kInvalidData);
  EXPECT_THAT(dataset.error().message, HasSubstr(file.string()));
  EXPECT_THAT(dataset.error().message, HasSubstr("invalid JSON"));
}

TEST_F(CocoLoadTest, BadEntriesNameTheirPath) {
  struct Case {
    std::string annotations;
    std::string expected;
  };
  const std::string good = R"({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]})";
  const std::vector<Case> cases = {
      {R"([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1]}])",
       "annotations[0].bbox: expected 4 numbers"},
      {"[" + good + R"(, {"image_id": 1, "category_id": 1, "bbox": [0, "0", 1, 1]}])",
       "annotations[1].bbox: expected 4 numbers"},
      {R"([{"image_id": 1, "category_id": 1}])", "annotations[0].bbox: expected 4 numbers"},
      {R"([{"image_id": 1, "category_id": 1, "bbox": [0, 0, -1, 1]}])",
       "annotations[0].bbox: width and height must not be negative"},
      {R"([{"image_id": 2, "category_id": 1, "bbox": [0, 0, 1, 1]}])",
       "annotations[0].image_id: no image with id 2"},
      {R"([{"image_id": 1, "category_id": "1", "bbox": [0, 0, 1, 1]}])",
       "annotations[0].category_id: expected an integer"},
      {R"([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "iscrowd": 2}])",
       "annotations[0].iscrowd: expected 0 or 1"},
      {R"([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "area": "big"}])",
       "annotations[0].area: expected a number"},
      {R"({"image_id": 1})", "annotations: expected an array"},
  };
  for (const Case& c : cases) {
    const auto& file = write(R"({"images": [{"id": 1, "file_name": "a.jpg"}], "annotations": )" +
                             c.annotations + "}");
    auto dataset = loadCocoDataset(file, 1);
    ASSERT_FALSE(dataset) << c.annotations;
    EXPECT_EQ(dataset.error().code, ErrorCode::kInvalidData);
    EXPECT_THAT(dataset.error().message, HasSubstr(file.string() + ": " + c.expected));
  }

  const auto& badImage = write(R"({"images": [{"id": 1}, {"id": "two"}], "annotations": []})");
  auto dataset = loadCocoDataset(badImage, 1);
  ASSERT_FALSE(dataset);
  EXPECT_THAT(dataset.error().message, HasSubstr(badImage.string() + ": images[1].id: expected"));

  const auto& noImages = write(R"({"annotations": []})");
  dataset = loadCocoDataset(noImages, 1);
  ASSERT_FALSE(dataset);
  EXPECT_THAT(dataset.error().message, HasSubstr("images: expected an array"));

  const auto& notAnObject = write("[1, 2]");
  dataset = loadCocoDataset(notAnObject, 1);
  ASSERT_FALSE(dataset);
  EXPECT_EQ(dataset.error().code, ErrorCode::kInvalidData);
}

// ---------------------------------------------------------------------------------------------

// The shared COCO person subset: its ground truth, given back as detections (score 1, crowd
// regions left out), must match itself completely at every threshold.
TEST(CocoSharedDataTest, PersonDevGroundTruthScoresOne) {
  const std::filesystem::path file = VIGIL_SHARED_DIR "/data/coco-person-dev/annotations.json";
  if (!std::filesystem::exists(file)) {
    GTEST_SKIP() << "shared data absent: " << file << " (set VIGIL_SHARED_DIR)";
  }
  auto dataset = loadCocoDataset(file, 1);
  ASSERT_TRUE(dataset) << dataset.error().message;
  EXPECT_EQ(dataset->images.size(), 50U);
  ASSERT_EQ(dataset->annotations.size(), 141U);

  Detections detections;
  int crowd = 0;
  for (const CocoAnnotation& annotation : dataset->annotations) {
    if (annotation.isCrowd) {
      ++crowd;
      continue;
    }
    detections[annotation.imageId].push_back({annotation.box, 1.0F});
  }
  EXPECT_EQ(crowd, 2);

  CocoMetrics metrics = evaluateCoco(*dataset, detections);
  EXPECT_EQ(metrics.images, 50);
  EXPECT_EQ(metrics.positives, 139);
  EXPECT_EQ(metrics.ap, 1.0);
  expectAllMetrics(metrics, 1.0, 1.0, 1.0, 1.0);
}

}  // namespace
}  // namespace vigil
