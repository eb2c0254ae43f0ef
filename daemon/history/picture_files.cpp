#include "daemon/history/picture_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace vigil {

namespace {

std::string dayOf(std::chrono::system_clock::time_point now) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

// Event ids are made of camera and zone names ([a-z0-9_-]); anything else is not written.
std::string safeName(const std::string& eventId) {
  std::string out = eventId;
  std::replace_if(
      out.begin(), out.end(),
      [](char c) { return !(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'); },
      '_');
  return out;
}

tl::unexpected<Error> writeError(const std::filesystem::path& file, int error) {
  return makeError(
      error == ENOSPC || error == EDQUOT ? ErrorCode::kUnavailable : ErrorCode::kBackendFailure,
      "history picture {}: cannot write it: {}", file.string(), std::strerror(error));
}

}  // namespace

Expected<PictureFiles::Written> PictureFiles::write(const std::string& eventId,
                                                    EventPictureKind kind, const std::string& jpeg,
                                                    std::chrono::system_clock::time_point now) {
  Written out;
  out.file = fmt::format("{}/{}-{}.jpg", dayOf(now), safeName(eventId),
                         kind == EventPictureKind::kFirst ? "first" : "best");
  const std::filesystem::path target = dir_ / out.file;
  std::error_code ec;
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) return writeError(target.parent_path(), ec.value());
  std::filesystem::path partial = target;
  partial += ".partial";
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) return writeError(partial, errno);
  std::size_t done = 0;
  while (done < jpeg.size()) {
    const ssize_t n = ::write(fd, jpeg.data() + done, jpeg.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(partial.c_str());
      return writeError(target, error);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(partial.c_str());
    return writeError(target, error);
  }
  std::filesystem::rename(partial, target, ec);
  if (ec) return writeError(target, ec.value());
  out.bytes = static_cast<std::int64_t>(jpeg.size());
  return out;
}

void PictureFiles::remove(const std::string& file) {
  const std::filesystem::path p = path(file);
  if (p.empty()) return;
  std::error_code ec;
  std::filesystem::remove(p, ec);
  if (std::filesystem::is_empty(p.parent_path(), ec) && !ec) {
    std::filesystem::remove(p.parent_path(), ec);
  }
}

std::filesystem::path PictureFiles::path(const std::string& file) const {
  if (file.empty() || file.find("..") != std::string::npos || file.front() == '/') return {};
  return dir_ / file;
}

}  // namespace vigil
