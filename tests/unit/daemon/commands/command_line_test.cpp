// The `vigil` command line (runCommandLine), on its own, in this process: --version and --help
// exit 0, a usage mistake or an unknown command 2 (saying what the commands are), the command
// named is the one run, and a reader that goes away cannot kill the process with SIGPIPE.
#include "daemon/commands/command_line.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

#include "daemon/base/log.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

// runCommandLine on `args` (after "vigil"), with what it wrote to standard output and error.
struct CommandRun {
  int status = -1;
  std::string out;
  std::string err;
};

CommandRun vigilWith(std::vector<std::string> args) {
  args.insert(args.begin(), "vigil");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  CommandRun run;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  run.status = runCommandLine(static_cast<int>(args.size()), argv.data());
  std::fflush(stdout);
  run.out = ::testing::internal::GetCapturedStdout();
  run.err = ::testing::internal::GetCapturedStderr();
  return run;
}

// Restores SIGPIPE's disposition, which runCommandLine changes for the whole process.
class CommandLineTest : public ::testing::Test {
 protected:
  void SetUp() override { before_ = std::signal(SIGPIPE, SIG_DFL); }
  void TearDown() override { std::signal(SIGPIPE, before_); }

 private:
  void (*before_)(int) = SIG_DFL;
};

TEST_F(CommandLineTest, VersionAndHelpExit0) {
  const CommandRun version = vigilWith({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out, "vigil " VIGIL_VERSION "\n");
  const CommandRun help = vigilWith({"--help"});
  EXPECT_EQ(help.status, 0);
  for (const char* command : {"run", "check-config", "detect", "eval", "doctor", "npu", "passwd"}) {
    EXPECT_NE(help.out.find(command), std::string::npos) << command << "\n" << help.out;
  }
}

TEST_F(CommandLineTest, AnUnknownCommandIs2AndTheCommandsAreNamed) {
  const CommandRun run = vigilWith({"-v", "frobnicate", "--now"});
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("vigil: unknown command 'frobnicate'; the commands are run, "
                         "check-config, cameras, detect, eval, bench, doctor, stage-run, npu, "),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find(" (vigil --help says what each does)\n"), std::string::npos) << run.err;
}

TEST_F(CommandLineTest, UsageMistakesAre2) {
  EXPECT_EQ(vigilWith({}).status, 2) << "a command is required";
  EXPECT_EQ(vigilWith({"check-config"}).status, 2) << "its file is required";
  EXPECT_EQ(vigilWith({"check-config", "a.yaml", "--no-such-option"}).status, 2);
}

TEST_F(CommandLineTest, TheCommandNamedIsTheOneThatRuns) {
  TempDir dir;
  const std::string missing = (dir.path() / "cameras.yaml").string();
  const CommandRun run = vigilWith({"check-config", missing});
  EXPECT_EQ(run.status, 1) << "check-config's own answer: the file cannot be read";
  EXPECT_NE(run.err.find(missing), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

// --log-level sets the level from the daemon's first line on (here: the error of a file that is
// not there), over the file's log.level; a level it does not know is a usage mistake.
TEST_F(CommandLineTest, RunsLogLevelIsSetBeforeTheFileIsRead) {
  TempDir dir;
  const std::string missing = (dir.path() / "cameras.yaml").string();
  const CommandRun debug = vigilWith({"run", "--log-level", "debug", "--config", missing});
  EXPECT_EQ(debug.status, 1) << debug.err;
  EXPECT_EQ(logger("daemon")->level(), spdlog::level::debug);
  const CommandRun error = vigilWith({"run", "--config", missing, "--log-level", "error"});
  EXPECT_EQ(error.status, 1) << error.err;
  EXPECT_EQ(logger("daemon")->level(), spdlog::level::err);
  EXPECT_EQ(logger("events")->level(), spdlog::level::err) << "every logger";
  setLogLevel(spdlog::level::info);

  const CommandRun loud = vigilWith({"run", "--log-level", "loud", "--config", missing});
  EXPECT_EQ(loud.status, 2);
  EXPECT_NE(loud.err.find("--log-level: loud not in {trace,debug,info,warn,error}"),
            std::string::npos)
      << loud.err;
  EXPECT_EQ(logger("daemon")->level(), spdlog::level::info);
}

TEST_F(CommandLineTest, VerboseIsRunsLogLevelDebugUnlessItIsGiven) {
  TempDir dir;
  const std::string missing = (dir.path() / "cameras.yaml").string();
  EXPECT_EQ(vigilWith({"-v", "run", "--config", missing}).status, 1);
  EXPECT_EQ(logger("daemon")->level(), spdlog::level::debug);
  EXPECT_EQ(vigilWith({"run", "-v", "--log-level", "warn", "--config", missing}).status, 1);
  EXPECT_EQ(logger("daemon")->level(), spdlog::level::warn);
  setLogLevel(spdlog::level::info);
}

TEST_F(CommandLineTest, AReaderThatGoesAwayDoesNotKillTheProcess) {
  vigilWith({"--version"});
  EXPECT_EQ(std::signal(SIGPIPE, SIG_DFL), SIG_IGN);
}

}  // namespace
}  // namespace vigil
