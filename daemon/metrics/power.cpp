#include "daemon/metrics/power.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <system_error>
#include <vector>

#include "daemon/base/log.h"
#include "daemon/base/metrics.h"
#include "detector/npu/npu_busy_time.h"

namespace vigil {

namespace {

namespace fs = std::filesystem;

// Divided rather than multiplied by 1e-6: the quotient is correctly rounded, so 12345678 uW
// reads as exactly 12.345678 W.
constexpr double kPerMicro = 1e6;
constexpr double kPerNano = 1e9;

struct FileText {
  std::optional<std::string> text;
  int error = 0;  // errno when text is empty
};

// sysfs and procfs files are small and must be read in one go (a sysfs attribute is generated
// at open); plain read(2) also gives the errno that the discovery line reports.
FileText readSmallFile(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {std::nullopt, errno};
  std::string text;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      ::close(fd);
      return {std::nullopt, error};
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > (1U << 20)) break;  // no telemetry file is this big; do not read /dev/zero
  }
  ::close(fd);
  return {std::move(text), 0};
}

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// The whole (trimmed) text must be one unsigned decimal number.
std::optional<std::uint64_t> parseWholeUnsigned(std::string_view text) {
  text = trim(text);
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || text.empty() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> readUnsigned(const fs::path& path) {
  FileText file = readSmallFile(path);
  if (!file.text) return std::nullopt;
  return parseWholeUnsigned(*file.text);
}

std::string describeError(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// hwmon0, hwmon1, ..., hwmon10: numeric order, so "first" is stable and matches the kernel's.
std::vector<fs::path> hwmonDirs(const fs::path& root) {
  std::vector<std::pair<std::uint64_t, fs::path>> found;
  std::error_code ec;
  for (fs::directory_iterator it(root / "sys/class/hwmon", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.starts_with("hwmon")) continue;
    auto index = parseWholeUnsigned(std::string_view(name).substr(5));
    if (index) found.emplace_back(*index, it->path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> dirs;
  for (auto& [index, path] : found) dirs.push_back(std::move(path));
  return dirs;
}

struct HwmonChoice {
  std::optional<fs::path> file;
  std::string line;  // for the description
};

// The first hwmon named `driver` with one of `files` (in order of preference) that reads as a
// number now.
HwmonChoice findHwmon(const fs::path& root, std::string_view driver,
                      std::initializer_list<std::string_view> files, std::string_view missingWhy) {
  std::vector<std::string> problems;
  for (const fs::path& dir : hwmonDirs(root)) {
    FileText name = readSmallFile(dir / "name");
    if (!name.text || trim(*name.text) != driver) continue;
    for (std::string_view file : files) {
      fs::path path = dir / file;
      FileText text = readSmallFile(path);
      if (!text.text) {
        if (text.error != ENOENT) {
          problems.push_back(fmt::format("{}: {}", path.string(), describeError(text.error)));
        }
        continue;
      }
      if (!parseWholeUnsigned(*text.text)) {
        problems.push_back(fmt::format("{}: not a number", path.string()));
        continue;
      }
      return {path, fmt::format("{} (microwatts)", path.string())};
    }
    if (problems.empty()) {
      problems.push_back(fmt::format("{} has none of the power files", dir.string()));
    }
  }
  if (problems.empty()) return {std::nullopt, fmt::format("missing: {}", missingWhy)};
  std::string line = "missing:";
  for (const std::string& p : problems) line += " " + p + ";";
  line.pop_back();
  return {std::nullopt, line};
}

}  // namespace

std::uint64_t WrappingCounter::update(std::uint64_t reading) {
  if (!last_) {
    total_ = reading;
  } else if (reading >= *last_) {
    *total_ += reading - *last_;
  } else if (maxRange_ && *last_ <= *maxRange_) {
    *total_ += *maxRange_ - *last_ + reading;
  }
  last_ = reading;
  return *total_;
}

PowerMonitor::PowerMonitor(PowerMonitorOptions options) : root_(std::move(options.root)) {
  HwmonChoice npu = findHwmon(root_, "amdxdna", {"power1_input", "power1_average"},
                              "no hwmon named amdxdna (the driver adds it only when PMF "
                              "sensors work: kernel >= 7.0 with CONFIG_AMD_PMF)");
  npuPowerFile_ = npu.file;
  HwmonChoice apu = findHwmon(root_, "amdgpu", {"power1_average", "power1_input"},
                              "no hwmon named amdgpu (no AMD GPU, or amdgpu not loaded)");
  apuPowerFile_ = apu.file;

  std::string energyLine;
  fs::path rapl = root_ / "sys/class/powercap/intel-rapl:0";
  FileText energy = readSmallFile(rapl / "energy_uj");
  if (!energy.text) {
    energyLine =
        energy.error == ENOENT
            ? fmt::format("missing: no {} (no RAPL powercap driver)", rapl.string())
            : fmt::format("missing: {}: {}{}", (rapl / "energy_uj").string(),
                          describeError(energy.error),
                          energy.error == EACCES
                              ? " (root-only since Linux 5.10, CVE-2020-8694; grant read access "
                                "with a udev rule or run the daemon with access)"
                              : "");
  } else if (!parseWholeUnsigned(*energy.text)) {
    energyLine = fmt::format("missing: {}: not a number", (rapl / "energy_uj").string());
  } else {
    std::optional<std::uint64_t> maxRange = readUnsigned(rapl / "max_energy_range_uj");
    energyFile_ = rapl / "energy_uj";
    energy_.emplace(maxRange);
    energyLine = fmt::format("{} (microjoules{})", energyFile_->string(),
                             maxRange ? fmt::format(", wraps at {}", *maxRange)
                                      : ", no max_energy_range_uj: a wrap cannot be unwrapped");
  }

  description_ = fmt::format(
      "npu power: {}\napu power: {}\npackage energy: {}\nnpu busy time: {} at every read "
      "(absent while no amdxdna client with an engine line is open)",
      npu.line, apu.line, energyLine, (root_ / "proc/self/fdinfo").string());
  // One journald line, so the sources stay together in `journalctl -g power`.
  std::string oneLine;
  for (char c : description_) oneLine += c == '\n' ? std::string("; ") : std::string(1, c);
  if (!npuPowerFile_ && !apuPowerFile_ && !energyFile_) {
    // A box without AMD's sensors (or without access to RAPL) is common: one short sentence,
    // the details for whoever asks.
    logger("power")->info(
        "power sources: none here, so /metrics has no power or energy (`vigil doctor --verbose` "
        "says what each needs)");
    logger("power")->debug("power sources (details): {}", oneLine);
    return;
  }
  logger("power")->info("power sources: {}", oneLine);
}

std::optional<double> PowerMonitor::npuPowerWatts() const {
  if (!npuPowerFile_) return std::nullopt;
  auto microwatts = readUnsigned(*npuPowerFile_);
  if (!microwatts) return std::nullopt;
  return static_cast<double>(*microwatts) / kPerMicro;
}

std::optional<double> PowerMonitor::apuPowerWatts() const {
  if (!apuPowerFile_) return std::nullopt;
  auto microwatts = readUnsigned(*apuPowerFile_);
  if (!microwatts) return std::nullopt;
  return static_cast<double>(*microwatts) / kPerMicro;
}

std::optional<double> PowerMonitor::packageEnergyJoules() {
  if (!energyFile_) return std::nullopt;
  auto microjoules = readUnsigned(*energyFile_);
  if (!microjoules) return std::nullopt;
  std::lock_guard lock(energyMutex_);
  return static_cast<double>(energy_->update(*microjoules)) / kPerMicro;
}

std::optional<double> PowerMonitor::npuBusySeconds() const {
  const NpuClientUsage usage = npuClientUsage(root_ / "proc/self");
  if (!usage.busyNs) return std::nullopt;
  return static_cast<double>(*usage.busyNs) / kPerNano;
}

void registerPowerMetrics(Registry& registry, std::shared_ptr<PowerMonitor> monitor) {
  registry.callbackGauge("vigil_npu_power_watts", "NPU power from the amdxdna hwmon sensor.")
      .add({}, [monitor] { return monitor->npuPowerWatts(); });
  registry
      .callbackGauge("vigil_apu_power_watts",
                     "APU (SoC) power from the amdgpu hwmon sensor (power1_average or "
                     "power1_input).")
      .add({}, [monitor] { return monitor->apuPowerWatts(); });
  registry
      .callbackCounter("vigil_package_energy_joules_total",
                       "CPU package energy from RAPL powercap intel-rapl:0, unwrapped.")
      .add({}, [monitor] { return monitor->packageEnergyJoules(); });
  registry
      .callbackCounter("vigil_npu_busy_seconds_total",
                       "NPU busy time of this process's amdxdna DRM clients (fdinfo).")
      .add({}, [monitor] { return monitor->npuBusySeconds(); });
}

}  // namespace vigil
