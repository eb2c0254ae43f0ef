#include "daemon/web/http_logins.h"

#include <crypt.h>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>

namespace vigil {

namespace {

int base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with padding (RFC 7617 says so); nullopt on anything else.
std::optional<std::string> decodeBase64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    std::uint32_t bits = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=' && last && j >= 2 && (j == 3 || text[i + 3] == '=')) {
        ++pad;
        bits <<= 6;
        continue;
      }
      const int v = base64Value(c);
      if (v < 0 || pad > 0) return std::nullopt;
      bits = (bits << 6) | static_cast<std::uint32_t>(v);
    }
    out.push_back(static_cast<char>((bits >> 16) & 0xff));
    if (pad < 2) out.push_back(static_cast<char>((bits >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(bits & 0xff));
  }
  return out;
}

std::string sha256(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    return {};
  }
  return std::string(reinterpret_cast<const char*>(digest.data()), size);
}

// bcrypt of `password` with `setting` (a hash or a salt), or empty when libxcrypt refuses it.
std::string bcrypt(const std::string& password, const std::string& setting) {
  auto data = std::make_unique<crypt_data>();  // 32 KB: not on the stack
  const char* out = crypt_rn(password.c_str(), setting.c_str(), data.get(), sizeof(crypt_data));
  std::string hash = out != nullptr && out[0] != '*' ? std::string(out) : std::string();
  OPENSSL_cleanse(data.get(), sizeof(crypt_data));
  return hash;
}

}  // namespace

HttpLogins::HttpLogins(std::map<std::string, std::string> users) : users_(std::move(users)) {}

std::optional<HttpLogins::Credential> HttpLogins::parseBasic(std::string_view header) {
  constexpr std::string_view kScheme = "basic ";
  if (header.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return std::nullopt;
  }
  std::string_view encoded = header.substr(kScheme.size());
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  while (!encoded.empty() && encoded.back() == ' ') encoded.remove_suffix(1);
  auto decoded = decodeBase64(encoded);
  if (!decoded) return std::nullopt;
  const auto colon = decoded->find(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  // A NUL would end the password early for crypt(): refuse rather than check a shorter one.
  if (decoded->find('\0') != std::string::npos) return std::nullopt;
  return Credential{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

bool HttpLogins::cached(std::string_view header) const {
  return !verified_.empty() && verified_.contains(sha256(header));
}

void HttpLogins::remember(std::string_view header) {
  if (verified_.size() >= kMaxCached) verified_.clear();
  verified_.insert(sha256(header));
}

bool HttpLogins::verify(const Credential& credential) const {
  if (users_.empty()) return false;
  auto it = users_.find(credential.user);
  const bool known = it != users_.end();
  // An unknown user is checked against another user's hash, which costs the same.
  const std::string& expected = known ? it->second : users_.begin()->second;
  const std::string hash = bcrypt(credential.password, expected);
  const bool same = hash.size() == expected.size() &&
                    CRYPTO_memcmp(hash.data(), expected.data(), expected.size()) == 0;
  return known && same;
}

Expected<std::string> bcryptHash(std::string_view password, int cost) {
  if (cost < 10 || cost > 31) {
    return makeError(ErrorCode::kInvalidArgument, "bcrypt cost must be 10 to 31, got {}", cost);
  }
  if (password.find('\0') != std::string_view::npos) {
    return makeError(ErrorCode::kInvalidArgument, "a password cannot contain a NUL byte");
  }
  // bcrypt reads at most 72 bytes; more would be ignored silently.
  if (password.size() > 72) {
    return makeError(ErrorCode::kInvalidArgument,
                     "bcrypt uses at most 72 bytes of a password, this one has {}",
                     password.size());
  }
  std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> salt{};
  if (crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt.data(),
                       static_cast<int>(salt.size())) == nullptr) {
    return makeError(ErrorCode::kUnavailable, "libxcrypt cannot make a bcrypt salt: {}",
                     std::strerror(errno));
  }
  std::string hash = bcrypt(std::string(password), salt.data());
  if (hash.empty()) return makeError(ErrorCode::kUnavailable, "libxcrypt refused to hash");
  return hash;
}

LoginThrottle::Bucket& LoginThrottle::bucket(const std::string& address, Clock::time_point now) {
  auto it = buckets_.find(address);
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxAddresses) {
      // Forget the addresses whose burst has refilled; if none, start over (bounded memory wins
      // over a perfect memory of who failed).
      for (auto& [key, b] : buckets_) {
        const double refilled = b.places + std::chrono::duration<double>(now - b.updated) / kRefill;
        if (refilled >= kBurst) b.places = -1;  // marked
      }
      std::erase_if(buckets_, [](const auto& entry) { return entry.second.places < 0; });
      if (buckets_.size() >= kMaxAddresses) buckets_.clear();
    }
    it = buckets_.emplace(address, Bucket{kBurst, now, {}}).first;
  }
  Bucket& b = it->second;
  b.places =
      std::min<double>(kBurst, b.places + std::chrono::duration<double>(now - b.updated) / kRefill);
  b.updated = now;
  return b;
}

bool LoginThrottle::tryAttempt(const std::string& address, Clock::time_point now) {
  Bucket& b = bucket(address, now);
  if (b.places < 1) return false;
  b.places -= 1;
  return true;
}

void LoginThrottle::succeeded(const std::string& address) {
  auto it = buckets_.find(address);
  if (it != buckets_.end()) it->second.places = std::min<double>(kBurst, it->second.places + 1);
}

std::chrono::seconds LoginThrottle::retryAfter(const std::string& address,
                                               Clock::time_point now) const {
  auto it = buckets_.find(address);
  if (it == buckets_.end()) return std::chrono::seconds(1);
  const Bucket& b = it->second;
  const double have = b.places + std::chrono::duration<double>(now - b.updated) / kRefill;
  const double wait = (1.0 - have) * static_cast<double>(kRefill.count());
  return std::chrono::seconds(std::max<long>(1, static_cast<long>(wait + 0.999)));
}

bool LoginThrottle::shouldLog(const std::string& address, Clock::time_point now) {
  Bucket& b = bucket(address, now);
  if (b.lastLogged != Clock::time_point{} && now - b.lastLogged < std::chrono::minutes(1)) {
    return false;
  }
  b.lastLogged = now;
  return true;
}

}  // namespace vigil
