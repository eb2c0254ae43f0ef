#include "detector/npu/npu_buffer_files.h"

#include <fstream>
#include <iterator>
#include <limits>

namespace vigil {

namespace {

Expected<std::vector<char>> readBundleFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(ErrorCode::kNotFound, "{}: cannot open", path.string());
  return std::vector<char>{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

Expected<std::uint32_t> instructionWordCount(std::string_view file, std::uint64_t bytes) {
  if (bytes == 0 || bytes % 4 != 0 || bytes / 4 > std::numeric_limits<std::uint32_t>::max()) {
    return makeError(ErrorCode::kInvalidData,
                     "{}: {} bytes is no instruction stream (a non-zero number of 32-bit words, "
                     "so a multiple of 4 bytes)",
                     file, bytes);
  }
  return static_cast<std::uint32_t>(bytes / 4);
}

Expected<void> NpuBufferFiles::read(const NpuStageSpec& spec,
                                    const std::filesystem::path& directory, bool withInstructions) {
  instructions_.clear();
  instructionWords_ = 0;
  if (auto ok = readWeights(spec, directory); !ok) return ok;
  if (!withInstructions) return {};
  return readInstructions(directory / spec.instructions);
}

Expected<void> NpuBufferFiles::readInstructions(const std::filesystem::path& path) {
  auto bytes = readBundleFile(path);
  if (!bytes) return tl::unexpected(bytes.error());
  auto words = instructionWordCount(path.string(), bytes->size());
  if (!words) return tl::unexpected(words.error());
  instructions_ = std::move(*bytes);
  instructionWords_ = *words;
  return {};
}

Expected<void> NpuBufferFiles::readWeights(const NpuStageSpec& spec,
                                           const std::filesystem::path& directory) {
  weights_.clear();
  for (const NpuArgument& a : spec.arguments) {
    if (a.role != NpuArgRole::kWeights) continue;
    auto bytes = readBundleFile(directory / a.file);
    if (!bytes) return tl::unexpected(bytes.error());
    if (bytes->size() != a.bytes) {
      return makeError(ErrorCode::kInvalidData, "{}: {} bytes, the manifest lists {}",
                       (directory / a.file).string(), bytes->size(), a.bytes);
    }
    weights_[a.index] = std::move(*bytes);
  }
  return {};
}

}  // namespace vigil
