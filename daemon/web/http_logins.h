#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "daemon/base/error.h"

namespace vigil {

// HTTP basic auth against bcrypt hashes (web config's basic_auth_users), verified by libxcrypt.
//
// bcrypt is slow on purpose (cost 10: about 70 ms here), too slow for every scrape: a header
// verified once is remembered (its SHA-256, not the password) for as long as this object lives,
// which is until the web configuration changes. Threads: verify() may run on any thread (the
// server's login thread); cached() and remember() on the server's io thread only.
class HttpLogins {
 public:
  struct Credential {
    std::string user;
    std::string password;
  };

  explicit HttpLogins(std::map<std::string, std::string> users);

  bool empty() const { return users_.empty(); }
  std::size_t size() const { return users_.size(); }

  // "Basic <base64 of user:password>" (the scheme case-insensitive); nullopt when absent or not
  // well formed.
  static std::optional<Credential> parseBasic(std::string_view header);

  // The header was verified before.
  bool cached(std::string_view header) const;
  void remember(std::string_view header);

  // bcrypt the password with the user's hash and compare in constant time. An unknown user pays a
  // bcrypt too, so the time taken does not tell which users exist.
  bool verify(const Credential& credential) const;

 private:
  static constexpr std::size_t kMaxCached = 256;

  std::map<std::string, std::string> users_;
  std::unordered_set<std::string> verified_;  // SHA-256 of verified Authorization values
};

// A bcrypt hash of `password` ("$2b$<cost>$..."), for `vigil passwd`. Cost 10 to 31.
Expected<std::string> bcryptHash(std::string_view password, int cost);

// Failed logins per client address: a burst of kBurst, then one more every kRefill; beyond that the
// address is answered 429 without its password being checked. An attempt takes its place before
// the (slow) check and a success gives it back, so many attempts sent at once are held too.
// The table is bounded: at kMaxAddresses, addresses with nothing held are forgotten first.
// io thread only.
class LoginThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kBurst = 5;
  static constexpr std::chrono::seconds kRefill{12};  // 5 a minute once the burst is spent
  static constexpr std::size_t kMaxAddresses = 4096;

  // Takes a place for an attempt; false: throttled (answer 429).
  bool tryAttempt(const std::string& address, Clock::time_point now);
  // The attempt succeeded: its place is given back.
  void succeeded(const std::string& address);
  // When the next attempt from `address` will be allowed (for Retry-After), at least 1 s.
  std::chrono::seconds retryAfter(const std::string& address, Clock::time_point now) const;
  // True at most once a minute per address: the failure or refusal is worth a warning.
  bool shouldLog(const std::string& address, Clock::time_point now);
  std::size_t addresses() const { return buckets_.size(); }

 private:
  struct Bucket {
    double places = kBurst;
    Clock::time_point updated{};
    Clock::time_point lastLogged{};
  };
  Bucket& bucket(const std::string& address, Clock::time_point now);

  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace vigil
