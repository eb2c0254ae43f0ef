#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "detector/error.h"

namespace vigil {

// cameras.yaml: the only place the daemon's configuration is read. config/cameras.yaml is the
// documented example; every key below is named there.

enum class SourceKind { kV4l2, kRtsp, kHttp, kFile };
enum class PixelFormatChoice { kAuto, kMjpeg, kYuyv };

struct CameraConfig {
  std::string name;    // unique, [a-z0-9_-]+
  std::string source;  // as written in the file
  SourceKind kind = SourceKind::kV4l2;
  std::string location;  // device path, URL, or absolute file path (file: sources)
  PixelFormatChoice format = PixelFormatChoice::kAuto;
  int width = 640;
  int height = 480;
  double fps = 10;       // capture rate asked of the device
  double detectFps = 5;  // how often a frame of this camera goes to the detector
  bool enabled = true;
  bool loop = false;  // file sources: start again at the end

  bool operator==(const CameraConfig&) const = default;
};

struct DetectorConfig {
  std::string model;  // empty: the built-in default model directory
  std::string backend = "cpu";
  int threads = 0;
  float minScore = 0.5F;
  float nms = 0.45F;
  std::vector<std::string> classes{"person"};

  bool operator==(const DetectorConfig&) const = default;
};

struct Config {
  std::filesystem::path file;
  int version = 1;
  DetectorConfig detector;
  std::vector<CameraConfig> cameras;
};

// Reads and validates cameras.yaml. The error names file:line:col, the key path and the reason,
// e.g. "cameras.yaml:12:5: cameras[1].fps: must be between 0.1 and 120, got 0".
// Relative model and file: paths are taken relative to the file's directory.
Expected<Config> loadConfig(const std::filesystem::path& file);
Expected<Config> parseConfig(const std::string& text, const std::filesystem::path& file);

std::string_view sourceKindName(SourceKind kind);
std::string_view pixelFormatName(PixelFormatChoice format);

}  // namespace vigil
