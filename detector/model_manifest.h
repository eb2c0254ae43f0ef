#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "detector/error.h"

namespace vigil {

// The model manifest (model.yaml): the contract between a model's files and the code that runs
// them. See models/yolox-nano/model.yaml for the documented format.

struct AcceptedVariant {
  std::string sha256;  // lower-case hex
  std::uint64_t size = 0;
  std::string origin;
};

struct ModelFile {
  std::string name;  // relative to the manifest's directory
  std::string url;   // where fetch-model downloads it; may be empty
  std::vector<AcceptedVariant> accepted;
};

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  std::string layout;  // e.g. NCHW, NHWC, anchors-by-channels
  std::string dtype;   // float32 (others arrive with the NPU bundles)

  std::int64_t elementCount() const;
};

struct StageSpec {
  std::string name;
  std::string runtime;  // "onnx": a CPU backend runs it
  std::string file;     // one of the manifest's files
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

enum class ChannelOrder { kBgr, kRgb };

struct InputSpec {
  int width = 0;
  int height = 0;
  ChannelOrder channelOrder = ChannelOrder::kBgr;
  float valueMin = 0;
  float valueMax = 255;
  int padValue = 114;  // letterbox: top-left anchor, the only rule YOLOX uses
};

struct PostprocessSpec {
  std::string type;  // "yolox"
  std::vector<int> strides;
  bool scoresActivated = true;
  float defaultMinScore = 0.3F;
  float defaultNmsIou = 0.45F;
  std::vector<std::string> defaultClasses;
  std::vector<std::string> classNames;

  // Index of a class name, or -1.
  int classIndex(std::string_view name) const;
};

struct ModelManifest {
  std::filesystem::path manifestPath;  // the model.yaml it was read from
  int schema = 1;
  std::string name;
  std::string description;
  std::string license;
  std::vector<ModelFile> files;
  InputSpec input;
  std::vector<StageSpec> stages;
  PostprocessSpec postprocess;

  std::filesystem::path directory() const { return manifestPath.parent_path(); }
  const ModelFile* findFile(std::string_view fileName) const;
};

// Reads and checks a manifest. `path` is a model.yaml or a directory holding one. Errors say
// file:line:col, the key path and the reason.
Expected<ModelManifest> loadModelManifest(const std::filesystem::path& path);

struct FileCheck {
  std::filesystem::path path;
  std::string sha256;
  std::uint64_t size = 0;
  const AcceptedVariant* variant = nullptr;  // null: not listed (only with allowUnverified)
};

// Hashes a model file and checks it against the manifest's accepted variants. A file that is
// not listed is an kUnverifiedModel error unless allowUnverified, in which case the check
// succeeds with variant == nullptr and the caller must say so loudly.
Expected<FileCheck> verifyModelFile(const ModelManifest& manifest, const ModelFile& file,
                                    bool allowUnverified);

// sha256 of a file's content, lower-case hex.
Expected<std::string> sha256File(const std::filesystem::path& path);

}  // namespace vigil
