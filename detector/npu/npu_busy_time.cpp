#include "detector/npu/npu_busy_time.h"

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

namespace vigil {

namespace {

std::string_view trimmed(std::string_view s) {
  const std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::optional<std::uint64_t> wholeNumber(std::string_view text) {
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return n;
}

}  // namespace

DrmFdinfo parseDrmFdinfo(std::string_view text) {
  DrmFdinfo client;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    const std::string_view value = trimmed(line.substr(colon + 1));
    if (key == "drm-driver") {
      client.npu = value.starts_with("amdxdna");
    } else if (key == "drm-client-id") {
      client.clientId = std::string(value);
    } else if (key.starts_with("drm-engine-") && value.ends_with(" ns")) {
      // drm-engine-capacity-<name> carries no unit, so the " ns" check leaves it out.
      if (auto ns = wholeNumber(trimmed(value.substr(0, value.size() - 3)))) {
        client.busyNs = client.busyNs.value_or(0) + *ns;
      }
    }
  }
  return client;
}

NpuClientUsage npuClientUsage(const std::filesystem::path& proc) {
  std::map<std::string, std::optional<std::uint64_t>> byClient;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(proc / "fdinfo", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::ifstream in(it->path());
    if (!in) continue;  // the fd was closed since the listing
    std::stringstream text;
    text << in.rdbuf();
    const DrmFdinfo client = parseDrmFdinfo(text.str());
    if (!client.npu) continue;
    byClient[client.clientId ? *client.clientId : "fd " + it->path().filename().string()] =
        client.busyNs;
  }
  NpuClientUsage usage;
  usage.clients = static_cast<int>(byClient.size());
  for (const auto& [id, ns] : byClient) {
    if (ns) usage.busyNs = usage.busyNs.value_or(0) + *ns;
  }
  return usage;
}

NpuBusyWatch::NpuBusyWatch(Reader read, int everyRuns)
    : read_(std::move(read)), everyRuns_(everyRuns) {}

void NpuBusyWatch::restart() {
  first_ = true;
  runsSinceCheck_ = 0;
  last_ = read_().busyNs;
}

Expected<void> NpuBusyWatch::afterRun() {
  ++runsSinceCheck_;
  if (!first_ && runsSinceCheck_ < everyRuns_) return {};
  const NpuClientUsage now = read_();
  if (now.clients == 0) {
    return makeError(ErrorCode::kNotOnNpu,
                     "the runtime reports success but this process has no amdxdna client open "
                     "(no NPU in /proc/self/fdinfo): nothing ran on the NPU");
  }
  unverifiable_ = !now.busyNs.has_value();
  if (now.busyNs && last_ && *now.busyNs <= *last_) {
    return makeError(ErrorCode::kNotOnNpu,
                     "the NPU busy time (amdxdna fdinfo) stayed at {} ns over {} successful "
                     "run(s): a silent fallback to the CPU",
                     *now.busyNs, runsSinceCheck_);
  }
  last_ = now.busyNs;
  first_ = false;
  runsSinceCheck_ = 0;
  return {};
}

}  // namespace vigil
