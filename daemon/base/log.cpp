#include "daemon/base/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <string>
#include <string_view>

#include "daemon/base/url_credentials.h"

namespace vigil {

namespace {

std::mutex& registryMutex() {
  static std::mutex mutex;
  return mutex;
}

// "<3>": the syslog priority prefix journald reads from a service's stderr (sd-daemon(3)), so
// `journalctl -p err` shows exactly the errors.
class SyslogPriorityFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    char prefix[] = "<6>";
    switch (msg.level) {
      case spdlog::level::trace:
      case spdlog::level::debug:
        prefix[1] = '7';
        break;
      case spdlog::level::warn:
        prefix[1] = '4';
        break;
      case spdlog::level::err:
        prefix[1] = '3';
        break;
      case spdlog::level::critical:
        prefix[1] = '2';
        break;
      default:
        break;
    }
    dest.append(prefix, prefix + 3);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SyslogPriorityFlag>();
  }
};

// The message itself, as every line of Vigil's log shows it: passwords in URLs replaced by ***
// (a camera URL may carry one, and FFmpeg's errors quote the URL they failed on), and control
// bytes other than newline and tab written as \xNN, so that bytes from a bad file or stream
// cannot move the cursor, ring or rewrite the terminal or journal line.
class SafeMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string text = safeToShow(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SafeMessageFlag>();
  }
};

// True when stderr is the journal stream systemd connected (JOURNAL_STREAM=<dev>:<inode>).
bool stderrIsJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  unsigned long long dev = 0;
  unsigned long long ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  return fstat(2, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

spdlog::sink_ptr& sharedSink() {
  static spdlog::sink_ptr sink = [] {
    auto s = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<SafeMessageFlag>('&');
    if (stderrIsJournal()) {
      // The journal stamps time and unit itself; the prefix carries the priority.
      formatter->add_flag<SyslogPriorityFlag>('*').set_pattern("%*[%n] %&");
    } else {
      formatter->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ [%n] %&");
    }
    s->set_formatter(std::move(formatter));
    return s;
  }();
  return sink;
}

spdlog::level::level_enum& currentLevel() {
  static spdlog::level::level_enum level = spdlog::level::info;
  return level;
}

}  // namespace

std::shared_ptr<spdlog::logger> logger(const std::string& component) {
  std::lock_guard lock(registryMutex());
  if (auto existing = spdlog::get(component)) return existing;
  auto created = std::make_shared<spdlog::logger>(component, sharedSink());
  created->set_level(currentLevel());
  spdlog::register_logger(created);
  return created;
}

void setLogLevel(spdlog::level::level_enum level) {
  std::lock_guard lock(registryMutex());
  currentLevel() = level;
  spdlog::set_level(level);
}

namespace {

constexpr spdlog::level::level_enum kNamedLevels[] = {spdlog::level::trace, spdlog::level::debug,
                                                      spdlog::level::info, spdlog::level::warn,
                                                      spdlog::level::err};
static_assert(std::size(kNamedLevels) == std::size(kLogLevelNames));

}  // namespace

std::optional<spdlog::level::level_enum> logLevelNamed(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kLogLevelNames); ++i) {
    if (kLogLevelNames[i] == name) return kNamedLevels[i];
  }
  return std::nullopt;
}

std::string_view logLevelName(spdlog::level::level_enum level) {
  for (std::size_t i = 0; i < std::size(kNamedLevels); ++i) {
    if (kNamedLevels[i] == level) return kLogLevelNames[i];
  }
  const auto name = spdlog::level::to_string_view(level);
  return {name.data(), name.size()};
}

std::string safeToShow(std::string_view text) {
  const std::string redacted = redactCredentials(text);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(redacted.size());
  for (char c : redacted) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) {
      out += {'\\', 'x', kHex[u >> 4], kHex[u & 15]};
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace vigil
