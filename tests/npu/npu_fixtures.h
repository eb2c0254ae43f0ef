#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "detector/backends/opencv_backend.h"
#include "detector/model_manifest.h"
#include "detector/npu/device_tensor.h"
#include "detector/npu/npu_backend.h"
#include "detector/preprocess.h"
#include "tests/model_paths.h"
#include "tests/temp_dir.h"

namespace vigil::testing {

// The bundle tests/CMakeLists.txt builds with scripts/split-model.py from the real model.
inline std::filesystem::path npuBundle() { return VIGIL_NPU_BUNDLE; }

#define VIGIL_REQUIRE_NPU_BUNDLE()                                                          \
  do {                                                                                      \
    VIGIL_REQUIRE_MODEL();                                                                  \
    if (!std::filesystem::exists(::vigil::testing::npuBundle() / "model.yaml"))             \
      GTEST_SKIP() << "NPU bundle not built at " << ::vigil::testing::npuBundle().string(); \
  } while (0)

inline std::vector<std::filesystem::path> cocoImages(std::size_t limit) {
  std::vector<std::filesystem::path> images;
  for (const auto& e : std::filesystem::directory_iterator(cocoDir() / "images")) {
    images.push_back(e.path());
  }
  std::sort(images.begin(), images.end());
  if (images.size() > limit) images.resize(limit);
  return images;
}

// XRT 2.13's noop shim: XILINX_XRT must name a prefix whose lib/libxrt_noop.so.2 is the
// system's; set before the first XRT call of the process (each test runs in its own process).
class NoopXrt {
 public:
  NoopXrt() {
    std::filesystem::create_directories(prefix_.path() / "lib");
    std::filesystem::create_symlink(VIGIL_XRT_NOOP_LIB, prefix_.path() / "lib/libxrt_noop.so.2");
    ::setenv("XCL_EMULATION_MODE", "noop", 1);
    ::setenv("XILINX_XRT", prefix_.path().c_str(), 1);
    ::unsetenv("XRT_INI_PATH");
  }
  ~NoopXrt() {
    ::unsetenv("XCL_EMULATION_MODE");
    ::unsetenv("VIGIL_NOOP_REPLAY_DIR");
  }
  static bool available() { return std::filesystem::exists(VIGIL_XRT_NOOP_LIB); }

 private:
  TempDir prefix_;
};

inline std::vector<std::byte> readBytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

inline void writeBytes(const std::filesystem::path& p, std::span<const std::byte> b) {
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

using TextReplacement = std::pair<std::string_view, std::string_view>;

// The bundle's model.yaml with textual replacements, each of the first match (a test failure
// when there is none).
inline std::string bundleManifestWith(std::initializer_list<TextReplacement> replacements) {
  auto bytes = readBytes(npuBundle() / "model.yaml");
  std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (const auto& [from, to] : replacements) {
    auto pos = text.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    if (pos != std::string::npos) text.replace(pos, from.size(), to);
  }
  return text;
}

// Replacements for bundleManifestWith: `wts.bin` listed under files (its sha256 and size), and
// bound as `role: weights` to argument 7, the test design's spare buffer.
struct WeightsReplacements {
  explicit WeightsReplacements(std::string_view sha256, std::uint64_t size)
      : listed(fmt::format("files:\n  wts.bin:\n    accepted:\n    - {{sha256: {}, size: {}}}\n",
                           sha256, size)) {}
  TextReplacement list() const { return {"files:\n", listed}; }
  TextReplacement bind() const { return {kLastOutput, bound}; }

  static constexpr std::string_view kLastOutput =
      "- {index: 6, role: output, tensor: '1024', bytes: 173056}\n";
  std::string listed;
  std::string bound = std::string(kLastOutput) + "    - {index: 7, role: weights, file: wts.bin}\n";
};

// Records what the NPU stage must return for given inputs: the CPU reference of the backbone,
// packed in the bundle's device format, in the replay layout (file named by the input bytes).
class Recorder {
 public:
  explicit Recorder(const ModelManifest& m) : manifest_(m), stage_(*m.npuStage()) {
    reference_ = std::move(*OnnxStage::load(m.directory() / stage_.file, stage_));
    outputs_.resize(stage_.outputs.size());
  }

  // Letterboxes `image` as the detector does and returns the network input.
  Tensor input(const cv::Mat& image) const {
    Tensor t;
    Letterbox lb(manifest_.input);
    lb.run(image, t);
    return t;
  }

  // Writes dir/<key>.bin for `in`; `corrupt` replaces the outputs with garbage.
  void record(const Tensor& in, const std::filesystem::path& dir, bool corrupt = false) {
    const NpuStageSpec& npu = *stage_.npu;
    std::vector<std::byte> packed(npu.inputs[0].byteSize());
    ASSERT_TRUE(packTensor(in, npu.inputs[0], packed));
    std::span<const std::byte> key[] = {packed};
    ASSERT_TRUE(reference_->run(std::span(&in, 1), outputs_));
    std::vector<std::byte> out;
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      std::vector<std::byte> b(npu.outputs[i].byteSize());
      ASSERT_TRUE(packTensor(outputs_[i], npu.outputs[i], b));
      out.insert(out.end(), b.begin(), b.end());
    }
    if (corrupt) {
      auto* f = reinterpret_cast<float*>(out.data());
      for (std::size_t i = 0; i < out.size() / 4; ++i)
        f[i] = static_cast<float>((i * 7919) % 13) - 6;
    }
    writeBytes(dir / fmt::format("{:016x}.bin", replayKey(key)), out);
  }

  // The canary's replay entry: the bundle's canary input, with its expected output or garbage.
  void recordCanary(const std::filesystem::path& dir, bool corrupt) {
    const NpuStageSpec& npu = *stage_.npu;
    auto in = readBytes(manifest_.directory() / npu.canaryInput);
    auto out = readBytes(manifest_.directory() / npu.canaryExpected);
    if (corrupt) {
      for (std::size_t i = 0; i < out.size(); i += 4) out[i + 3] ^= std::byte{0x5a};
    }
    std::span<const std::byte> key[] = {in};
    writeBytes(dir / fmt::format("{:016x}.bin", replayKey(key)), out);
  }

  const StageSpec& stage() const { return stage_; }

 private:
  const ModelManifest& manifest_;
  const StageSpec& stage_;
  std::unique_ptr<OnnxStage> reference_;
  std::vector<Tensor> outputs_;
};

}  // namespace vigil::testing
