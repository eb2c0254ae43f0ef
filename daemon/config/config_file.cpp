#include "daemon/config/config_file.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "daemon/base/log.h"
#include "daemon/base/url_credentials.h"
#include "daemon/config/camera_section.h"
#include "daemon/config/section_reading.h"
#include "daemon/config/web_config.h"
#include "foundation/yaml_reader.h"

namespace vigil {

namespace {

// Node names go into the MQTT client id "vigil-<node>", which stays within 64 characters.
constexpr std::size_t kMaxNodeName = 58;

}  // namespace

namespace yaml_config {

namespace {

void readDetector(const YamlReader& r, const YAML::Node& root, const std::filesystem::path& base,
                  DetectorConfig& d) {
  YAML::Node node = root["detector"];
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = "detector";
  r.rejectUnknownKeys(node, path,
                      {"model", "backend", "threads", "min_score", "nms", "denoise", "classes",
                       "square_input", "onnxruntime", "vitisai"});
  if (node["denoise"].IsDefined()) {
    r.report(node["denoise"], "detector.denoise",
             "denoise is a camera's setting: write `denoise: true` in the cameras that need it");
  }
  d.model = r.getString(node, path, "model", "");
  if (!d.model.empty()) d.model = resolve(base, d.model).string();
  d.backend = r.getString(node, path, "backend", d.backend);
  if (d.backend != "cpu" && d.backend != "cpu-ort" && d.backend != "npu" && d.backend != "auto") {
    r.report(node["backend"], "detector.backend",
             fmt::format("must be cpu, cpu-ort, npu or auto, got '{}'", d.backend));
  }
  // Each field on its own: one's mistake does not hide the next one's.
  r.collect(
      [&] { d.threads = static_cast<int>(r.getInt(node, path, "threads", 0, 64, d.threads)); });
  r.collect(
      [&] { d.minScore = static_cast<float>(r.getDouble(node, path, "min_score", 0.01, 1, 0.5)); });
  r.collect([&] { d.nms = static_cast<float>(r.getDouble(node, path, "nms", 0.05, 1, 0.45)); });
  r.collect([&] { d.squareInput = r.getBool(node, path, "square_input", false); });
  if (node["classes"].IsDefined()) {
    r.collect([&] {
      d.classes = r.getStringList(node, path, "classes");
      if (d.classes.empty()) r.fail(node["classes"], "detector.classes", "must name at least one");
    });
  }
  d.vitisai.onnxRuntime = r.getString(node, path, "onnxruntime", "");
  if (!d.vitisai.onnxRuntime.empty())
    d.vitisai.onnxRuntime = resolve(base, d.vitisai.onnxRuntime).string();
  if (YAML::Node v = node["vitisai"]; v.IsDefined() && !v.IsNull()) {
    const std::string vp = "detector.vitisai";
    r.expectMap(v, vp);
    r.rejectUnknownKeys(v, vp, {"target", "xclbin", "cache_dir"});
    d.vitisai.target = r.getString(v, vp, "target", "");
    if (d.vitisai.target != "" && d.vitisai.target != "X1" && d.vitisai.target != "X2") {
      r.fail(v["target"], vp + ".target",
             fmt::format("must be X1 (XDNA: Phoenix, Hawk Point) or X2 (XDNA2: Strix, Krackan), "
                         "got '{}'",
                         d.vitisai.target));
    }
    if (std::string x = r.getString(v, vp, "xclbin", ""); !x.empty()) {
      d.vitisai.xclbin = resolve(base, x);
    }
    if (std::string c = r.getString(v, vp, "cache_dir", ""); !c.empty()) {
      d.vitisai.cacheDir = resolve(base, c);
    }
  }
}

// An MQTT topic level sequence of our own: no wildcards, no empty levels.
void checkTopicPrefix(const YamlReader& r, const YAML::Node& node, const std::string& path,
                      const std::string& value) {
  bool bad = value.empty() || value.front() == '/' || value.back() == '/' ||
             value.find("//") != std::string::npos ||
             value.find_first_of("+#") != std::string::npos ||
             value.find('\0') != std::string::npos;
  if (bad) {
    r.fail(node, path,
           fmt::format("must be topic levels like 'vigil' or 'home/vigil': not empty, no '+' or "
                       "'#', no leading, trailing or double '/', got '{}'",
                       value));
  }
}

// mqtt's username and password: from password_file, else $VIGIL_MQTT_PASSWORD (kMqttPasswordEnv).
void readMqttLogin(const YamlReader& r, const YAML::Node& node, const std::filesystem::path& base,
                   MqttConfig& m, std::vector<std::string>& warnings) {
  const std::string path = "mqtt";
  m.username = r.getString(node, path, "username", "");
  m.passwordFile = r.getString(node, path, "password_file", "");
  if (!m.passwordFile.empty()) {
    m.passwordFile = resolve(base, m.passwordFile).string();
    m.password = readSecretFile(r, node["password_file"], "mqtt.password_file", m.passwordFile);
    warnIfWorldReadable(r, node["password_file"], "mqtt.password_file", m.passwordFile, warnings);
  } else if (const char* env = std::getenv(kMqttPasswordEnv); env != nullptr && *env != 0) {
    m.password = env;
  }
  if (!m.password.empty() && m.username.empty()) {
    r.fail(node, "mqtt.username", "a password is set but no username (MQTT needs both)");
  }
}

// mqtt's CA, client certificate and key files: beside the configuration, existing, for mqtts://
// only.
void readMqttTlsFiles(const YamlReader& r, const YAML::Node& node,
                      const std::filesystem::path& base, MqttConfig& m,
                      std::vector<std::string>& warnings) {
  const std::string path = "mqtt";
  const std::pair<const char*, std::string*> files[] = {
      {"ca_file", &m.caFile}, {"cert_file", &m.certFile}, {"key_file", &m.keyFile}};
  for (const auto& [key, value] : files) {
    *value = r.getString(node, path, key, "");
    if (value->empty()) continue;
    *value = resolve(base, *value).string();
    const std::string keyPath = YamlReader::join(path, key);
    if (!startsWith(m.url, "mqtts://")) {
      r.fail(node[key], keyPath, fmt::format("set, but mqtt.url '{}' is not mqtts://", m.url));
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*value, ec)) {
      r.fail(node[key], keyPath, fmt::format("no such file '{}'", *value));
    }
  }
  if (!m.keyFile.empty() && m.certFile.empty()) {
    r.fail(node["key_file"], "mqtt.key_file", "set without mqtt.cert_file");
  }
  if (!m.keyFile.empty())
    warnIfWorldReadable(r, node["key_file"], "mqtt.key_file", m.keyFile, warnings);
}

void readMqtt(const YamlReader& r, const YAML::Node& root, const std::filesystem::path& base,
              MqttConfig& m, std::vector<std::string>& warnings) {
  YAML::Node node = root["mqtt"];
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = "mqtt";
  r.expectMap(node, path);
  r.rejectUnknownKeys(node, path,
                      {"url", "client_id", "username", "password_file", "ca_file", "cert_file",
                       "key_file", "topic_prefix", "qos", "keepalive", "buffer_messages",
                       "ha_discovery", "ha_prefix", "snapshots"});
  m.enabled = true;
  // Each field's error is collected; the TLS files are checked against the url, so only once
  // the url is right.
  const bool url = r.collect([&] {
    m.url = r.getString(node, path, "url", m.url);
    if (!startsWith(m.url, "mqtt://") && !startsWith(m.url, "mqtts://")) {
      r.fail(node["url"], "mqtt.url",
             fmt::format("must be mqtt://host:port or mqtts://host:port, got '{}'", m.url));
    }
  });
  r.collect([&] {
    m.clientId = r.getString(node, path, "client_id", m.clientId);
    checkName(r, node["client_id"], "mqtt.client_id", m.clientId);
  });
  r.collect([&] { readMqttLogin(r, node, base, m, warnings); });
  if (url) r.collect([&] { readMqttTlsFiles(r, node, base, m, warnings); });
  r.collect([&] {
    m.topicPrefix = r.getString(node, path, "topic_prefix", m.topicPrefix);
    checkTopicPrefix(r, node["topic_prefix"], "mqtt.topic_prefix", m.topicPrefix);
  });
  r.collect([&] { m.qos = static_cast<int>(r.getInt(node, path, "qos", 0, 2, 1)); });
  r.collect(
      [&] { m.keepAlive = static_cast<int>(r.getInt(node, path, "keepalive", 5, 3600, 30)); });
  r.collect([&] {
    m.bufferMessages =
        static_cast<std::size_t>(r.getInt(node, path, "buffer_messages", 1, 1000000, 1000));
  });
  r.collect([&] { m.haDiscovery = r.getBool(node, path, "ha_discovery", true); });
  r.collect([&] {
    m.haPrefix = r.getString(node, path, "ha_prefix", m.haPrefix);
    checkTopicPrefix(r, node["ha_prefix"], "mqtt.ha_prefix", m.haPrefix);
  });
  r.collect([&] { m.snapshots = r.getBool(node, path, "snapshots", false); });
}

// http.web_config: the logins and TLS file (loadWebConfig), beside the configuration.
void readWebConfig(const YamlReader& r, const YAML::Node& node, const std::filesystem::path& base,
                   HttpConfig& h, std::vector<std::string>& warnings) {
  const std::string webConfig = r.getString(node, "http", "web_config", "");
  if (webConfig.empty()) return;
  h.webConfigFile = resolve(base, webConfig).string();
  auto web = loadWebConfig(h.webConfigFile);
  if (!web) r.fail(node["web_config"], "http.web_config", web.error().message);
  warnings.insert(warnings.end(), web->warnings.begin(), web->warnings.end());
  h.web = std::make_shared<const WebConfig>(std::move(*web));
}

void readHttp(const YamlReader& r, const YAML::Node& root, const std::filesystem::path& base,
              HttpConfig& h, std::vector<std::string>& warnings) {
  YAML::Node node = root["http"];
  if (!node.IsDefined() || node.IsNull()) return;
  r.expectMap(node, "http");
  r.rejectUnknownKeys(node, "http", {"enabled", "listen", "web_config", "metrics_need_login"});
  r.collect([&] { h.enabled = r.getBool(node, "http", "enabled", true); });
  r.collect([&] {
    h.listen = r.getString(node, "http", "listen", h.listen);
    // The server parses it fully at start; catch the obvious here so check-config does.
    auto colon = h.listen.rfind(':');
    if (colon == std::string::npos || colon + 1 == h.listen.size() || colon == 0) {
      r.fail(
          node["listen"], "http.listen",
          fmt::format("must be host:port, e.g. 127.0.0.1:9842 or [::]:9842, got '{}'", h.listen));
    }
  });
  // metrics_need_login is checked against the logins, so only once web_config has been read.
  const bool logins = r.collect([&] { readWebConfig(r, node, base, h, warnings); });
  r.collect([&] {
    h.metricsNeedLogin = r.getBool(node, "http", "metrics_need_login", false);
    if (logins && h.metricsNeedLogin && !h.hasLogins()) {
      r.fail(node["metrics_need_login"], "http.metrics_need_login",
             "needs logins: http.web_config with basic_auth_users");
    }
  });
}

void readCapture(const YamlReader& r, const YAML::Node& root, CaptureConfig& c) {
  YAML::Node node = root["capture"];
  if (!node.IsDefined() || node.IsNull()) return;
  r.expectMap(node, "capture");
  r.rejectUnknownKeys(node, "capture",
                      {"scaled_decode", "skip_loop_filter", "hwaccel", "vaapi_device"});
  r.collect([&] { c.scaledDecode = r.getBool(node, "capture", "scaled_decode", c.scaledDecode); });
  r.collect(
      [&] { c.skipLoopFilter = r.getBool(node, "capture", "skip_loop_filter", c.skipLoopFilter); });
  r.collect([&] { c.hwDecode.accel = readHwAccel(r, node, "capture", c.hwDecode.accel); });
  r.collect(
      [&] { c.hwDecode.device = r.getString(node, "capture", "vaapi_device", c.hwDecode.device); });
}

void readHistory(const YamlReader& r, const YAML::Node& root, HistoryConfig& h) {
  YAML::Node node = root["history"];
  if (!node.IsDefined() || node.IsNull()) return;
  r.expectMap(node, "history");
  r.rejectUnknownKeys(node, "history", {"retain_days", "max_megabytes"});
  r.collect([&] {
    h.retainDays =
        static_cast<int>(r.getInt(node, "history", "retain_days", 1, 3650, h.retainDays));
  });
  r.collect([&] {
    h.maxMegabytes = static_cast<int>(
        r.getInt(node, "history", "max_megabytes", 10, 10'000'000, h.maxMegabytes));
  });
}

void readLog(const YamlReader& r, const YAML::Node& root, LogConfig& l) {
  YAML::Node node = root["log"];
  if (!node.IsDefined() || node.IsNull()) return;
  r.expectMap(node, "log");
  r.rejectUnknownKeys(node, "log", {"level"});
  const std::string level = r.getString(node, "log", "level", std::string(logLevelName(l.level)));
  if (auto named = logLevelNamed(level)) {
    l.level = *named;
  } else {
    r.fail(node["level"], "log.level",
           fmt::format("must be trace, debug, info, warn or error, got '{}'", level));
  }
}

void readNode(const YamlReader& r, Config& config) {
  const YAML::Node& root = r.root();
  config.node = r.getString(root, "", "node", hostNodeName());
  if (!validName(config.node) || config.node.size() > kMaxNodeName) {
    r.fail(root["node"], "node",
           fmt::format("must be 1 to {} characters of a-z, 0-9, _ and -, got '{}'", kMaxNodeName,
                       config.node));
  }
  // Every box on one broker has its own client id and topics without a setting changed.
  config.mqtt.clientId = "vigil-" + config.node;
  config.mqtt.topicPrefix = "vigil/" + config.node;
}

void readCameras(const YamlReader& r, const std::filesystem::path& base, Config& config) {
  YAML::Node cameras = r.child(r.root(), "", "cameras");
  r.expectSequence(cameras, "cameras");
  std::set<std::string> names;
  for (std::size_t i = 0; i < cameras.size(); ++i) {
    r.collect([&] {
      std::string path = YamlReader::index("cameras", i);
      CameraConfig c = readCamera(r, cameras[i], path, base, config.capture, config.warnings);
      if (!c.name.empty() && !names.insert(c.name).second) {
        r.fail(cameras[i]["name"], YamlReader::join(path, "name"),
               fmt::format("'{}' is already the name of another camera", c.name));
      }
      config.cameras.push_back(std::move(c));
    });
  }
}

// Every error the reader can go on past is collected (unknown keys, each part's and each
// camera's independent fields), then all are thrown together in file order.
Config readConfig(YamlReader& r, const std::filesystem::path& file) {
  YamlErrors errors;
  r.collectInto(errors);
  const YAML::Node& root = r.root();
  r.rejectUnknownKeys(
      root, "",
      {"version", "node", "detector", "mqtt", "http", "capture", "history", "log", "cameras"});
  Config config;
  config.file = file;
  r.collect([&] { config.version = static_cast<int>(r.getInt(root, "", "version", 1, 1)); });
  const std::filesystem::path base = std::filesystem::absolute(file).parent_path();
  r.collect([&] { readNode(r, config); });
  r.collect([&] { readDetector(r, root, base, config.detector); });
  r.collect([&] { readMqtt(r, root, base, config.mqtt, config.warnings); });
  r.collect([&] { readHttp(r, root, base, config.http, config.warnings); });
  r.collect([&] { readCapture(r, root, config.capture); });
  r.collect([&] { readHistory(r, root, config.history); });
  r.collect([&] { readLog(r, root, config.log); });
  r.collect([&] { readCameras(r, base, config); });
  errors.throwIfAny();
  return config;
}

}  // namespace

}  // namespace yaml_config

std::string nodeNameOf(std::string_view hostName) {
  std::string name(hostName.substr(0, hostName.find('.')));  // the short name
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) c = '-';
  }
  if (name.size() > kMaxNodeName) name.resize(kMaxNodeName);
  return name.empty() ? "vigil" : name;
}

std::string hostNodeName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "vigil";
  return nodeNameOf(host);
}

Expected<Config> parseConfig(const std::string& text, const std::filesystem::path& file) {
  try {
    YamlReader r = YamlReader::fromString(text, file.string());
    return yaml_config::readConfig(r, file);
  } catch (const YamlError& e) {
    return makeError(ErrorCode::kInvalidData, "{}", e.what());
  }
}

Expected<Config> loadConfig(const std::filesystem::path& file) {
  try {
    YamlReader r = YamlReader::fromFile(file.string());
    return yaml_config::readConfig(r, file);
  } catch (const YamlError& e) {
    return makeError(std::filesystem::exists(file) ? ErrorCode::kInvalidData : ErrorCode::kNotFound,
                     "{}", e.what());
  }
}

}  // namespace vigil
