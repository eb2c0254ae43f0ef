#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "tests/process.h"

namespace vigil::testing {

inline constexpr const char* kChromium = "/usr/bin/chromium";

// Headless Chromium as root on a machine without network: the flags keep it from phoning home
// and from needing a sandbox or a GPU. `profile` names its user data directory under `dir`.
inline std::vector<std::string> chromium(const std::filesystem::path& dir,
                                         const std::string& profile, int width = 1280) {
  return {kChromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
          "--no-first-run", "--disable-background-networking", "--disable-component-update",
          "--disable-sync", "--user-data-dir=" + (dir / profile).string(),
          "--window-size=" + std::to_string(width) + ",720",
          // Runs the page's timers (its first /api/status poll) before dumping or shooting.
          "--virtual-time-budget=5000"};
}

// The page at `url` as Chromium rendered it at `width` pixels, after 5 s of its scripts (the
// DOM); `extra` flags go before the URL. Empty when Chromium did not finish.
inline std::string renderedPage(const std::filesystem::path& dir, const std::string& url, int width,
                                const std::vector<std::string>& extra = {}) {
  const std::string name = "dom-" + std::to_string(width);
  auto args = chromium(dir, "profile-" + name, width);
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--dump-dom", url});
  ChildProcess dump(args, dir / (name + ".html"));
  if (!dump.wait().has_value()) return "";
  std::ifstream in(dir / (name + ".html"));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Keeps a copy of a test's screenshot beside the test binary (build/tests/<its name>), for a
// person or CI to look at. Beside the binary whatever the working directory, so a test run from
// the checkout's root leaves nothing in it.
inline void keepScreenshot(const std::filesystem::path& png) {
  std::error_code ec;
  const std::filesystem::path binary = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return;
  std::filesystem::copy_file(png, binary.parent_path() / png.filename(),
                             std::filesystem::copy_options::overwrite_existing, ec);
}

}  // namespace vigil::testing
