#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace vigil::testing {

// Real data beside the checkout (../shared in CI) and the installed default model. Tests that
// need them call these in a GTEST_SKIP guard, so an absent file skips with the reason.
inline std::filesystem::path sharedDir() { return VIGIL_SHARED_DIR; }
inline std::filesystem::path cocoDir() { return sharedDir() / "data/coco-person-dev"; }
inline std::filesystem::path videosDir() { return sharedDir() / "data/videos"; }
inline std::filesystem::path modelDir() { return VIGIL_MODEL_DIR; }

// The dev photographs (*.jpg under cocoDir()/images), sorted; empty when absent.
inline std::vector<std::filesystem::path> cocoPhotographs() {
  std::vector<std::filesystem::path> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cocoDir() / "images", ec)) {
    if (entry.path().extension() == ".jpg") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

inline std::string missingModelReason() {
  auto weights = modelDir() / "yolox_nano.onnx";
  if (std::filesystem::exists(weights)) return "";
  return "model weights not installed at " + weights.string() + " (run scripts/fetch-model.sh)";
}

inline std::string missingCocoReason() {
  if (std::filesystem::exists(cocoDir() / "annotations.json")) return "";
  return "COCO person photographs absent at " + cocoDir().string();
}

}  // namespace vigil::testing

#define VIGIL_REQUIRE_MODEL()                                                  \
  do {                                                                         \
    if (auto reason = ::vigil::testing::missingModelReason(); !reason.empty()) \
      GTEST_SKIP() << reason;                                                  \
  } while (0)

#define VIGIL_REQUIRE_COCO()                                                  \
  do {                                                                        \
    if (auto reason = ::vigil::testing::missingCocoReason(); !reason.empty()) \
      GTEST_SKIP() << reason;                                                 \
  } while (0)
