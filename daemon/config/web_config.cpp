#include "daemon/config/web_config.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <set>

#include "daemon/config/tls_context.h"
#include "foundation/yaml_reader.h"

namespace vigil {

namespace {

// exporter-toolkit allows these response headers only, and checks two of them.
constexpr std::array<std::string_view, 5> kAllowedHeaders{
    "Strict-Transport-Security", "X-Content-Type-Options", "X-Frame-Options", "X-XSS-Protection",
    "Content-Security-Policy"};

std::filesystem::path besideFile(const std::filesystem::path& file, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute()) return p;
  return (std::filesystem::absolute(file).parent_path() / p).lexically_normal();
}

// Calls `step` and turns its error into one at `node`.
void check(const YamlReader& r, const YAML::Node& node, const std::string& path,
           const Expected<void>& step) {
  if (!step) r.fail(node, path, step.error().message);
}

ClientAuth clientAuthOf(const YamlReader& r, const YAML::Node& node) {
  const std::string path = "tls_server_config.client_auth_type";
  const std::string name = r.getString(node, "tls_server_config", "client_auth_type", "");
  if (name.empty() || name == "NoClientCert") return ClientAuth::kNone;
  if (name == "RequestClientCert") return ClientAuth::kRequest;
  // "RequireClientCert" is exporter-toolkit's older name of the same policy.
  if (name == "RequireAnyClientCert" || name == "RequireClientCert") return ClientAuth::kRequireAny;
  if (name == "VerifyClientCertIfGiven") return ClientAuth::kVerifyIfGiven;
  if (name == "RequireAndVerifyClientCert") return ClientAuth::kRequireAndVerify;
  r.fail(node["client_auth_type"], path,
         fmt::format("'{}' is not a client auth type (NoClientCert, RequestClientCert, "
                     "RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert)",
                     name));
}

void warnIfOthersRead(const YamlReader& r, const YAML::Node& node, const std::string& path,
                      const std::string& file, std::vector<std::string>& warnings) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0 || (info.st_mode & S_IROTH) == 0) return;
  warnings.push_back(r.describeLocation(
      node, path,
      fmt::format("{} can be read by every user on this machine (mode {:04o}); chmod 600 or 640 "
                  "it (the packaged service reads it as user vigil)",
                  file, info.st_mode & 07777)));
}

// Exactly one of a file and an inline PEM for the certificate and for the key; client CAs only
// with a client_auth_type.
void checkTlsChoices(const YamlReader& r, const YAML::Node& node, const TlsServerConfig& t) {
  const std::string path = "tls_server_config";
  auto at = [&](std::string_view key) {
    return std::make_pair(node[std::string(key)], YamlReader::join(path, key));
  };
  auto both = [&](std::string_view fileKey, std::string_view inlineKey, const std::string& a,
                  const std::string& b) {
    if (a.empty() == b.empty()) {
      auto [n, p] = at(a.empty() ? fileKey : inlineKey);
      r.fail(a.empty() && b.empty() ? node : n, a.empty() && b.empty() ? path : p,
             fmt::format("give exactly one of {} and {}", fileKey, inlineKey));
    }
  };
  both("cert_file", "cert", t.certFile, t.certPem);
  both("key_file", "key", t.keyFile, t.keyPem);
  if (!t.clientCaFile.empty() && t.clientAuth == ClientAuth::kNone) {
    auto [n, p] = at("client_ca_file");
    r.fail(n, p,
           "client CAs are configured without a client_auth_type (as exporter-toolkit, "
           "this is refused: say which clients must show a certificate)");
  }
}

// The section's fields, files beside `webFile`, checked against each other.
TlsServerConfig tlsFieldsOf(const YamlReader& r, const YAML::Node& node,
                            const std::filesystem::path& webFile) {
  const std::string path = "tls_server_config";
  r.expectMap(node, path);
  if (node["client_allowed_sans"].IsDefined()) {
    r.fail(node["client_allowed_sans"], "tls_server_config.client_allowed_sans",
           "not implemented by Vigil; remove it (client certificates are verified against "
           "client_ca_file only)");
  }
  r.rejectUnknownKeys(node, path,
                      {"cert_file", "key_file", "cert", "key", "client_ca_file", "client_auth_type",
                       "cipher_suites", "prefer_server_cipher_suites", "min_version", "max_version",
                       "curve_preferences"});
  TlsServerConfig t;
  auto file = [&](std::string_view key) {
    const std::string value = r.getString(node, path, key, "");
    return value.empty() ? value : besideFile(webFile, value).string();
  };
  t.certFile = file("cert_file");
  t.keyFile = file("key_file");
  t.certPem = r.getString(node, path, "cert", "");
  t.keyPem = r.getString(node, path, "key", "");
  t.clientCaFile = file("client_ca_file");
  t.clientAuth = clientAuthOf(r, node);
  t.minVersion = r.getString(node, path, "min_version", t.minVersion);
  t.maxVersion = r.getString(node, path, "max_version", t.maxVersion);
  if (node["cipher_suites"].IsDefined())
    t.cipherSuites = r.getStringList(node, path, "cipher_suites");
  t.preferServerCipherSuites = r.getBool(node, path, "prefer_server_cipher_suites", true);
  if (node["curve_preferences"].IsDefined()) {
    t.curvePreferences = r.getStringList(node, path, "curve_preferences");
  }
  checkTlsChoices(r, node, t);
  return t;
}

// The context, built key by key so that a failure names its key; a key file others can read is
// a warning.
std::shared_ptr<boost::asio::ssl::context> tlsContextOf(const YamlReader& r, const YAML::Node& node,
                                                        const TlsServerConfig& t,
                                                        std::vector<std::string>& warnings) {
  const std::string path = "tls_server_config";
  TlsContextBuilder tls;
  if (!t.certFile.empty()) {
    check(r, node["cert_file"], path + ".cert_file", tls.certificateFile(t.certFile));
  } else {
    check(r, node["cert"], path + ".cert", tls.certificate(t.certPem));
  }
  if (!t.keyFile.empty()) {
    check(r, node["key_file"], path + ".key_file", tls.privateKeyFile(t.keyFile));
    warnIfOthersRead(r, node["key_file"], path + ".key_file", t.keyFile, warnings);
  } else {
    check(r, node["key"], path + ".key", tls.privateKey(t.keyPem));
  }
  if (!t.clientCaFile.empty()) {
    check(r, node["client_ca_file"], path + ".client_ca_file", tls.clientCaFile(t.clientCaFile));
  }
  check(r, node["client_auth_type"], path + ".client_auth_type", tls.clientAuth(t.clientAuth));
  YAML::Node versionNode = node["min_version"].IsDefined() ? node["min_version"] : node;
  check(r, versionNode, path, tls.versions(t.minVersion, t.maxVersion));
  check(r, node["cipher_suites"], path + ".cipher_suites",
        tls.cipherSuites(t.cipherSuites, t.preferServerCipherSuites));
  check(r, node["curve_preferences"], path + ".curve_preferences", tls.curves(t.curvePreferences));
  auto context = tls.finish();
  if (!context) r.fail(node, path, context.error().message);
  return std::move(*context);
}

// Reads the fields, then builds the context key by key so that a failure names its key.
void readTls(const YamlReader& r, const YAML::Node& node, WebConfig& web) {
  TlsServerConfig t = tlsFieldsOf(r, node, web.file);
  web.tlsContext = tlsContextOf(r, node, t, web.warnings);
  web.tls = std::move(t);
}

bool looksLikeBcrypt(const std::string& hash) {
  if (hash.size() != 60) return false;
  if (!(hash.starts_with("$2a$") || hash.starts_with("$2b$") || hash.starts_with("$2y$"))) {
    return false;
  }
  return std::isdigit(static_cast<unsigned char>(hash[4])) &&
         std::isdigit(static_cast<unsigned char>(hash[5])) && hash[6] == '$';
}

void readUsers(const YamlReader& r, const YAML::Node& node, WebConfig& web) {
  const std::string path = "basic_auth_users";
  r.expectMap(node, path);
  for (const auto& entry : node) {
    const std::string user = entry.first.as<std::string>();
    const std::string userPath = YamlReader::join(path, user);
    if (user.empty() || user.find(':') != std::string::npos) {
      r.fail(entry.first, userPath, "a user name is not empty and has no ':' (HTTP basic auth)");
    }
    if (web.basicAuthUsers.contains(user)) r.fail(entry.first, userPath, "a user is given twice");
    if (!entry.second.IsScalar()) r.fail(entry.second, userPath, "expected a bcrypt hash");
    const std::string hash = entry.second.as<std::string>();
    if (!looksLikeBcrypt(hash)) {
      r.fail(entry.second, userPath,
             "not a bcrypt hash ($2y$10$ and 53 more characters): make one with `vigil passwd " +
                 user + "` or `htpasswd -nBC 10 " + user + "`");
    }
    web.basicAuthUsers.emplace(user, hash);
  }
}

void readServer(const YamlReader& r, const YAML::Node& node, WebConfig& web) {
  const std::string path = "http_server_config";
  r.expectMap(node, path);
  r.rejectUnknownKeys(node, path, {"http2", "headers"});
  if (r.getBool(node, path, "http2", false)) {
    r.fail(node["http2"], path + ".http2",
           "Vigil serves HTTP/1.1 only; remove the key or set it to false");
  }
  YAML::Node headers = node["headers"];
  if (!headers.IsDefined() || headers.IsNull()) return;
  r.expectMap(headers, path + ".headers");
  std::set<std::string> seen;
  for (const auto& entry : headers) {
    const std::string name = entry.first.as<std::string>();
    const std::string where = YamlReader::join(path + ".headers", name);
    auto allowed = std::find(kAllowedHeaders.begin(), kAllowedHeaders.end(), name);
    if (allowed == kAllowedHeaders.end()) {
      r.fail(entry.first, where,
             fmt::format("not a header this file may set (one of {})",
                         fmt::join(kAllowedHeaders, ", ")));
    }
    if (!seen.insert(name).second) r.fail(entry.first, where, "given twice");
    const std::string value = r.getString(headers, path + ".headers", name);
    if (value.find_first_of("\r\n") != std::string::npos) {
      r.fail(entry.second, where, "a header value has no line breaks");
    }
    if (name == "X-Content-Type-Options" && value != "nosniff") {
      r.fail(entry.second, where, "must be nosniff");
    }
    if (name == "X-Frame-Options" && value != "deny" && value != "sameorigin") {
      r.fail(entry.second, where, "must be deny or sameorigin");
    }
    web.headers.emplace_back(name, value);
  }
}

WebConfig readWebConfig(const YamlReader& r, const std::filesystem::path& file) {
  WebConfig web;
  web.file = std::filesystem::absolute(file);
  const YAML::Node& root = r.root();
  if (!root.IsDefined() || root.IsNull()) return web;  // an empty file: exporter-toolkit's too
  r.expectMap(root, "");
  r.rejectUnknownKeys(root, "", {"tls_server_config", "http_server_config", "basic_auth_users"});
  if (YAML::Node tls = root["tls_server_config"]; tls.IsDefined() && !tls.IsNull()) {
    readTls(r, tls, web);
  }
  if (YAML::Node users = root["basic_auth_users"]; users.IsDefined() && !users.IsNull()) {
    readUsers(r, users, web);
  }
  if (YAML::Node server = root["http_server_config"]; server.IsDefined() && !server.IsNull()) {
    readServer(r, server, web);
  }
  return web;
}

}  // namespace

Expected<WebConfig> parseWebConfig(const std::string& text, const std::filesystem::path& file) {
  try {
    YamlReader r = YamlReader::fromString(text, file.string());
    return readWebConfig(r, file);
  } catch (const YamlError& e) {
    return makeError(ErrorCode::kInvalidData, "{}", e.what());
  }
}

Expected<WebConfig> loadWebConfig(const std::filesystem::path& file) {
  try {
    YamlReader r = YamlReader::fromFile(file.string());
    return readWebConfig(r, file);
  } catch (const YamlError& e) {
    return makeError(std::filesystem::exists(file) ? ErrorCode::kInvalidData : ErrorCode::kNotFound,
                     "{}", e.what());
  }
}

}  // namespace vigil
