// Where the Vitis AI EP's operator report is looked for, without ONNX Runtime: the compiled
// model's cache directory, then the cache root, then the copy `vigil npu compile` kept; and that
// a report an earlier session left is gone before the next session is made.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "detector/npu/vitisai_report.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

constexpr const char* kKey = "yolox-nano-npu-xint8-0123456789abcdef";

std::string reportWith(int npuNodes) {
  return R"({"deviceStat": [{"name": "all", "nodeNum": )" + std::to_string(npuNodes + 2) +
         R"(}, {"name": "CPU", "nodeNum": 2}, {"name": "NPU", "nodeNum": )" +
         std::to_string(npuNodes) + "}]}";
}

class VitisAiReportFilesTest : public ::testing::Test {
 protected:
  void write(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  TempDir cache_;
  VitisAiReportFiles files_{cache_.path(), kKey};
  std::filesystem::path inKeyDir_ = cache_.path() / kKey / "vitisai_ep_report.json";
  std::filesystem::path inRoot_ = cache_.path() / "vitisai_ep_report.json";
};

TEST_F(VitisAiReportFilesTest, TheKeysDirectoryComesFirstThenTheCacheRoot) {
  write(inRoot_, reportWith(300));
  auto report = files_.read({});
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->file, inRoot_);
  EXPECT_EQ(report->counts.npu, 300);

  write(inKeyDir_, reportWith(400));
  report = files_.read({});
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->file, inKeyDir_);
  EXPECT_EQ(report->counts.npu, 400);
  EXPECT_EQ(report->counts.cpu, 2);
  EXPECT_EQ(report->counts.all, 402);
}

TEST_F(VitisAiReportFilesTest, NoReportMeansThePlacementCannotBeVerified) {
  auto report = files_.read(cache_.path() / "absent.json");
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code, ErrorCode::kNotOnNpu);
  EXPECT_NE(report.error().message.find("wrote no operator report (vitisai_ep_report.json under " +
                                        cache_.path().string() + ")"),
            std::string::npos)
      << report.error().message;
}

TEST_F(VitisAiReportFilesTest, TheCompilesReportIsKeptBesideTheEpContextModelAndReadFromThere) {
  EXPECT_EQ(files_.contextCopy(),
            cache_.path() / (std::string(kKey) + ".ctx.vitisai_ep_report.json"));
  write(inKeyDir_, reportWith(400));
  files_.keepForContext();
  ASSERT_TRUE(std::filesystem::exists(files_.contextCopy()));

  // A later process loads the EP-context model: the EP writes no report, the copy is read.
  files_.prepareForSession();
  auto report = files_.read(files_.contextCopy());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->file, files_.contextCopy());
  EXPECT_EQ(report->counts.npu, 400);
}

TEST_F(VitisAiReportFilesTest, ASessionStartsWithNoEarlierReportAndTellsTheEpTheName) {
  write(inKeyDir_, reportWith(400));
  write(inRoot_, reportWith(300));
  ::unsetenv("XLNX_ONNX_EP_REPORT_FILE");
  files_.prepareForSession();
  EXPECT_FALSE(std::filesystem::exists(inKeyDir_));
  EXPECT_FALSE(std::filesystem::exists(inRoot_));
  const char* name = std::getenv("XLNX_ONNX_EP_REPORT_FILE");
  ASSERT_NE(name, nullptr);
  EXPECT_STREQ(name, "vitisai_ep_report.json");
  ::unsetenv("XLNX_ONNX_EP_REPORT_FILE");
}

TEST_F(VitisAiReportFilesTest, AFileThatIsNoReportIsInvalidDataNamingIt) {
  write(inKeyDir_, "not json");
  auto report = files_.read({});
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code, ErrorCode::kInvalidData);
  EXPECT_NE(report.error().message.find(inKeyDir_.string()), std::string::npos)
      << report.error().message;
}

}  // namespace
}  // namespace vigil
