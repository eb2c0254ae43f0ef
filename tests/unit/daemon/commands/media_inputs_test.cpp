#include "daemon/commands/media_inputs.h"

#include <gtest/gtest.h>

#include <fstream>
#include <opencv2/imgcodecs.hpp>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

std::vector<unsigned char> encode(const std::string& ext) {
  cv::Mat img(24, 32, CV_8UC3, cv::Scalar(10, 200, 30));
  std::vector<unsigned char> bytes;
  cv::imencode(ext, img, bytes);
  return bytes;
}

void write(const std::filesystem::path& p, const std::vector<unsigned char>& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

TEST(ReadImageTest, DecodesJpegAndPng) {
  TempDir dir;
  write(dir.path() / "a.jpg", encode(".jpg"));
  write(dir.path() / "b.png", encode(".png"));
  auto a = readImage(dir.path() / "a.jpg");
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(a->cols, 32);
  EXPECT_EQ(a->type(), CV_8UC3);
  auto b = readImage(dir.path() / "b.png");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->at<cv::Vec3b>(5, 5), cv::Vec3b(10, 200, 30));
}

TEST(ReadImageTest, TruncatedJpegIsAnErrorNotAGreyPicture) {
  TempDir dir;
  auto bytes = encode(".jpg");
  bytes.resize(bytes.size() * 2 / 3);
  write(dir.path() / "cut.jpg", bytes);
  auto r = readImage(dir.path() / "cut.jpg");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidData);
  EXPECT_NE(r.error().message.find("cut.jpg: truncated JPEG"), std::string::npos)
      << r.error().message;
}

TEST(ReadImageTest, GarbageAndEmptyAndMissingFiles) {
  TempDir dir;
  write(dir.path() / "junk.png", {1, 2, 3, 4, 5, 6, 7, 8});
  write(dir.path() / "empty.jpg", {});
  auto junk = readImage(dir.path() / "junk.png");
  ASSERT_FALSE(junk.has_value());
  EXPECT_NE(junk.error().message.find("not a decodable image (8 bytes)"), std::string::npos);
  auto empty = readImage(dir.path() / "empty.jpg");
  ASSERT_FALSE(empty.has_value());
  EXPECT_NE(empty.error().message.find("empty file"), std::string::npos);
  auto missing = readImage(dir.path() / "nope.jpg");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

TEST(ExpandMediaPathTest, DirectoryGivesItsImagesInNameOrder) {
  TempDir dir;
  write(dir.path() / "b.jpg", encode(".jpg"));
  write(dir.path() / "a.PNG", encode(".png"));
  write(dir.path() / "notes.txt", {65});
  auto items = expandMediaPath(dir.path());
  ASSERT_TRUE(items.has_value());
  ASSERT_EQ(items->size(), 2U);
  EXPECT_EQ((*items)[0].path.filename(), "a.PNG");
  EXPECT_EQ((*items)[1].path.filename(), "b.jpg");
}

TEST(ExpandMediaPathTest, VideosMissingPathsAndEmptyDirectories) {
  TempDir dir;
  write(dir.path() / "clip.mp4", {0});
  auto video = expandMediaPath(dir.path() / "clip.mp4");
  ASSERT_TRUE(video.has_value());
  EXPECT_EQ((*video)[0].kind, MediaKind::kVideo);
  auto missing = expandMediaPath(dir.path() / "gone.jpg");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  std::filesystem::create_directory(dir.path() / "empty");
  auto empty = expandMediaPath(dir.path() / "empty");
  ASSERT_FALSE(empty.has_value());
  EXPECT_NE(empty.error().message.find("directory holds no images"), std::string::npos);
}

}  // namespace
}  // namespace vigil
