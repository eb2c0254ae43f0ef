#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string_view>
#include <vector>

#include "detector/model_manifest.h"
#include "foundation/error.h"

namespace vigil {

// The bundle files an NPU stage's buffers start from (initialContentOf, npu_runtime.h): the
// instruction stream of the xclbin+insts flow and each weights argument's file. Read at load,
// so that a missing or wrong-sized file fails the load and not the buffers' allocation, and
// copied into the buffers at allocate. No XRT in here.
class NpuBufferFiles {
 public:
  // Reads the weights file of each `spec` argument with role weights, of the size the manifest
  // lists, and with `withInstructions` the instructions file, all from `directory`. Errors name
  // the file (kNotFound: cannot open; kInvalidData: a wrong size).
  Expected<void> read(const NpuStageSpec& spec, const std::filesystem::path& directory,
                      bool withInstructions);

  // The instruction stream and its length in 32-bit words; empty and 0 without instructions.
  const std::vector<char>& instructions() const { return instructions_; }
  std::uint32_t instructionWords() const { return instructionWords_; }
  // The weights of argument `argIndex`; std::out_of_range for one that has none.
  const std::vector<char>& weights(int argIndex) const { return weights_.at(argIndex); }

 private:
  Expected<void> readInstructions(const std::filesystem::path& path);
  Expected<void> readWeights(const NpuStageSpec& spec, const std::filesystem::path& directory);

  std::vector<char> instructions_;
  std::uint32_t instructionWords_ = 0;
  std::map<int, std::vector<char>> weights_;  // by argument index
};

// The instruction count the kernel gets for an instruction stream (insts.bin, little-endian
// 32-bit words) of `bytes`: bytes / 4. Zero or a size that is not a multiple of 4 is an error
// naming `file` and the size.
Expected<std::uint32_t> instructionWordCount(std::string_view file, std::uint64_t bytes);

}  // namespace vigil
