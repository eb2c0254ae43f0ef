// The detector's side of decoding on demand, with the real model: a frame is decoded when the
// inference worker takes it, at the smallest size covering the letterbox, and that changes the
// detections no more than noise; a picture that does not decode is a counted corrupt frame.
#include <gtest/gtest.h>

#include <mutex>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <vector>

#include "daemon/capture/frame/frame_pool.h"
#include "daemon/capture/picture/captured_picture.h"
#include "daemon/pipeline/inference_worker.h"
#include "daemon/pipeline/scheduler.h"
#include "detector/box.h"
#include "detector/detector.h"
#include "tests/bogus_jpeg.h"
#include "tests/model_paths.h"
#include "tests/wait.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<Detector> cpuDetector() {
  DetectorOptions options;
  options.model = testing::modelDir();
  options.threads = 1;
  auto detector = Detector::create(options);
  EXPECT_TRUE(detector.has_value()) << detector.error().message;
  return detector ? std::move(*detector) : nullptr;
}

// A photograph as a 1080p-class camera would send it: three times its size, as a JPEG.
std::vector<std::uint8_t> upscaledJpeg(const std::filesystem::path& photo, cv::Size& size) {
  cv::Mat image = cv::imread(photo.string());
  cv::resize(image, image, image.size() * 3, 0, 0, cv::INTER_CUBIC);
  size = image.size();
  std::vector<std::uint8_t> bytes;
  cv::imencode(".jpg", image, bytes, {cv::IMWRITE_JPEG_QUALITY, 90});
  return bytes;
}

std::vector<Detection> persons(const DetectionResult& r, float minScore) {
  std::vector<Detection> out;
  for (const Detection& d : r.detections) {
    if (d.classId == 0 && d.score >= minScore) out.push_back(d);
  }
  return out;
}

TEST(ScaledDecodeTest, DetectionsOnUpscaledPhotographsMatchTheFullDecode) {
  VIGIL_REQUIRE_MODEL();
  VIGIL_REQUIRE_COCO();
  auto detector = cpuDetector();
  ASSERT_NE(detector, nullptr);
  const cv::Size input(detector->manifest().input.width, detector->manifest().input.height);
  int full = 0, matched = 0, photos = 0;
  double iouSum = 0, scoreDiffSum = 0;
  DetectionResult a, b;
  for (const auto& photo : testing::cocoPhotographs()) {
    if (photos++ == 20) break;
    cv::Size size;
    const auto bytes = upscaledJpeg(photo, size);
    ASSERT_TRUE(detector->detect(cv::imdecode(bytes, cv::IMREAD_COLOR), a).has_value());
    CapturedPicture picture;
    picture.setJpeg(bytes, size);
    auto pixels = picture.bgr(letterboxCovering(size, input));
    ASSERT_TRUE(pixels.has_value()) << pixels.error().message;
    EXPECT_LT(pixels->cols, size.width) << photo << ": decoded smaller than it arrived";
    ASSERT_TRUE(detector->detect(*pixels, size, b).has_value());
    EXPECT_EQ(b.width, size.width);
    EXPECT_EQ(b.height, size.height);
    // Each person of the full decode (at presence's 0.5) against the best box of the scaled one.
    const auto expected = persons(a, 0.5F);
    const auto actual = persons(b, 0.3F);
    for (const Detection& e : expected) {
      ++full;
      float best = 0, scoreDiff = 0;
      for (const Detection& d : actual) {
        if (float o = iou(e.box, d.box); o > best) {
          best = o;
          scoreDiff = std::abs(d.score - e.score);
        }
      }
      if (best >= 0.7F) {
        ++matched;
        iouSum += best;
        scoreDiffSum += scoreDiff;
      }
    }
  }
  ASSERT_GT(full, 20) << "too few persons to judge";
  std::printf(
      "scaled vs full decode, %d photographs x3: %d of %d persons matched (IoU >= 0.7), "
      "mean IoU %.3f, mean score difference %.3f\n",
      photos - 1, matched, full, iouSum / matched, scoreDiffSum / matched);
  EXPECT_GE(matched, full * 95 / 100);
  EXPECT_GE(iouSum / matched, 0.9);
  EXPECT_LE(scoreDiffSum / matched, 0.05);
}

TEST(InferenceWorkerTest, FramesAreDecodedWhenTakenAndAnUndecodableOneIsACountedCorruptFrame) {
  VIGIL_REQUIRE_MODEL();
  VIGIL_REQUIRE_COCO();
  auto detector = cpuDetector();
  ASSERT_NE(detector, nullptr);
  cv::Size size;
  const auto good = upscaledJpeg(testing::cocoPhotographs().front(), size);
  Scheduler scheduler;
  auto channel = std::make_shared<CameraChannel>("door", 100);
  scheduler.attach(channel);
  std::mutex mutex;
  std::vector<std::pair<cv::Size, std::uint64_t>> results;  // size reported, decodes of the frame
  InferenceWorker worker(std::move(detector), scheduler, [&](FrameResult&& r) {
    std::lock_guard lock(mutex);
    results.emplace_back(cv::Size(r.width, r.height), r.frame->picture.decodes());
  });
  worker.start();
  auto pool = FramePool::create(2);
  auto offer = [&](const std::vector<std::uint8_t>& bytes) {
    auto frame = pool->acquire();
    ASSERT_TRUE(frame.has_value());
    (*frame)->picture.setJpeg(bytes, size);
    (*frame)->picture.billTo(channel->counters().decoding);  // as the capture thread does
    scheduler.offer(*channel, std::move(*frame));
  };
  offer(testing::withBogusHuffmanTable(good));
  ASSERT_TRUE(testing::waitUntil([&] { return channel->counters().decodeErrorsTotal() == 1; }));
  offer(good);
  ASSERT_TRUE(testing::waitUntil([&] {
    std::lock_guard lock(mutex);
    return !results.empty();
  }));
  worker.stop();
  std::lock_guard lock(mutex);
  ASSERT_EQ(results.size(), 1U) << "the corrupt frame gave no result";
  EXPECT_EQ(results[0].first, size) << "boxes in the full picture's pixels";
  EXPECT_EQ(results[0].second, 1U) << "decoded once, at the detector's size";
  EXPECT_EQ(channel->counters().decoding->frames.load(), 1U) << "the good frame only";
  EXPECT_GT(channel->counters().decoding->cpuNanosElsewhere.load(), 0)
      << "decoded on the worker's thread, billed to the camera";
  EXPECT_EQ(channel->counters().detected.load(), 1U);
}

}  // namespace
}  // namespace vigil
