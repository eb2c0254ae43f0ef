// `vigil run` as systemd runs it: readiness, reload and stop notifications and watchdog pings
// over a real $NOTIFY_SOCKET datagram socket, and journald priority prefixes on stderr.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <fstream>

#include "tests/model_paths.h"
#include "tests/process.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;

class NotifySocket {
 public:
  explicit NotifySocket(const std::filesystem::path& path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    timeval timeout{0, 200000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~NotifySocket() { close(fd_); }
  bool bound() const { return bound_; }

  // Collects messages until one starts with `prefix` or the limit passes.
  bool waitFor(const std::string& prefix, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      char buffer[4096];
      ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) continue;
      messages.emplace_back(buffer, static_cast<std::size_t>(n));
      if (messages.back().rfind(prefix, 0) == 0) return true;
    }
    return false;
  }

  std::vector<std::string> messages;

 private:
  int fd_ = -1;
  bool bound_ = false;
};

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

  ASSERT_TRUE(notify.waitFor("READY=1", 60s)) << vigil.log();
  EXPECT_EQ(notify.messages.back(), "READY=1\nSTATUS=1 camera(s), backend cpu");
  EXPECT_TRUE(notify.waitFor("WATCHDOG=1", 5s)) << "pings at half of WatchdogSec";

  vigil.signal(SIGHUP);
  EXPECT_TRUE(notify.waitFor("RELOADING=1", 10s));
  EXPECT_TRUE(notify.waitFor("READY=1", 10s)) << "the reload ends with READY=1 again";

  vigil.signal(SIGTERM);
  EXPECT_TRUE(notify.waitFor("STOPPING=1", 10s));
  auto status = vigil.wait(10s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0);

  // Journal lines: "<6>[daemon] ..." without our own timestamp; warnings <4>, errors <3>.
  const std::string text = vigil.log();
  EXPECT_EQ(text.rfind("<6>[", 0), 0U) << text.substr(0, 200);
  EXPECT_EQ(text.find("\n20"), std::string::npos) << "no timestamps: the journal has them";
}

}  // namespace
}  // namespace vigil
