#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "tests/headless_chromium.h"
#include "tests/process.h"
#include "tests/wait.h"

namespace vigil::testing {

// Headless Chromium driven over its DevTools protocol (--remote-debugging-pipe: commands in on
// its descriptor 3, replies out on 4, each JSON message ended by a NUL), for what --dump-dom
// cannot do: a viewport of exactly the asked width (a headless window is at least 500 px wide,
// so --window-size=390 lays the page out at 500), the page's own script asked (an image's
// naturalWidth, document.scrollingElement.scrollWidth) while it runs, clicks, and a screenshot
// of that viewport. One page; every wait ends at a deadline.
class ChromiumDevTools {
 public:
  // Starts Chromium with its profile `profile` under `dir` and its log beside it.
  ChromiumDevTools(const std::filesystem::path& dir, const std::string& profile) {
    // Commands go over a socket pair, so that writing to a Chromium that died is an error
    // (MSG_NOSIGNAL), not a SIGPIPE that ends the test binary.
    int in[2];
    int out[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) return;
    if (pipe2(out, O_CLOEXEC) != 0) {
      close(in[0]);
      close(in[1]);
      return;
    }
    auto args = chromium(dir, profile);
    // The page's timers run in real time here: the test waits for what it wants to see.
    std::erase_if(args, [](const std::string& a) { return a.starts_with("--virtual-time"); });
    args.insert(args.end(), {"--remote-debugging-pipe", "about:blank"});
    process_ = std::make_unique<ChildProcess>(
        args, dir / (profile + ".log"), std::vector<std::pair<int, int>>{{in[1], 3}, {out[1], 4}});
    close(in[1]);
    close(out[1]);
    toChromium_ = in[0];
    fromChromium_ = out[0];
  }
  ~ChromiumDevTools() {
    if (process_ && process_->started()) {
      send("Browser.close", nlohmann::json::object(), false);
      if (!process_->wait(std::chrono::seconds(10))) process_->signal(SIGKILL);
    }
    if (toChromium_ >= 0) close(toChromium_);
    if (fromChromium_ >= 0) close(fromChromium_);
  }
  ChromiumDevTools(const ChromiumDevTools&) = delete;
  ChromiumDevTools& operator=(const ChromiumDevTools&) = delete;

  // Opens `url` in a new page whose viewport is `width` x `height` CSS pixels. False (and
  // error() says why) when Chromium does not.
  bool open(const std::string& url, int width, int height = 844) {
    auto target = send("Target.createTarget", {{"url", "about:blank"}});
    if (!target) return false;
    auto attached =
        send("Target.attachToTarget", {{"targetId", (*target)["targetId"]}, {"flatten", true}});
    if (!attached) return false;
    session_ = (*attached)["sessionId"];
    return send("Emulation.setDeviceMetricsOverride", {{"width", width},
                                                       {"height", height},
                                                       {"deviceScaleFactor", 1},
                                                       {"mobile", false}}) &&
           send("Page.navigate", {{"url", url}});
  }

  // The value of a JavaScript expression in the page (awaited when it is a promise); null when
  // it threw or Chromium did not answer.
  nlohmann::json evaluate(const std::string& expression) {
    auto result =
        send("Runtime.evaluate",
             {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}});
    if (!result || result->contains("exceptionDetails")) return nullptr;
    return (*result)["result"].value("value", nlohmann::json(nullptr));
  }
  // Polls the expression until it is true (true) or the deadline passes (false).
  bool waitFor(const std::string& expression, std::chrono::milliseconds limit = kDeadline) {
    return waitUntil([&] { return evaluate(expression) == true; }, limit, 100ms);
  }

  // The viewport as a PNG file at `path`.
  bool screenshot(const std::filesystem::path& path) {
    auto shot = send("Page.captureScreenshot", {{"format", "png"}});
    if (!shot) return false;
    std::ofstream(path, std::ios::binary) << base64Decoded((*shot)["data"].get<std::string>());
    return std::filesystem::file_size(path) > 0;
  }

  const std::string& error() const { return error_; }
  std::string log() const { return process_ ? process_->log() : ""; }

 private:
  // Sends a command (to the page once open() attached to it) and, if `reply`, waits for its
  // answer: its result, or nullopt with error_ set.
  std::optional<nlohmann::json> send(const std::string& method, const nlohmann::json& params,
                                     bool reply = true) {
    if (toChromium_ < 0) {
      error_ = "chromium did not start";
      return std::nullopt;
    }
    const int id = ++lastId_;
    nlohmann::json message = {{"id", id}, {"method", method}, {"params", params}};
    if (!session_.empty()) message["sessionId"] = session_;
    const std::string text = message.dump() + '\0';
    for (std::size_t sent = 0; sent < text.size();) {
      const ssize_t n = ::send(toChromium_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) {
        error_ = method + ": cannot write to chromium";
        return std::nullopt;
      }
      sent += static_cast<std::size_t>(n);
    }
    if (!reply) return nlohmann::json();
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    while (auto answer = nextMessage(deadline)) {
      if (answer->value("id", 0) != id) continue;  // an event, or an answer nobody waits for
      if (answer->contains("error")) {
        error_ = method + ": " + (*answer)["error"].dump();
        return std::nullopt;
      }
      return (*answer)["result"];
    }
    error_ = method + ": no answer from chromium";
    return std::nullopt;
  }

  // The next message Chromium writes, or nullopt at the deadline or the pipe's end.
  std::optional<nlohmann::json> nextMessage(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      if (auto end = received_.find('\0'); end != std::string::npos) {
        auto message = nlohmann::json::parse(received_.substr(0, end), nullptr, false);
        received_.erase(0, end + 1);
        return message;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fromChromium_, POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
        return std::nullopt;
      }
      char chunk[65536];
      const ssize_t n = read(fromChromium_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      received_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  static std::string base64Decoded(std::string_view text) {
    constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    unsigned bits = 0;
    int count = 0;
    for (char c : text) {
      const auto at = kAlphabet.find(c);
      if (at == std::string_view::npos) continue;  // '=' padding
      bits = (bits << 6) | static_cast<unsigned>(at);
      count += 6;
      if (count >= 8) {
        count -= 8;
        out.push_back(static_cast<char>((bits >> count) & 0xff));
      }
    }
    return out;
  }

  std::unique_ptr<ChildProcess> process_;
  int toChromium_ = -1;
  int fromChromium_ = -1;
  int lastId_ = 0;
  std::string session_;
  std::string received_;
  std::string error_;
};

}  // namespace vigil::testing
