#pragma once

#include <string>
#include <string_view>

namespace vigil {

// Camera URLs may carry a user and password (rtsp://admin:secret@host/stream). Vigil never prints
// or serves the password: everything that shows a URL, or a message that may quote one (FFmpeg's
// errors), goes through redactCredentials first; the log's formatter does it for every line.

// `text` with the password of every "scheme://user:password@" in it replaced by "***"
// ("rtsp://admin:***@host/stream"); a user without a password is kept as it is.
std::string redactCredentials(std::string_view text);

// `url` with `password` (percent-encoded) as the password of its userinfo: "rtsp://admin@host"
// and "p@ss" give "rtsp://admin:p%40ss@host". A URL that has a password already keeps it
// replaced; one without a user gets the password alone ("rtsp://:p%40ss@host").
std::string withPassword(std::string_view url, std::string_view password);

}  // namespace vigil
