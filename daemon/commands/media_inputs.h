#pragma once

#include <filesystem>
#include <opencv2/core.hpp>
#include <vector>

#include "daemon/base/error.h"

namespace vigil {

enum class MediaKind { kImage, kVideo };

struct MediaItem {
  std::filesystem::path path;
  MediaKind kind = MediaKind::kImage;
};

// What a command-line PATH stands for: an image, a video file, or a directory whose images
// (jpg, jpeg, png, bmp, webp; not recursive) are taken in name order.
// A path that does not exist is kNotFound; an empty directory is kInvalidArgument.
Expected<std::vector<MediaItem>> expandMediaPath(const std::filesystem::path& path);

bool hasImageExtension(const std::filesystem::path& path);

// Reads and decodes an image file into 8-bit BGR. A truncated JPEG (no end-of-image marker,
// which OpenCV would silently decode as a grey-bottomed picture) and an undecodable file are
// kInvalidData, with the reason.
Expected<cv::Mat> readImage(const std::filesystem::path& path);

// A JPEG file decoded as the daemon decodes a camera's (CapturedPicture): at the smallest
// libjpeg scale whose picture still covers `covering`; `full` is the picture's own size. A file
// that is not a whole JPEG is kInvalidData, with the reason.
struct ScaledImage {
  cv::Mat bgr;
  cv::Size full;
};
Expected<ScaledImage> readJpegScaled(const std::filesystem::path& path, cv::Size covering);

}  // namespace vigil
