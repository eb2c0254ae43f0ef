#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/process.h"

namespace vigil::testing {

inline constexpr const char* kOpensslPath = "/usr/bin/openssl";

// Runs `argv` (absolute program path first) to completion; the output goes to `logFile`.
inline ::testing::AssertionResult runTool(const std::vector<std::string>& argv,
                                          const std::filesystem::path& logFile) {
  ChildProcess child(argv, logFile);
  if (!child.started()) return ::testing::AssertionFailure() << "cannot start " << argv[0];
  auto status = child.wait();
  if (status != 0) {
    return ::testing::AssertionFailure()
           << argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << " failed ("
           << (status ? std::to_string(*status) : "timeout") << "): " << child.log();
  }
  return ::testing::AssertionSuccess();
}

// A throwaway PKI made with the openssl tool: a CA, and certificates it signed for the
// broker (subjectAltName localhost and 127.0.0.1) and for a client. EC keys: fast to make.
class TestPki {
 public:
  explicit TestPki(std::filesystem::path dir, std::string name = "vigil-test")
      : dir_(std::move(dir)), name_(std::move(name)) {}

  ::testing::AssertionResult generate() {
    std::filesystem::create_directories(dir_);
    const auto log = dir_ / "openssl.log";
    {
      std::ofstream ext(dir_ / "server.ext");
      ext << "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
             "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n";
      std::ofstream clientExt(dir_ / "client.ext");
      clientExt << "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n"
                   "extendedKeyUsage=clientAuth\n";
    }
    const std::vector<std::string> ecKey = {"-newkey", "ec", "-pkeyopt",
                                            "ec_paramgen_curve:prime256v1", "-nodes"};
    auto req = [&](std::vector<std::string> args) {
      std::vector<std::string> argv = {kOpensslPath, "req"};
      argv.insert(argv.end(), ecKey.begin(), ecKey.end());
      argv.insert(argv.end(), args.begin(), args.end());
      return argv;
    };
    if (auto r = runTool(req({"-x509", "-days", "2", "-subj", "/CN=" + name_ + " CA", "-keyout",
                              path("ca.key"), "-out", caFile()}),
                         log);
        !r) {
      return r;
    }
    for (const std::string who : {"server", "client"}) {
      if (auto r = runTool(req({"-subj", "/CN=" + (who == "server" ? "localhost" : name_),
                                "-keyout", path(who + ".key"), "-out", path(who + ".csr")}),
                           log);
          !r) {
        return r;
      }
      if (auto r = runTool({kOpensslPath, "x509", "-req", "-days", "2", "-in", path(who + ".csr"),
                            "-CA", caFile(), "-CAkey", path("ca.key"), "-CAcreateserial", "-out",
                            path(who + ".crt"), "-extfile", path(who + ".ext")},
                           log);
          !r) {
        return r;
      }
    }
    return ::testing::AssertionSuccess();
  }

  std::string caFile() const { return path("ca.crt"); }
  std::string serverCert() const { return path("server.crt"); }
  std::string serverKey() const { return path("server.key"); }
  std::string clientCert() const { return path("client.crt"); }
  std::string clientKey() const { return path("client.key"); }

 private:
  std::string path(const std::string& file) const { return (dir_ / file).string(); }

  std::filesystem::path dir_;
  std::string name_;
};

}  // namespace vigil::testing
