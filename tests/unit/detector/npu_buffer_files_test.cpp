// The files an NPU stage's buffers start from, read from a bundle directory without a device:
// the instruction stream and its word count, the weights of each weights argument, and the
// errors that name a missing or wrong-sized file.
#include "detector/npu/npu_buffer_files.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

void writeBytes(const std::filesystem::path& path, std::size_t count, char value) {
  std::ofstream(path, std::ios::binary) << std::string(count, value);
}

// A stage with the instructions insts.bin and weights arguments 5 (8 bytes) and 7 (4 bytes).
class NpuBufferFilesTest : public ::testing::Test {
 protected:
  NpuBufferFilesTest() {
    spec_.instructions = "insts.bin";
    spec_.arguments = {{1, NpuArgRole::kInstructions, 0, 256, "", ""},
                       {5, NpuArgRole::kWeights, 0, 8, "", "conv.bin"},
                       {6, NpuArgRole::kOutput, 0, 64, "out", ""},
                       {7, NpuArgRole::kWeights, 0, 4, "", "bias.bin"}};
    writeBytes(dir_.path() / "insts.bin", 256, '\x01');
    writeBytes(dir_.path() / "conv.bin", 8, '\x02');
    writeBytes(dir_.path() / "bias.bin", 4, '\x03');
  }

  TempDir dir_;
  NpuStageSpec spec_;
};

TEST_F(NpuBufferFilesTest, ReadsTheInstructionsInWordsAndEachWeightsArgumentsFile) {
  NpuBufferFiles files;
  ASSERT_TRUE(files.read(spec_, dir_.path(), true));
  EXPECT_EQ(files.instructions(), std::vector<char>(256, '\x01'));
  EXPECT_EQ(files.instructionWords(), 64U);
  EXPECT_EQ(files.weights(5), std::vector<char>(8, '\x02'));
  EXPECT_EQ(files.weights(7), std::vector<char>(4, '\x03'));
  EXPECT_THROW(files.weights(6), std::out_of_range);
}

TEST_F(NpuBufferFilesTest, WithoutInstructionsTheKernelGetsNoWords) {
  NpuBufferFiles files;
  ASSERT_TRUE(files.read(spec_, dir_.path(), true));
  std::filesystem::remove(dir_.path() / "insts.bin");  // an ELF flow's bundle has no stream
  ASSERT_TRUE(files.read(spec_, dir_.path(), false));
  EXPECT_TRUE(files.instructions().empty());
  EXPECT_EQ(files.instructionWords(), 0U);
  EXPECT_EQ(files.weights(7), std::vector<char>(4, '\x03'));
}

TEST_F(NpuBufferFilesTest, AStreamThatIsNoWholeNumberOfWordsIsRefusedNamingIt) {
  writeBytes(dir_.path() / "insts.bin", 258, '\x01');
  auto read = NpuBufferFiles().read(spec_, dir_.path(), true);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, ErrorCode::kInvalidData);
  EXPECT_NE(read.error().message.find("insts.bin: 258 bytes is no instruction stream"),
            std::string::npos)
      << read.error().message;
  EXPECT_FALSE(instructionWordCount("insts.bin", 0));
  EXPECT_EQ(instructionWordCount("insts.bin", 4), 1U);
}

TEST_F(NpuBufferFilesTest, WeightsOfAnotherSizeThanListedAreRefused) {
  writeBytes(dir_.path() / "conv.bin", 9, '\x02');
  auto read = NpuBufferFiles().read(spec_, dir_.path(), true);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, ErrorCode::kInvalidData);
  EXPECT_NE(read.error().message.find("conv.bin: 9 bytes, the manifest lists 8"), std::string::npos)
      << read.error().message;
}

TEST_F(NpuBufferFilesTest, AMissingFileIsNotFound) {
  std::filesystem::remove(dir_.path() / "bias.bin");
  auto read = NpuBufferFiles().read(spec_, dir_.path(), true);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, ErrorCode::kNotFound);
  EXPECT_NE(read.error().message.find("bias.bin: cannot open"), std::string::npos);
}

}  // namespace
}  // namespace vigil
