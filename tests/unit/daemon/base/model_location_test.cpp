// Where an executable looks for the model when nothing names one (builtInModelDir), on its own.
#include "daemon/base/model_location.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace vigil {
namespace {

// The answer is process-wide: each test gives back what it found.
class ModelLocationTest : public ::testing::Test {
 protected:
  void TearDown() override { setBuiltInModelDir(before_); }

 private:
  std::filesystem::path before_ = builtInModelDir();
};

TEST_F(ModelLocationTest, TheDirectorySetIsTheAnswerUntilSetAgain) {
  setBuiltInModelDir("/var/lib/vigil/models/yolox-nano");
  EXPECT_EQ(builtInModelDir(), "/var/lib/vigil/models/yolox-nano");
  EXPECT_EQ(builtInModelDir(), "/var/lib/vigil/models/yolox-nano") << "asked twice, the same";
  setBuiltInModelDir("/src/vigil/models/yolox-nano");
  EXPECT_EQ(builtInModelDir(), "/src/vigil/models/yolox-nano");
}

}  // namespace
}  // namespace vigil
