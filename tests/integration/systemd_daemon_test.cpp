// `vigil run` as systemd runs it: readiness, reload and stop notifications and watchdog pings
// over a real $NOTIFY_SOCKET datagram socket, and journald priority prefixes on stderr.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "tests/model_paths.h"
#include "tests/notify_socket.h"
#include "tests/process.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::NotifySocket;

TEST(SystemdDaemonTest, ReadyReloadWatchdogStopAndJournalPriorities) {
  VIGIL_REQUIRE_MODEL();
  const auto clip = testing::videosDir() / "TUD-Campus.mp4";
  if (!std::filesystem::exists(clip)) GTEST_SKIP() << "clip absent: " << clip;
  TempDir dir;
  std::ofstream(dir.path() / "cameras.yaml")
      << "version: 1\ndetector:\n  model: " << testing::modelDir().string()
      << "\nhttp: {enabled: false}\ncameras:\n"
      << "  - {name: campus, source: 'file:" << clip.string() << "', loop: true, detect_fps: 2}\n";
  NotifySocket notify(dir.path() / "notify");
  ASSERT_TRUE(notify.bound());

  // What systemd sets for a Type=notify service with WatchdogSec=2 whose stderr is the journal.
  const auto log = dir.path() / "vigil.log";
  std::ofstream(log).close();
  struct stat st {};
  ASSERT_EQ(stat(log.c_str(), &st), 0);
  setenv("NOTIFY_SOCKET", (dir.path() / "notify").c_str(), 1);
  setenv("WATCHDOG_USEC", "2000000", 1);
  setenv("JOURNAL_STREAM", (std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino)).c_str(),
         1);
  ChildProcess vigil({VIGIL_BINARY, "run", "--config", (dir.path() / "cameras.yaml").string()},
                     log);
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
  unsetenv("JOURNAL_STREAM");
  ASSERT_TRUE(vigil.started());

  ASSERT_TRUE(notify.waitFor("READY=1", testing::kDeadline)) << vigil.log();
  EXPECT_EQ(notify.messages.back(),
            "READY=1\nSTATUS=1 camera(s), backend " + testing::autoCpuBackend());
  EXPECT_TRUE(notify.waitFor("WATCHDOG=1", testing::kDeadline)) << "pings at half of WatchdogSec";

  vigil.signal(SIGHUP);
  EXPECT_TRUE(notify.waitFor("RELOADING=1", testing::kDeadline));
  EXPECT_TRUE(notify.waitFor("READY=1", testing::kDeadline))
      << "the reload ends with READY=1 again";

  vigil.signal(SIGTERM);
  EXPECT_TRUE(notify.waitFor("STOPPING=1", testing::kDeadline));
  auto status = vigil.wait();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0);

  // Journal lines: "<6>[daemon] ..." without our own timestamp; warnings <4>, errors <3>.
  const std::string text = vigil.log();
  EXPECT_EQ(text.rfind("<6>[", 0), 0U) << text.substr(0, 200);
  EXPECT_EQ(text.find("\n20"), std::string::npos) << "no timestamps: the journal has them";
}

}  // namespace
}  // namespace vigil
