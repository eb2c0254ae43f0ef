#include "daemon/mqtt/mqtt_client.h"

#include <mqtt/async_client.h>
#include <pthread.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <utility>
#include <vector>

#include "daemon/base/log.h"

namespace vigil {

namespace {

// Messages handed to Paho and not yet acknowledged. Small: the broker is near, and the
// window bounds how many may be sent twice after a lost connection.
constexpr std::size_t kWindow = 10;
constexpr auto kConnectTimeout = std::chrono::seconds(10);
// stop() is part of the daemon's 2 s stop promise: the final message gets a second to be
// acknowledged (a broker nearby takes milliseconds), the disconnect half a second; a broker
// that answers nothing costs at most that.
constexpr auto kFinalDeliveryWait = std::chrono::seconds(1);
constexpr auto kDisconnectWait = std::chrono::milliseconds(500);
// How often an idle connection is checked: Paho's connection-lost callback can race with the
// end of a connect and be missed.
constexpr auto kAliveCheck = std::chrono::seconds(1);

constexpr std::string_view kPlainScheme = "mqtt://";
constexpr std::string_view kTlsScheme = "mqtts://";

bool isTls(std::string_view url) { return url.starts_with(kTlsScheme); }

std::string pahoUri(std::string_view url) {
  if (url.starts_with(kPlainScheme)) return "tcp://" + std::string(url.substr(kPlainScheme.size()));
  if (url.starts_with(kTlsScheme)) return "ssl://" + std::string(url.substr(kTlsScheme.size()));
  return std::string(url);
}

// Forwards Paho's per-message completion to the client.
class DeliveryListener : public mqtt::iaction_listener {
 public:
  explicit DeliveryListener(std::function<void(const mqtt::token&, bool)> done)
      : done_(std::move(done)) {}

 private:
  void on_success(const mqtt::token& token) override { done_(token, true); }
  void on_failure(const mqtt::token& token) override { done_(token, false); }

  std::function<void(const mqtt::token&, bool)> done_;
};

// A reason a person can act on. Paho reports MQTT 3.1.1 CONNACK refusals as return codes
// 1..5 and everything below the protocol (DNS, TCP, TLS) as a generic -1 failure.
std::string describe(const mqtt::exception& e, bool tls) {
  switch (e.get_return_code()) {
    case 1:
      return "connection refused: unacceptable protocol version";
    case 2:
      return "connection refused: client id rejected";
    case 3:
      return "connection refused: server unavailable";
    case 4:
    case 5:
      return "not authorized (bad user name or password)";
    default:
      break;
  }
  if (tls) {
    // Paho does not say which: an unknown CA, a host name not in the certificate, a missing
    // client certificate, or no listener at all.
    return "cannot connect: TCP or TLS handshake failed (check the broker address, mqtt.ca_file "
           "and the client certificate) (" +
           std::string(e.what()) + ")";
  }
  return "cannot connect (" + std::string(e.what()) + ")";
}

// After the scheme: host[:port] or [v6 address][:port]; a colon must be followed by a port
// between 1 and 65535.
Expected<void> checkMqttAuthority(std::string_view authority, const std::string& url) {
  std::string_view host = authority;
  std::string_view port;
  if (auto close = authority.rfind(']'); authority.starts_with('[')) {
    if (close == std::string_view::npos) {
      return makeError(ErrorCode::kInvalidArgument, "mqtt.url: unbalanced '[' in '{}'", url);
    }
    host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') {
        return makeError(ErrorCode::kInvalidArgument, "mqtt.url: bad port in '{}'", url);
      }
      port = authority.substr(close + 2);
    }
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.url: no host in '{}'", url);
  }
  if (authority.find(':') != std::string_view::npos || !port.empty()) {
    int value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 1 ||
        value > 65535) {
      return makeError(ErrorCode::kInvalidArgument,
                       "mqtt.url: port must be between 1 and 65535 in '{}'", url);
    }
  }
  return {};
}

// mqtt://host[:port] or mqtts://host[:port], without credentials or a path.
Expected<void> checkMqttUrl(const std::string& url) {
  const bool tls = isTls(url);
  if (!tls && !url.starts_with(kPlainScheme)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "mqtt.url: unsupported scheme in '{}'; use mqtt://host:port or "
                     "mqtts://host:port",
                     url);
  }
  std::string_view authority =
      std::string_view(url).substr(tls ? kTlsScheme.size() : kPlainScheme.size());
  if (authority.find('@') != std::string_view::npos) {
    // Also keeps credentials out of every log line that names the URL.
    return makeError(ErrorCode::kInvalidArgument,
                     "mqtt.url: credentials in the URL are not supported; use "
                     "mqtt.username and mqtt.password_file");
  }
  if (authority.find('/') != std::string_view::npos) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.url: '{}' must not have a path", url);
  }
  return checkMqttAuthority(authority, url);
}

// The session's settings: client id, user name with password, QoS and the client's bounds.
Expected<void> checkMqttSession(const MqttSettings& s) {
  if (s.clientId.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.client_id: must not be empty");
  }
  if (!s.password.empty() && s.username.empty()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "mqtt.password: set, but mqtt.username is empty (MQTT 3.1.1 forbids a "
                     "password without a user name)");
  }
  if (s.qos < 0 || s.qos > 2) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.qos: must be 0, 1 or 2, got {}", s.qos);
  }
  if (s.keepAlive.count() < 0) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.keepalive: must not be negative");
  }
  if (s.bufferMessages == 0) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.buffer_messages: must be at least 1");
  }
  if (s.minRetry.count() <= 0 || s.maxRetry < s.minRetry) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt retry: need 0 < min ({} ms) <= max ({} ms)",
                     s.minRetry.count(), s.maxRetry.count());
  }
  return {};
}

// The CA, certificate and key files: only with mqtts://, each an existing file, a key only
// with its certificate.
Expected<void> checkMqttTlsFiles(const MqttSettings& s) {
  const std::pair<const char*, const std::string*> files[] = {
      {"mqtt.ca_file", &s.caFile}, {"mqtt.cert_file", &s.certFile}, {"mqtt.key_file", &s.keyFile}};
  for (const auto& [key, path] : files) {
    if (path->empty()) continue;
    if (!isTls(s.url)) {
      return makeError(ErrorCode::kInvalidArgument,
                       "{}: set, but mqtt.url '{}' is not TLS; use mqtts://", key, s.url);
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*path, ec)) {
      return makeError(ErrorCode::kNotFound, "{}: no such file '{}'", key, *path);
    }
  }
  if (!s.keyFile.empty() && s.certFile.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.key_file: set without mqtt.cert_file");
  }
  return {};
}

}  // namespace

Expected<void> MqttClient::validate(const MqttSettings& s) {
  if (auto url = checkMqttUrl(s.url); !url) return url;
  if (auto session = checkMqttSession(s); !session) return session;
  return checkMqttTlsFiles(s);
}

MqttClient::MqttClient(MqttSettings settings)
    : settings_(std::move(settings)), serverUri_(pahoUri(settings_.url)) {
  try {
    deliveryListener_ = std::make_unique<DeliveryListener>(
        [this](const mqtt::token& token, bool success) { onDelivered(token, success); });
    // No Paho persistence and no sending while disconnected: the queue here is the only
    // buffer, so it alone is bounded, ordered and counted.
    mqtt::create_options createOptions(MQTTVERSION_3_1_1);
    createOptions.set_send_while_disconnected(false);
    client_ = std::make_unique<mqtt::async_client>(serverUri_, settings_.clientId, createOptions,
                                                   nullptr);
    client_->set_connection_lost_handler(
        [this](const std::string& cause) { onConnectionLost(cause); });

    mqtt::connect_options_builder builder;
    builder.mqtt_version(MQTTVERSION_3_1_1)
        .clean_session(true)
        .keep_alive_interval(settings_.keepAlive)
        .connect_timeout(kConnectTimeout)
        .automatic_reconnect(false)  // reconnects here: Paho's do not report failures
        .max_inflight(static_cast<int>(kWindow));
    if (!settings_.username.empty()) builder.user_name(settings_.username);
    if (!settings_.password.empty()) builder.password(settings_.password);
    if (!settings_.willTopic.empty()) {
      builder.will(
          mqtt::will_options(settings_.willTopic, settings_.willPayload, settings_.qos, true));
    }
    if (isTls(settings_.url)) {
      mqtt::ssl_options_builder ssl;
      // No ssl error_handler: Paho C++ 1.2 keeps a pointer to the ssl_options copy that
      // connect() takes by value, and calls the handler through it after it is gone.
      ssl.enable_server_cert_auth(true).verify(true);
      if (!settings_.caFile.empty()) ssl.trust_store(settings_.caFile);
      if (!settings_.certFile.empty()) ssl.key_store(settings_.certFile);
      if (!settings_.keyFile.empty()) ssl.private_key(settings_.keyFile);
      builder.ssl(ssl.finalize());
    }
    connectOptions_ = std::make_unique<mqtt::connect_options>(builder.finalize());
  } catch (const mqtt::exception& e) {
    client_.reset();
    lastError_ = "cannot create the MQTT client for " + settings_.url + ": " + e.what();
  }
}

MqttClient::~MqttClient() {
  stop("", "");
  // Destroy Paho's client first: its threads call back into the members below.
  client_.reset();
}

void MqttClient::setOnConnected(std::function<void()> callback) {
  std::lock_guard lock(mutex_);
  onConnected_ = std::move(callback);
}

void MqttClient::subscribe(std::string topicFilter) {
  std::lock_guard lock(mutex_);
  subscriptions_.push_back(std::move(topicFilter));
}

void MqttClient::setOnMessage(std::function<void(std::string topic, std::string payload)> handler) {
  std::lock_guard lock(mutex_);
  onMessage_ = std::move(handler);
}

std::string MqttClient::lastError() const {
  std::lock_guard lock(mutex_);
  return lastError_;
}

void MqttClient::start() {
  std::function<void(std::string topic, std::string payload)> handler;
  {
    std::lock_guard lock(mutex_);
    if (started_ || stopped_) return;
    if (!client_) {
      logger("mqtt")->error("{}", lastError_);
      return;
    }
    started_ = true;
    handler = onMessage_;
    nextAttempt_ = std::chrono::steady_clock::now();
  }
  // Paho is never called with mutex_ held: its threads take their own lock, then mutex_ in
  // onDelivered (ThreadSanitizer reports the opposite order as a potential deadlock).
  if (handler) {
    // Set once here, before any connect: Paho calls it from its own thread.
    client_->set_message_callback([handler](mqtt::const_message_ptr message) {
      if (!message) return;
      try {
        handler(message->get_topic(), message->to_string());
      } catch (const std::exception& e) {
        logger("mqtt")->error("handling a message on {} failed: {}", message->get_topic(),
                              e.what());
      }
    });
  }
  worker_ = std::thread([this] { run(); });
  pthread_setname_np(worker_.native_handle(), "mqtt");
}

void MqttClient::stop(std::string_view finalTopic, std::string_view finalPayload) {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
  }
  if (!finalTopic.empty() && connected_) {
    publish(std::string(finalTopic), std::string(finalPayload), true);
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, kFinalDeliveryWait, [this] { return queue_.empty() || !connected_; });
    if (!queue_.empty()) {
      logger("mqtt")->warn("stopping with {} message(s) not delivered (final '{}' included)",
                           queue_.size(), finalTopic);
    }
  }
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    stopped_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (client_) {
    try {
      // Disconnect even when not connected: it cancels a connect still in progress.
      client_->disconnect(std::chrono::milliseconds(250))->wait_for(kDisconnectWait);
    } catch (const mqtt::exception&) {
      // Not connected: nothing to close.
    }
  }
  if (connected_.exchange(false)) logger("mqtt")->info("disconnected from {}", settings_.url);
}

void MqttClient::publish(std::string topic, std::string payload, bool retained) {
  std::shared_ptr<const mqtt::message> message;
  try {
    message = mqtt::message::create(std::move(topic), std::move(payload), settings_.qos, retained);
  } catch (const mqtt::exception& e) {
    logger("mqtt")->error("cannot create a message: {}", e.what());
    dropped_++;
    return;
  }
  {
    std::lock_guard lock(mutex_);
    auto unsent = queue_.begin() + static_cast<std::ptrdiff_t>(sent_);
    if (retained) {
      // A broker keeps only the newest retained payload per topic; so does the queue.
      auto same = std::find_if(unsent, queue_.end(), [&](const Entry& e) {
        return e.retained && e.message->get_topic() == message->get_topic();
      });
      if (same != queue_.end()) queue_.erase(same);
    }
    if (queue_.size() >= settings_.bufferMessages) {
      unsent = queue_.begin() + static_cast<std::ptrdiff_t>(sent_);
      auto victim = std::find_if(unsent, queue_.end(), [](const Entry& e) { return !e.retained; });
      // Only retained messages (of distinct topics) left: drop the oldest of them.
      if (victim == queue_.end()) victim = unsent;
      if (!dropLogged_) {
        logger("mqtt")->warn("offline buffer full ({} messages); dropping the oldest",
                             settings_.bufferMessages);
        dropLogged_ = true;
      }
      dropped_++;
      if (victim == queue_.end()) {
        // Everything queued is already with Paho: the new message is the one to drop.
        return;
      }
      queue_.erase(victim);
    }
    queue_.push_back(Entry{std::move(message), retained, false});
    bufferedNow_ = queue_.size();
  }
  wake_.notify_all();
}

void MqttClient::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!connected_) {
      if (std::chrono::steady_clock::now() < nextAttempt_) {
        wake_.wait_until(lock, nextAttempt_);
        continue;
      }
      lock.unlock();
      attemptConnect();
      lock.lock();
      continue;
    }
    if (sent_ < queue_.size() && sent_ < kWindow) {
      sendWindow(lock);
      continue;
    }
    if (wake_.wait_for(lock, kAliveCheck) == std::cv_status::timeout) checkAlive(lock);
  }
}

bool MqttClient::awaitUnlessStopping(mqtt::token& token,
                                     std::optional<std::chrono::milliseconds> limit) {
  const auto start = std::chrono::steady_clock::now();
  while (!token.wait_for(std::chrono::milliseconds(100)) &&
         (!limit || std::chrono::steady_clock::now() - start < *limit)) {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
  }
  return true;
}

void MqttClient::attemptConnect() {
  if (++attempts_ > 1) reconnects_++;
  try {
    // Bounded by the connect options' own timeout; a stop cancels the attempt.
    if (!awaitUnlessStopping(*client_->connect(*connectOptions_), std::nullopt)) return;
  } catch (const mqtt::exception& e) {
    std::lock_guard lock(mutex_);
    backoff_ =
        backoff_.count() == 0 ? settings_.minRetry : std::min(2 * backoff_, settings_.maxRetry);
    nextAttempt_ = std::chrono::steady_clock::now() + backoff_;
    setError(describe(e, isTls(settings_.url)), true);
    return;
  }
  std::function<void()> onConnected;
  std::vector<std::string> subscriptions;
  {
    std::lock_guard lock(mutex_);
    subscriptions = subscriptions_;
  }
  // Clean sessions: the broker forgets subscriptions with the connection, so every connect
  // subscribes again.
  for (const std::string& filter : subscriptions) {
    try {
      // A broker that never answers SUBACK holds this for kConnectTimeout, a stop not at all.
      if (!awaitUnlessStopping(*client_->subscribe(filter, settings_.qos), kConnectTimeout)) return;
    } catch (const mqtt::exception& e) {
      logger("mqtt")->warn("cannot subscribe to {}: {}", filter, e.what());
    }
  }
  {
    std::lock_guard lock(mutex_);
    connected_ = true;
    sent_ = 0;  // resend from the front whatever the last connection did not get acknowledged
    backoff_ = std::chrono::milliseconds(0);
    logger("mqtt")->info("connected to {}{}", settings_.url,
                         queue_.empty() ? "" : fmt::format("; sending {} queued", queue_.size()));
    lastLogged_.clear();
    onConnected = onConnected_;
  }
  wake_.notify_all();
  if (onConnected) {
    try {
      onConnected();
    } catch (const std::exception& e) {
      logger("mqtt")->error("on-connected callback failed: {}", e.what());
    }
  }
}

void MqttClient::sendWindow(std::unique_lock<std::mutex>& lock) {
  std::vector<std::shared_ptr<const mqtt::message>> batch;
  std::size_t end = std::min(queue_.size(), kWindow);
  for (std::size_t i = sent_; i < end; ++i) {
    if (!queue_[i].acked) batch.push_back(queue_[i].message);
  }
  sent_ = end;
  // Paho is never called with mutex_ held: its threads take mutex_ in callbacks.
  lock.unlock();
  bool failed = false;
  for (const auto& message : batch) {
    try {
      client_->publish(message, nullptr, *deliveryListener_);
    } catch (const mqtt::exception& e) {
      logger("mqtt")->debug("publish to {} failed: {}", message->get_topic(), e.what());
      failed = true;
      break;
    }
  }
  lock.lock();
  if (failed) checkAlive(lock);
  if (failed && connected_) {
    // Lost connection (its handler resends) or Paho's window full: resend from the front
    // after a short pause; duplicates are within QoS 1 rules.
    sent_ = 0;
    wake_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

void MqttClient::onDelivered(const mqtt::token& token, bool success) {
  const auto* delivery = dynamic_cast<const mqtt::delivery_token*>(&token);
  if (delivery == nullptr) return;
  auto message = delivery->get_message();
  {
    std::lock_guard lock(mutex_);
    if (success) {
      auto it = std::find_if(queue_.begin(), queue_.end(),
                             [&](const Entry& e) { return e.message == message; });
      if (it != queue_.end()) it->acked = true;
      popAcked();
    } else if (connected_) {
      sent_ = 0;
    }
  }
  wake_.notify_all();
}

void MqttClient::popAcked() {
  while (!queue_.empty() && queue_.front().acked) {
    queue_.pop_front();
    published_++;
    if (sent_ > 0) sent_--;
  }
  bufferedNow_ = queue_.size();
  if (queue_.empty()) dropLogged_ = false;
}

void MqttClient::checkAlive(std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  bool alive = client_->is_connected();
  lock.lock();
  if (!alive && connected_) {
    lock.unlock();
    onConnectionLost("");
    lock.lock();
  }
}

void MqttClient::onConnectionLost(const std::string& cause) {
  {
    std::lock_guard lock(mutex_);
    if (!connected_) return;
    connected_ = false;
    sent_ = 0;
    backoff_ = settings_.minRetry;
    nextAttempt_ = std::chrono::steady_clock::now() + backoff_;
    setError(cause.empty() ? "connection lost" : "connection lost (" + cause + ")", true);
  }
  wake_.notify_all();
}

void MqttClient::setError(const std::string& reason, bool retrying) {
  lastError_ = reason;
  if (reason == lastLogged_) return;
  lastLogged_ = reason;
  logger("mqtt")->warn("{} for {}{}", reason, settings_.url, retrying ? "; retrying" : "");
}

}  // namespace vigil
