// `vigil doctor` on a box without an NPU: the configuration's checks first, then one line for
// the NPU; --verbose says what an NPU would need.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "daemon/commands/npu_commands.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

std::string doctorSays(const std::filesystem::path& dir, bool verbose) {
  DoctorCommandOptions options;
  options.config = (dir / "cameras.yaml").string();
  options.root = dir / "root";  // no /dev/accel, no amdxdna: a box without an NPU
  options.verbose = verbose;
  std::ostringstream out;
  runDoctorCommand(options, out);
  return out.str();
}

TEST(DoctorTest, WithoutAnNpuTheConfigurationComesFirstAndTheNpuIsOneLine) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "root");
  std::ofstream(dir.path() / "cameras.yaml")
      << "version: 1\nnode: hall\nhttp: {enabled: false}\ncameras:\n"
         "  - name: door\n    source: /dev/video0\n";
  const std::string quiet = doctorSays(dir.path(), false);
  const auto config = quiet.find("config ");
  const auto verdict = quiet.find("verdict          no NPU on this machine: Vigil runs on the CPU");
  ASSERT_NE(config, std::string::npos) << quiet;
  ASSERT_NE(verdict, std::string::npos) << quiet;
  EXPECT_LT(config, verdict) << "the configuration's checks come first\n" << quiet;
  EXPECT_NE(quiet.find("--verbose says what an NPU would need"), std::string::npos) << quiet;
  for (const char* npuDetail : {"for an NPU", "driver ", "vitisai", "memlock"}) {
    EXPECT_EQ(quiet.find(npuDetail), std::string::npos) << npuDetail << "\n" << quiet;
  }

  const std::string verbose = doctorSays(dir.path(), true);
  EXPECT_NE(verbose.find("for an NPU"), std::string::npos) << verbose;
  EXPECT_NE(verbose.find("driver "), std::string::npos) << verbose;
  EXPECT_LT(verbose.find("config "), verbose.find("driver ")) << verbose;
}

}  // namespace
}  // namespace vigil
