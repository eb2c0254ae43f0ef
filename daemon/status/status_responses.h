#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "daemon/web/http_server.h"

namespace vigil {

// The status API's plain answers: not cached (they say what is true now).

inline HttpResponse plainResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

inline HttpResponse jsonResponse(const nlohmann::json& j) {
  HttpResponse r;
  r.contentType = "application/json";
  r.body = j.dump(2) + "\n";
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace vigil
