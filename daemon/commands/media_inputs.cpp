#include "daemon/commands/media_inputs.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <opencv2/imgcodecs.hpp>

#include "daemon/capture/picture/captured_picture.h"
#include "daemon/capture/picture/jpeg_frame.h"

namespace vigil {

bool hasImageExtension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".bmp" || ext == ".webp";
}

Expected<std::vector<MediaItem>> expandMediaPath(const std::filesystem::path& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    return makeError(ErrorCode::kNotFound, "{}: no such file or directory", path.string());
  }
  std::vector<MediaItem> items;
  if (std::filesystem::is_directory(status)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
      if (entry.is_regular_file() && hasImageExtension(entry.path())) {
        items.push_back({entry.path(), MediaKind::kImage});
      }
    }
    if (ec) return makeError(ErrorCode::kInvalidData, "{}: {}", path.string(), ec.message());
    if (items.empty()) {
      return makeError(ErrorCode::kInvalidArgument, "{}: directory holds no images", path.string());
    }
    std::sort(items.begin(), items.end(),
              [](const MediaItem& a, const MediaItem& b) { return a.path < b.path; });
    return items;
  }
  items.push_back({path, hasImageExtension(path) ? MediaKind::kImage : MediaKind::kVideo});
  return items;
}

namespace {

// The whole file; kNotFound when it cannot be opened, kInvalidData when it is empty.
Expected<std::vector<unsigned char>> readFileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(ErrorCode::kNotFound, "{}: cannot open", path.string());
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  if (bytes.empty()) return makeError(ErrorCode::kInvalidData, "{}: empty file", path.string());
  return bytes;
}

}  // namespace

Expected<ScaledImage> readJpegScaled(const std::filesystem::path& path, cv::Size covering) {
  auto bytes = readFileBytes(path);
  if (!bytes) return tl::unexpected(bytes.error());
  const auto declared = jpegDeclaredSize(*bytes);
  if (!declared) {
    return makeError(ErrorCode::kInvalidData, "{}: not a JPEG (no frame header)", path.string());
  }
  if (auto checked = checkJpegFrame(*bytes, declared->width, declared->height); !checked) {
    return makeError(ErrorCode::kInvalidData, "{}: {}", path.string(), checked.error().message);
  }
  CapturedPicture picture;
  picture.setJpeg(*bytes, *declared);
  auto pixels = picture.bgr(letterboxCovering(*declared, covering));
  if (!pixels) {
    return makeError(ErrorCode::kInvalidData, "{}: {}", path.string(), pixels.error().message);
  }
  return ScaledImage{pixels->clone(), *declared};
}

Expected<cv::Mat> readImage(const std::filesystem::path& path) {
  auto read = readFileBytes(path);
  if (!read) return tl::unexpected(read.error());
  const std::vector<unsigned char>& bytes = *read;
  const bool jpeg = bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF;
  if (jpeg) {
    // Trailing padding after the end-of-image marker is legal; look at the last few bytes.
    auto tail = std::min<std::size_t>(bytes.size(), 64);
    bool complete = false;
    for (std::size_t i = bytes.size() - tail; i + 1 < bytes.size(); ++i) {
      complete = complete || (bytes[i] == 0xFF && bytes[i + 1] == 0xD9);
    }
    if (!complete) {
      return makeError(ErrorCode::kInvalidData,
                       "{}: truncated JPEG (no end-of-image marker in the last {} bytes)",
                       path.string(), tail);
    }
  }
  cv::Mat image;
  try {
    image = cv::imdecode(bytes, cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    return makeError(ErrorCode::kInvalidData, "{}: cannot decode image: {}", path.string(),
                     e.what());
  }
  if (image.empty()) {
    return makeError(ErrorCode::kInvalidData, "{}: not a decodable image ({} bytes)", path.string(),
                     bytes.size());
  }
  return image;
}

}  // namespace vigil
