#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/free_port.h"
#include "tests/process.h"
#include "tests/temp_dir.h"
#include "tests/test_pki.h"

namespace vigil::testing {

inline constexpr const char* kMosquittoPath = "/usr/sbin/mosquitto";
inline constexpr const char* kMosquittoPasswdPath = "/usr/bin/mosquitto_passwd";

// Skips the current test, with the reason, when the broker (or a tool it needs) is absent.
#define VIGIL_REQUIRE_MOSQUITTO()                                                 \
  do {                                                                            \
    if (auto missing = ::vigil::testing::MosquittoBroker::missingTool()) {        \
      GTEST_SKIP() << *missing << " is not installed (apt-get install mosquitto " \
                   << "mosquitto-clients openssl)";                               \
    }                                                                             \
  } while (false)

// A real mosquitto broker on a free loopback port, configured in a TempDir and run as a
// child process. Tests call VIGIL_REQUIRE_MOSQUITTO() first, then ASSERT_TRUE(start()).
class MosquittoBroker {
 public:
  struct Options {
    std::string username{};  // non-empty: a password_file with this user, no anonymous access
    std::string password{};
    bool tls = false;                // the one listener speaks TLS (certificates generated here)
    bool requireClientCert = false;  // with tls: clients must present a certificate of our CA
    bool persistence = false;        // true: sessions and retained messages survive restart()
  };

  MosquittoBroker() : MosquittoBroker(Options{}) {}
  explicit MosquittoBroker(Options options)
      : options_(std::move(options)), pki_(dir_.path() / "pki") {}
  ~MosquittoBroker() { kill(); }
  MosquittoBroker(const MosquittoBroker&) = delete;
  MosquittoBroker& operator=(const MosquittoBroker&) = delete;

  // The first absent tool, if any.
  static std::optional<std::string> missingTool() {
    for (const char* tool : {kMosquittoPath, kMosquittoPasswdPath, kOpensslPath}) {
      if (access(tool, X_OK) != 0) return std::string(tool);
    }
    return std::nullopt;
  }

  // Writes the configuration (and certificates, password file) and starts the broker. The port
  // is free when picked but may be taken before mosquitto binds it (another test starts beside
  // this one): then mosquitto exits, and the next port is tried.
  ::testing::AssertionResult start() {
    if (port_ != 0) return launch();
    ::testing::AssertionResult result = ::testing::AssertionFailure() << "not started";
    for (int attempt = 1; attempt <= 3; ++attempt) {
      port_ = freeLoopbackPort();
      if (port_ == 0) return ::testing::AssertionFailure() << "no free loopback port";
      if (auto r = writeConfig(); !r) return r;
      result = launch();
      if (result || process_->wait(std::chrono::milliseconds(0)) == std::nullopt) return result;
    }
    return result;
  }

  // SIGTERM and wait (the broker saves its persistence file, if any, on the way out).
  void stop() { end(SIGTERM); }
  // SIGKILL: the broker vanishes without closing anything cleanly.
  void kill() { end(SIGKILL); }
  // Stops (if running) and starts again on the same port with the same configuration.
  ::testing::AssertionResult restart() {
    stop();
    return launch();
  }

  int port() const { return port_; }
  std::string url() const {
    return std::string(options_.tls ? "mqtts://" : "mqtt://") +
           "127.0.0.1:" + std::to_string(port_);
  }
  const TestPki& pki() const { return pki_; }
  const std::filesystem::path& dir() const { return dir_.path(); }
  std::string log() const { return process_ ? process_->log() : std::string(); }

 private:
  static bool accepts(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    return ok;
  }

  ::testing::AssertionResult writeConfig() {
    const auto& dir = dir_.path();
    std::ofstream conf(dir / "mosquitto.conf");
    // Started as root, mosquitto would switch to user "mosquitto", who cannot read our files.
    if (const passwd* pw = getpwuid(geteuid())) conf << "user " << pw->pw_name << "\n";
    conf << "log_dest stdout\nlog_type all\nconnection_messages true\n";
    if (options_.persistence) {
      conf << "persistence true\npersistence_location " << dir.string() << "/\n";
    } else {
      conf << "persistence false\n";
    }
    if (!options_.username.empty()) {
      if (auto r = runTool({kMosquittoPasswdPath, "-b", "-c", (dir / "passwd").string(),
                            options_.username, options_.password},
                           dir / "mosquitto_passwd.log");
          !r) {
        return r;
      }
      conf << "allow_anonymous false\npassword_file " << (dir / "passwd").string() << "\n";
    } else {
      conf << "allow_anonymous true\n";
    }
    conf << "listener " << port_ << " 127.0.0.1\n";
    if (options_.tls) {
      if (!pkiMade_) {
        if (auto r = pki_.generate(); !r) return r;
        pkiMade_ = true;
      }
      conf << "cafile " << pki_.caFile() << "\ncertfile " << pki_.serverCert() << "\nkeyfile "
           << pki_.serverKey() << "\n";
      if (options_.requireClientCert) conf << "require_certificate true\n";
    }
    return ::testing::AssertionSuccess();
  }

  ::testing::AssertionResult launch() {
    ++launches_;
    process_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{kMosquittoPath, "-c", (dir_.path() / "mosquitto.conf").string()},
        dir_.path() / ("mosquitto-" + std::to_string(launches_) + ".log"));
    if (!process_->started()) return ::testing::AssertionFailure() << "cannot start mosquitto";
    std::optional<int> exited;
    const bool listening = waitUntil([&] {
      exited = process_->wait(std::chrono::milliseconds(0));
      return exited || accepts(port_);
    });
    if (exited) {
      return ::testing::AssertionFailure()
             << "mosquitto exited with " << *exited << ": " << process_->log();
    }
    if (!listening) {
      return ::testing::AssertionFailure()
             << "mosquitto does not accept on port " << port_ << ": " << process_->log();
    }
    return ::testing::AssertionSuccess();
  }

  void end(int sig) {
    if (!process_) return;
    process_->signal(sig);
    if (!process_->wait()) {
      process_->signal(SIGKILL);
      process_->wait();
    }
    process_.reset();
  }

  Options options_;
  TempDir dir_;
  TestPki pki_;
  int port_ = 0;
  int launches_ = 0;
  bool pkiMade_ = false;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace vigil::testing
