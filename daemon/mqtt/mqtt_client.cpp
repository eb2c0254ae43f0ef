#include "daemon/mqtt/mqtt_client.h"

#include <mqtt/async_client.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <utility>
#include <vector>

#include "daemon/base/log.h"
#include "daemon/base/thread_name.h"
#include "daemon/mqtt/paho_options.h"

namespace vigil {

namespace {

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

std::string pahoUri(std::string_view url) {
  if (url.starts_with(kPlainScheme)) return "tcp://" + std::string(url.substr(kPlainScheme.size()));
  if (url.starts_with(kTlsScheme)) return "ssl://" + std::string(url.substr(kTlsScheme.size()));
  return std::string(url);
}

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

}  // namespace

MqttClient::MqttClient(MqttSettings settings)
    : settings_(std::move(settings)),
      serverUri_(pahoUri(settings_.url)),
      window_(settings_.bufferMessages, settings_.qos, mutex_, wake_, connected_),
      problem_(settings_.url),
      backoff_(settings_.minRetry, settings_.maxRetry) {
  try {
    client_ = makePahoClient(serverUri_, settings_.clientId,
                             [this](const std::string& cause) { onConnectionLost(cause); });

    connectOptions_ = std::make_unique<mqtt::connect_options>(
        pahoConnectOptions(settings_, kConnectTimeout, DeliveryWindow::kMessages));
  } catch (const mqtt::exception& e) {
    client_.reset();
    problem_.keep("cannot create the MQTT client for " + settings_.url + ": " + e.what());
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

void MqttClient::subscribe(std::string topicFilter) { subscriptions_.add(std::move(topicFilter)); }

void MqttClient::setOnMessage(std::function<void(std::string topic, std::string payload)> handler) {
  subscriptions_.setHandler(std::move(handler));
}

std::string MqttClient::lastError() const {
  std::lock_guard lock(mutex_);
  return problem_.last();
}

void MqttClient::start() {
  {
    std::lock_guard lock(mutex_);
    if (started_ || stopped_) return;
    if (!client_) {
      logger("mqtt")->error("{}", problem_.last());
      return;
    }
    started_ = true;
    backoff_.startNow();
  }
  // Paho is never called with mutex_ held: its threads take their own lock, then mutex_ in
  // the window's delivery callback (ThreadSanitizer reports the opposite order as a potential
  // deadlock). Set once here, before any connect: Paho calls it from its own thread.
  subscriptions_.install(*client_);
  worker_ = std::thread([this] { run(); });
  nameThread(worker_, "mqtt");
}

void MqttClient::stop(std::string_view finalTopic, std::string_view finalPayload) {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
  }
  if (!finalTopic.empty()) window_.deliverFinal(finalTopic, finalPayload, kFinalDeliveryWait);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    stopped_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (client_) disconnectPaho(*client_, kDisconnectWait);
  if (connected_.exchange(false)) logger("mqtt")->info("disconnected from {}", settings_.url);
}

void MqttClient::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!connected_) {
      if (std::chrono::steady_clock::now() < backoff_.nextAttempt()) {
        wake_.wait_until(lock, backoff_.nextAttempt());
        continue;
      }
      lock.unlock();
      attemptConnect();
      lock.lock();
      continue;
    }
    if (window_.hasUnsent()) {
      sendWindow(lock);
      continue;
    }
    if (wake_.wait_for(lock, kAliveCheck) == std::cv_status::timeout) checkAlive(lock);
  }
}

bool MqttClient::stopRequested() const {
  std::lock_guard lock(mutex_);
  return stopping_;
}

void MqttClient::attemptConnect() {
  backoff_.countAttempt();
  try {
    // Bounded by the connect options' own timeout; a stop cancels the attempt.
    if (!awaitPahoToken(*client_->connect(*connectOptions_), std::nullopt,
                        [this] { return stopRequested(); })) {
      return;
    }
  } catch (const mqtt::exception& e) {
    std::lock_guard lock(mutex_);
    backoff_.failed();
    problem_.report(describe(e, isMqttTls(settings_.url)), true);
    return;
  }
  const auto await = [this](mqtt::token& token, std::optional<std::chrono::milliseconds> limit) {
    return awaitPahoToken(token, limit, [this] { return stopRequested(); });
  };
  if (!subscriptions_.renew(*client_, settings_.qos, kConnectTimeout, await)) return;
  std::function<void()> onConnected;
  {
    std::lock_guard lock(mutex_);
    connected_ = true;
    window_.resendFromFront();  // whatever the last connection did not get acknowledged
    backoff_.connected();
    logger("mqtt")->info("connected to {}{}", settings_.url,
                         window_.empty() ? "" : fmt::format("; sending {} queued", window_.size()));
    problem_.connected();
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
  const bool failed = !window_.handOver(lock, *client_);
  if (failed) checkAlive(lock);
  // Lost connection (its handler resends) or Paho's window full.
  if (failed && connected_) window_.resendAfterPause(lock);
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
    window_.resendFromFront();
    backoff_.lost();
    problem_.report(cause.empty() ? "connection lost" : "connection lost (" + cause + ")", true);
  }
  wake_.notify_all();
}

}  // namespace vigil
