#include "daemon/base/url_credentials.h"

#include <cctype>

namespace vigil {

namespace {

bool schemeChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

// Where the authority of the URL starting at `scheme` ends: the first '/', '?', '#' or blank.
std::size_t authorityEnd(std::string_view text, std::size_t from) {
  std::size_t i = from;
  while (i < text.size() && text[i] != '/' && text[i] != '?' && text[i] != '#' &&
         std::isspace(static_cast<unsigned char>(text[i])) == 0 && text[i] != '\'' &&
         text[i] != '"') {
    ++i;
  }
  return i;
}

std::string percentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

}  // namespace

std::string redactCredentials(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  for (std::size_t at = text.find("://"); at != std::string_view::npos;
       at = text.find("://", at + 3)) {
    if (at == 0 || !schemeChar(text[at - 1])) continue;
    const std::size_t start = at + 3;
    const std::size_t end = authorityEnd(text, start);
    const std::size_t userinfoEnd = text.rfind('@', end == 0 ? 0 : end - 1);
    if (userinfoEnd == std::string_view::npos || userinfoEnd < start) continue;
    const std::size_t colon = text.find(':', start);
    if (colon == std::string_view::npos || colon > userinfoEnd) continue;  // a user, no password
    out.append(text.substr(copied, colon + 1 - copied));
    out += "***";
    copied = userinfoEnd;
  }
  out.append(text.substr(copied));
  return out;
}

std::string withPassword(std::string_view url, std::string_view password) {
  const std::size_t at = url.find("://");
  if (at == std::string_view::npos) return std::string(url);
  const std::size_t start = at + 3;
  const std::size_t end = authorityEnd(url, start);
  const std::size_t userinfoEnd = url.rfind('@', end == 0 ? 0 : end - 1);
  std::string user;
  std::size_t hostStart = start;
  if (userinfoEnd != std::string_view::npos && userinfoEnd >= start) {
    user = std::string(url.substr(start, userinfoEnd - start));
    if (auto colon = user.find(':'); colon != std::string::npos) user.resize(colon);
    hostStart = userinfoEnd + 1;
  }
  return std::string(url.substr(0, start)) + user + ":" + percentEncode(password) + "@" +
         std::string(url.substr(hostStart));
}

}  // namespace vigil
