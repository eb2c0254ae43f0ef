#include "daemon/web/http_logins.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using namespace std::chrono_literals;

TEST(HttpLoginsTest, BasicAuthHeadersAreParsedStrictly) {
  // "prometheus:s3cret:with:colons" (a password may hold colons; a user may not).
  auto c = HttpLogins::parseBasic("Basic cHJvbWV0aGV1czpzM2NyZXQ6d2l0aDpjb2xvbnM=");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->user, "prometheus");
  EXPECT_EQ(c->password, "s3cret:with:colons");
  EXPECT_TRUE(HttpLogins::parseBasic("basic dTpw")) << "the scheme is case-insensitive";
  EXPECT_FALSE(HttpLogins::parseBasic("Bearer dTpw"));
  EXPECT_FALSE(HttpLogins::parseBasic("Basic "));
  EXPECT_FALSE(HttpLogins::parseBasic("Basic dTpw=")) << "length not a multiple of 4";
  EXPECT_FALSE(HttpLogins::parseBasic("Basic dT!w"));
  EXPECT_FALSE(HttpLogins::parseBasic("Basic dXNlcg==")) << "'user' has no colon";
  EXPECT_FALSE(HttpLogins::parseBasic("Basic OnA=")) << "':p': an empty user";
  EXPECT_FALSE(HttpLogins::parseBasic("Basic dTpwAHg=")) << "'u:p\\0x': a NUL in the password";
  EXPECT_FALSE(HttpLogins::parseBasic("Basic dT=w")) << "padding in the middle";
}

TEST(HttpLoginsTest, AHashMadeHereVerifiesItsPasswordOnly) {
  auto hash = bcryptHash("correct horse", 10);
  ASSERT_TRUE(hash) << hash.error().message;
  EXPECT_TRUE(hash->starts_with("$2b$10$")) << *hash;
  EXPECT_EQ(hash->size(), 60U);
  HttpLogins logins(std::map<std::string, std::string>{{"u", *hash}});
  EXPECT_TRUE(logins.verify({"u", "correct horse"}));
  EXPECT_FALSE(logins.verify({"u", "correct horse "}));
  EXPECT_FALSE(logins.verify({"v", "correct horse"}));
  EXPECT_FALSE(bcryptHash("x", 9)) << "below cost 10";
  EXPECT_FALSE(bcryptHash(std::string(73, 'x'), 10)) << "bcrypt would ignore the 73rd byte";
}

TEST(HttpLoginsTest, AVerifiedHeaderIsRememberedAndOnlyThatOne) {
  HttpLogins logins(std::map<std::string, std::string>{
      {"u", "$2b$10$abcdefghijklmnopqrstuuJ1u0JvN3p1i7V3sM2ynNqsFz8l2aW9u"}});
  EXPECT_FALSE(logins.cached("Basic dTpw"));
  logins.remember("Basic dTpw");
  EXPECT_TRUE(logins.cached("Basic dTpw"));
  EXPECT_FALSE(logins.cached("Basic dTpx"));
}

TEST(LoginThrottleTest, ABurstOfFailuresThenOneEveryRefillAndSuccessesGiveTheirPlaceBack) {
  LoginThrottle throttle;
  const auto t0 = LoginThrottle::Clock::time_point{} + 1h;
  for (int i = 0; i < LoginThrottle::kBurst; ++i) {
    EXPECT_TRUE(throttle.tryAttempt("192.0.2.1", t0)) << i;
  }
  EXPECT_FALSE(throttle.tryAttempt("192.0.2.1", t0));
  EXPECT_TRUE(throttle.tryAttempt("192.0.2.2", t0)) << "another address has its own burst";
  EXPECT_EQ(throttle.retryAfter("192.0.2.1", t0), LoginThrottle::kRefill);
  EXPECT_FALSE(throttle.tryAttempt("192.0.2.1", t0 + LoginThrottle::kRefill - 1s));
  EXPECT_TRUE(throttle.tryAttempt("192.0.2.1", t0 + LoginThrottle::kRefill));
  EXPECT_FALSE(throttle.tryAttempt("192.0.2.1", t0 + LoginThrottle::kRefill));
  throttle.succeeded("192.0.2.1");
  EXPECT_TRUE(throttle.tryAttempt("192.0.2.1", t0 + LoginThrottle::kRefill))
      << "a right login costs nothing";
}

TEST(LoginThrottleTest, EachAddressIsLoggedAtMostOnceAMinute) {
  LoginThrottle throttle;
  const auto t0 = LoginThrottle::Clock::time_point{} + 1h;
  EXPECT_TRUE(throttle.shouldLog("192.0.2.1", t0));
  EXPECT_FALSE(throttle.shouldLog("192.0.2.1", t0 + 59s));
  EXPECT_TRUE(throttle.shouldLog("192.0.2.2", t0 + 59s));
  EXPECT_TRUE(throttle.shouldLog("192.0.2.1", t0 + 60s));
}

TEST(LoginThrottleTest, TheTableOfAddressesIsBounded) {
  LoginThrottle throttle;
  const auto t0 = LoginThrottle::Clock::time_point{} + 1h;
  // An attacker with many addresses: the one that failed most recently is still held.
  for (std::size_t i = 0; i < LoginThrottle::kMaxAddresses * 3; ++i) {
    throttle.tryAttempt("10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256), t0);
    ASSERT_LE(throttle.addresses(), LoginThrottle::kMaxAddresses);
  }
  for (int i = 0; i < LoginThrottle::kBurst; ++i) throttle.tryAttempt("192.0.2.9", t0);
  EXPECT_FALSE(throttle.tryAttempt("192.0.2.9", t0));
}

}  // namespace
}  // namespace vigil
