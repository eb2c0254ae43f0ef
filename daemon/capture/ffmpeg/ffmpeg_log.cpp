#include "daemon/capture/ffmpeg/ffmpeg_log.h"

extern "C" {
#include <libavutil/log.h>
}

#include <chrono>
#include <cstdarg>
#include <map>
#include <mutex>
#include <regex>
#include <string>

#include "daemon/base/log.h"
#include "daemon/capture/frame/frame.h"

namespace vigil {

namespace {

// FFmpeg's own messages (a refused DESCRIBE, an HTTP 401, a corrupt packet) go to the "ffmpeg"
// logger instead of raw stderr: the log's formatter redacts URL passwords and escapes control
// bytes in them like in every other line. Warnings and errors only.
// A stream can make FFmpeg complain about every packet (10 a second from a camera sending bad
// pictures): at most kFfmpegBurst lines every kFfmpegWindow reach the log, and how many were
// held back is said with the next line after the window.
// A camera that keeps refusing makes FFmpeg say the same thing at every retry ("[tcp @ 0x...]
// Connection refused"): the same message (object addresses aside) is logged once per
// kFfmpegRepeatWindow, the camera's own "source lost" line saying the state.
constexpr int kFfmpegBurst = 5;
constexpr auto kFfmpegWindow = std::chrono::seconds(10);
constexpr auto kFfmpegRepeatWindow = std::chrono::minutes(10);

// True when `text` was logged within kFfmpegRepeatWindow; remembers it otherwise. Under the
// caller's lock.
bool repeatedFfmpegMessage(const std::string& text, SteadyClock::time_point now) {
  static std::map<std::string, SteadyClock::time_point> lastLogged;
  static const std::regex address(" @ 0x[0-9a-fA-F]+");
  const std::string key = std::regex_replace(text, address, "");
  auto it = lastLogged.find(key);
  if (it != lastLogged.end() && now - it->second < kFfmpegRepeatWindow) return true;
  if (lastLogged.size() >= 256) lastLogged.clear();  // bounded: a stream of distinct messages
  lastLogged[key] = now;
  return false;
}

void logFromFfmpeg(void* object, int level, const char* format, va_list args) {
  if (level > AV_LOG_WARNING) return;
  // FFmpeg logs from several threads; the prefix state and the rate limit are shared.
  static std::mutex mutex;
  static int printPrefix = 1;
  static SteadyClock::time_point windowStart{};
  static int inWindow = 0;
  static long heldBack = 0;
  char line[1024];
  long heldBackBefore = 0;
  {
    std::lock_guard lock(mutex);
    av_log_format_line2(object, level, format, args, line, sizeof line, &printPrefix);
    const auto now = SteadyClock::now();
    if (repeatedFfmpegMessage(line, now)) return;
    if (now - windowStart >= kFfmpegWindow) {
      windowStart = now;
      inWindow = 0;
      heldBackBefore = heldBack;
      heldBack = 0;
    }
    if (++inWindow > kFfmpegBurst) {
      ++heldBack;
      return;
    }
  }
  auto log = logger("ffmpeg");
  if (heldBackBefore > 0) {
    log->warn("{} more FFmpeg message(s) held back in {} s", heldBackBefore,
              std::chrono::duration_cast<std::chrono::seconds>(kFfmpegWindow).count());
  }
  std::string text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.empty()) return;
  if (level <= AV_LOG_ERROR) {
    log->error("{}", text);
  } else {
    log->warn("{}", text);
  }
}

}  // namespace

void routeFfmpegLogs() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_callback(&logFromFfmpeg); });
}

}  // namespace vigil
