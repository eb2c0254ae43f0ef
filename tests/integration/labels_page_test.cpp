// The status page's labels over the live picture in headless Chromium, driven over DevTools,
// against the real daemon on a real clip with counting lines near the picture's edges: at 1280
// and 390 px every line label lies inside the picture and over no other, at 1280 px the two
// cameras' cards fill the page's width, and the legend says what the borders and boxes mean.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "tests/chromium_devtools.h"
#include "tests/model_paths.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using nlohmann::json;
using testing::ChromiumDevTools;

std::filesystem::path labelsClip() { return testing::videosDir() / "TUD-Campus.mp4"; }

// The campus card's picture and its line labels (CSS pixels: left, top, right, bottom), once
// a picture arrived and both lines' labels are there.
constexpr const char* kLineLabels = R"js(
  (() => {
    const el = document.querySelector('section[data-camera="campus"]');
    if (!el || Number(el.dataset.frames || 0) < 1) return null;
    const box = r => [r.left, r.top, r.right, r.bottom];
    const tags = [...el.querySelectorAll(".tags .tag.line")];
    if (tags.length !== 4) return null;
    return {picture: box(el.querySelector(".view img").getBoundingClientRect()),
            labels: tags.map(t => ({text: t.textContent, box: box(t.getBoundingClientRect()),
                                    font: parseFloat(getComputedStyle(t).fontSize)}))};
  })())js";

// How much of the page's width the cards span together.
constexpr const char* kCardsSpan = R"js(
  (() => {
    const r = [...document.querySelectorAll("#cameras section.camera")]
        .map(s => s.getBoundingClientRect());
    return (Math.max(...r.map(x => x.right)) - Math.min(...r.map(x => x.left))) / innerWidth;
  })())js";

void checkLabelsView(const std::string& url, int width, ChromiumDevTools& chromium,
                     const std::filesystem::path& dir) {
  ASSERT_TRUE(chromium.open(url, width)) << chromium.error() << chromium.log();
  ASSERT_TRUE(chromium.waitFor(std::string(kLineLabels) + " !== null"))
      << chromium.evaluate("document.getElementById('cameras').innerHTML");
  // The labels are placed after the picture's size settles: wait until they are inside it
  // (a deadline), then say what they are when they are not.
  const std::string allInside = std::string("(() => { const v = ") + kLineLabels +
                                "; return v !== null && v.labels.every(l =>"
                                " l.box[0] >= v.picture[0] - 0.5 && l.box[1] >= v.picture[1] - 0.5"
                                " && l.box[2] <= v.picture[2] + 0.5 &&"
                                " l.box[3] <= v.picture[3] + 0.5); })()";
  EXPECT_TRUE(chromium.waitFor(allInside)) << chromium.evaluate(kLineLabels);
  // Nor over each other.
  EXPECT_EQ(chromium.evaluate(std::string("(() => { const l = ") + kLineLabels +
                              ".labels.map(x => x.box); return l.every((a, i) => l.every((b, j) =>"
                              " j <= i || a[2] <= b[0] || b[2] <= a[0] || a[3] <= b[1] ||"
                              " b[3] <= a[1])); })()"),
            true)
      << chromium.evaluate(kLineLabels);
  const json labels = chromium.evaluate(kLineLabels);
  ASSERT_TRUE(labels.is_object());
  bool counts = false;
  for (const json& l : labels["labels"]) {
    EXPECT_GE(l["font"].get<double>(), 12) << l << " readable";
    if (l["text"].get<std::string>().starts_with("middle ")) counts = true;
  }
  EXPECT_TRUE(counts) << labels;
  EXPECT_EQ(chromium.evaluate("document.scrollingElement.scrollWidth <= innerWidth"), true)
      << "no sideways scrolling";
  if (width >= 1280) {
    const json span = chromium.evaluate(kCardsSpan);
    ASSERT_TRUE(span.is_number());
    EXPECT_GE(span.get<double>(), 0.9) << "the cards fill the page's width";
  }
  // The legend says what the orange border means, in at most two rows even at 390 px (it
  // took five), within the page's width.
  EXPECT_EQ(chromium.evaluate("document.querySelector('#legend [title*=\\'orange border\\']')"
                              ".textContent.trim() === 'person present'"),
            true);
  const json legend = chromium.evaluate(
      "(() => { const s = [...document.querySelectorAll('#legend > span')]"
      ".map(e => e.getBoundingClientRect());"
      " return {rows: new Set(s.map(r => Math.round(r.top))).size,"
      " right: Math.max(...s.map(r => r.right))}; })()");
  EXPECT_LE(legend["rows"].get<int>(), 2) << legend << " at " << width << " px";
  EXPECT_LE(legend["right"].get<double>(), width) << legend;
  const std::string name = "labels-" + std::to_string(width) + ".png";
  ASSERT_TRUE(chromium.screenshot(dir / name)) << chromium.error();
  EXPECT_EQ(cv::imread((dir / name).string()).cols, width);
  testing::keepScreenshot(dir / name);  // build/tests/labels-<width>.png
}

TEST(LabelsPageTest, LineLabelsStayInsideThePictureAt1280And390) {
  VIGIL_REQUIRE_MODEL();
  ASSERT_TRUE(std::filesystem::exists(labelsClip())) << "clip absent: " << labelsClip();
  ASSERT_EQ(access(testing::kChromium, X_OK), 0)
      << "chromium is not installed (scripts/install-deps.sh)";
  TempDir dir;
  // A line ending at the right edge (its label used to run off it) and one along the left edge
  // (its `out` side is outside the picture); a second camera beside it.
  testing::VigilDaemon vigil(dir.path(),
                             "version: 1\ndetector:\n  model: " + testing::modelDir().string() +
                                 "\nhttp:\n  listen: 127.0.0.1:0\ncameras:\n"
                                 "  - name: campus\n    source: 'file:" +
                                 labelsClip().string() +
                                 "'\n    loop: true\n    detect_fps: 2\n"
                                 "    lines:\n"
                                 "      - {name: middle, points: [[0.7, 0.6], [1, 0.55]],"
                                 " names: {in: eastbound, out: westbound}}\n"
                                 "      - {name: edge, points: [[0.01, 0.05], [0.01, 0.95]],"
                                 " names: {in: leaving, out: entering}}\n"
                                 "  - name: yard\n    source: 'file:" +
                                 labelsClip().string() + "'\n    loop: true\n    detect_fps: 1\n");
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  ASSERT_TRUE(vigil.waitDetected("campus", 0)) << vigil.log();
  const std::string url = "http://127.0.0.1:" + std::to_string(vigil.port()) + "/";
  {
    ChromiumDevTools chromium(dir.path(), "profile-labels-1280");
    checkLabelsView(url, 1280, chromium, dir.path());
  }
  if (HasFatalFailure()) return;
  ChromiumDevTools chromium(dir.path(), "profile-labels-390");
  checkLabelsView(url, 390, chromium, dir.path());
  EXPECT_TRUE(vigil.stop().status.has_value());
}

}  // namespace
}  // namespace vigil
