// The status page's history view (#history) in headless Chromium, driven over DevTools, against
// the real daemon on a real clip with people: its events as thumbnails whose pictures load, their
// times with the date, the filters, the full picture, an empty day, and no sideways scrolling on
// a phone (390 px) while the grid fills the width at 1280 px.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "tests/chromium_devtools.h"
#include "tests/http_get.h"
#include "tests/model_paths.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using nlohmann::json;
using testing::ChromiumDevTools;

std::filesystem::path historyClip() { return testing::videosDir() / "TUD-Campus.mp4"; }

// How the page writes an event's start, in this process's time zone (Chromium's too): "7 Dec
// 11:40:01", with the year when it is not this one.
std::string pageTime(const std::string& iso) {
  std::tm utc{};
  strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &utc);
  const std::time_t t = timegm(&utc);
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  std::tm today{};
  localtime_r(&t, &local);
  localtime_r(&now, &today);
  char text[64];
  std::strftime(text, sizeof text,
                local.tm_year == today.tm_year ? "%b %H:%M:%S" : "%b %Y %H:%M:%S", &local);
  return std::to_string(local.tm_mday) + " " + text;
}

// The first event card whose thumbnail loaded: its id and its time line.
constexpr const char* kLoadedCard = R"js(
  (() => {
    const img = [...document.querySelectorAll("#history-events li img")]
        .find(i => i.complete && i.naturalWidth > 0);
    if (!img) return null;
    const li = img.closest("li");
    return {id: li.dataset.event, time: li.querySelector(".time").textContent};
  })())js";

// How many columns the thumbnails take (their distinct left edges).
constexpr const char* kColumns = R"js(
  new Set([...document.querySelectorAll("#history-events li")]
      .map(li => Math.round(li.getBoundingClientRect().left))).size)js";

class HistoryPageTest : public ::testing::Test {
 protected:
  // The history view at `width` px: a thumbnail that loaded, its time with the date, nothing
  // wider than the viewport; a screenshot into the test's directory and beside the binary.
  void checkView(const std::string& url, int width, ChromiumDevTools& chromium) {
    ASSERT_TRUE(chromium.open(url + "#history", width)) << chromium.error() << chromium.log();
    ASSERT_TRUE(chromium.waitFor(std::string(kLoadedCard) + " !== null"))
        << chromium.evaluate("document.getElementById('history').innerHTML");
    const json card = chromium.evaluate(kLoadedCard);
    const json event = eventById(card["id"]);
    ASSERT_TRUE(event.is_object()) << card;
    EXPECT_TRUE(card["time"].get<std::string>().starts_with(pageTime(event["start"])))
        << card << " vs " << event["start"];
    EXPECT_EQ(chromium.evaluate("innerWidth"), width);
    const json scrollWidth = chromium.evaluate("document.scrollingElement.scrollWidth");
    ASSERT_TRUE(scrollWidth.is_number());
    EXPECT_LE(scrollWidth.get<int>(), width) << "no sideways scrolling";
    EXPECT_EQ(chromium.evaluate("document.getElementById('history-state').hidden"), true)
        << chromium.evaluate("document.getElementById('history-state').textContent");
    const int columns = chromium.evaluate(kColumns).get<int>();
    // The view is one day of thumbnails; the cards fill the width.
    if (width <= 400) {
      EXPECT_GE(columns, 1);
      EXPECT_LE(columns, 2);
    } else if (chromium.evaluate("document.querySelectorAll('#history-events li').length") >= 4) {
      EXPECT_GE(columns, 4);
    }
    const auto png = dir_.path() / ("history-" + std::to_string(width) + ".png");
    ASSERT_TRUE(chromium.screenshot(png)) << chromium.error();
    const cv::Mat image = cv::imread(png.string());
    EXPECT_EQ(image.cols, width);
    testing::keepScreenshot(png);  // build/tests/history-<width>.png
  }

  json eventById(const std::string& id) {
    auto reply = testing::httpGet(vigil_->port(), "/api/events");
    const json events = reply ? json::parse(reply->body, nullptr, false) : json();
    for (const json& e : events.is_array() ? events : json::array()) {
      if (e["id"] == id) return e;
    }
    return nullptr;
  }

  TempDir dir_;
  std::unique_ptr<testing::VigilDaemon> vigil_;
};

TEST_F(HistoryPageTest, ShowsTheDaysEventsAsThumbnailsAt1280And390) {
  VIGIL_REQUIRE_MODEL();
  ASSERT_TRUE(std::filesystem::exists(historyClip())) << "clip absent: " << historyClip();
  ASSERT_EQ(access(testing::kChromium, X_OK), 0)
      << "chromium is not installed (scripts/install-deps.sh)";
  vigil_ = std::make_unique<testing::VigilDaemon>(
      dir_.path(),
      "version: 1\ndetector:\n  model: " + testing::modelDir().string() +
          "\nhttp:\n  listen: 127.0.0.1:0\ncameras:\n"
          "  - name: campus\n    source: 'file:" +
          historyClip().string() +
          "'\n    loop: true\n    detect_fps: 4\n"
          "    zones: [{name: walkway, polygon: [[0, 0.5], [1, 0.5], [1, 1], [0, 1]]}]\n",
      std::vector<std::string>{"--state-dir", (dir_.path() / "state").string()});
  ASSERT_NE(vigil_->port(), 0) << vigil_->log();
  // An event with its snapshot to show.
  ASSERT_TRUE(testing::waitUntil([&] {
    auto reply = testing::httpGet(vigil_->port(), "/api/events");
    const json events = reply ? json::parse(reply->body, nullptr, false) : json();
    return events.is_array() && !events.empty() && events.back()["snapshot"].is_string();
  })) << vigil_->log();
  const std::string url = "http://127.0.0.1:" + std::to_string(vigil_->port()) + "/";

  {
    ChromiumDevTools chromium(dir_.path(), "profile-history-390");
    checkView(url, 390, chromium);
  }
  if (HasFatalFailure()) return;
  ChromiumDevTools chromium(dir_.path(), "profile-history-1280");
  checkView(url, 1280, chromium);
  if (HasFatalFailure()) return;

  // The cameras of /api/status in the filter; a camera chosen, its zones.
  EXPECT_TRUE(chromium.waitFor(
      "[...document.getElementById('history-camera').options].some(o => o.value === 'campus')"));
  chromium.evaluate(
      "(() => { const s = document.getElementById('history-camera'); s.value = 'campus';"
      " s.dispatchEvent(new Event('change')); })()");
  EXPECT_TRUE(chromium.waitFor(
      "[...document.getElementById('history-zone').options].some(o => o.value === 'walkway')"));
  EXPECT_TRUE(chromium.waitFor(std::string(kLoadedCard) + " !== null"));

  // A click on a thumbnail shows the full picture.
  chromium.evaluate("document.querySelector('#history-events a.shot').click()");
  EXPECT_TRUE(
      chromium.waitFor("!document.getElementById('viewer').hidden &&"
                       " document.querySelector('#viewer img').naturalWidth > 0"));
  chromium.evaluate("document.getElementById('viewer').click()");

  // The day before has none (the daemon started minutes ago), and says so with its date.
  chromium.evaluate("document.getElementById('history-prev').click()");
  EXPECT_TRUE(
      chromium.waitFor("!document.getElementById('history-state').hidden &&"
                       " /^no events on \\d{1,2} [A-Z][a-z]{2}/.test("
                       "document.getElementById('history-state').textContent) &&"
                       " document.querySelectorAll('#history-events li').length === 0"))
      << chromium.evaluate("document.getElementById('history-state').textContent");
  chromium.evaluate("document.getElementById('history-today').click()");
  EXPECT_TRUE(chromium.waitFor(std::string(kLoadedCard) + " !== null"));
  EXPECT_EQ(chromium.evaluate("document.getElementById('history-next').disabled"), true)
      << "no day after today";
  EXPECT_TRUE(vigil_->stop().status.has_value());
}

}  // namespace
}  // namespace vigil
