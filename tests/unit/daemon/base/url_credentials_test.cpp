#include "daemon/base/url_credentials.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(RedactCredentialsTest, ThePasswordOfEveryUrlIsReplacedAndNothingElse) {
  EXPECT_EQ(redactCredentials("rtsp://admin:secret@192.0.2.1:554/stream"),
            "rtsp://admin:***@192.0.2.1:554/stream");
  EXPECT_EQ(redactCredentials("http://u:p@h/x and rtsps://v:q@[::1]/y"),
            "http://u:***@h/x and rtsps://v:***@[::1]/y");
  // A password with '@' and ':' in it (not encoded): the last '@' of the authority ends it.
  EXPECT_EQ(redactCredentials("rtsp://a:p@ss:w@host/s"), "rtsp://a:***@host/s");
  EXPECT_EQ(redactCredentials("rtsp://:only-password@host"), "rtsp://:***@host");
  // Quoted inside an error message, as FFmpeg and the config errors quote a URL.
  EXPECT_EQ(redactCredentials("cannot open 'rtsp://a:b@h/s': refused"),
            "cannot open 'rtsp://a:***@h/s': refused");
  // A user alone is no secret; an '@' in the path or query is not userinfo; a port is not a
  // password.
  EXPECT_EQ(redactCredentials("rtsp://admin@host/s"), "rtsp://admin@host/s");
  EXPECT_EQ(redactCredentials("http://host:8080/a@b?c=d@e"), "http://host:8080/a@b?c=d@e");
  EXPECT_EQ(redactCredentials("no url here: a:b@c"), "no url here: a:b@c");
  EXPECT_EQ(redactCredentials(""), "");
}

TEST(WithPasswordTest, ThePasswordIsPercentEncodedIntoTheUserinfo) {
  EXPECT_EQ(withPassword("rtsp://admin@host/s", "secret"), "rtsp://admin:secret@host/s");
  EXPECT_EQ(withPassword("http://admin@h:80/mjpeg", "s3cr3t!@ #x"),
            "http://admin:s3cr3t%21%40%20%23x@h:80/mjpeg");
  EXPECT_EQ(withPassword("rtsp://admin:old@host/s", "new"), "rtsp://admin:new@host/s");
  EXPECT_EQ(withPassword("rtsp://host/s", "p"), "rtsp://:p@host/s");
  // What it puts in, redaction takes out.
  EXPECT_EQ(redactCredentials(withPassword("rtsp://admin@host/s", "a@b:c/d")),
            "rtsp://admin:***@host/s");
}

}  // namespace
}  // namespace vigil
