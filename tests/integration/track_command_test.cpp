// `vigil track` and `vigil eval-tracks` on a real clip with ground truth, in-process.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "daemon/commands/line_commands.h"
#include "daemon/commands/track_commands.h"
#include "detector/track/mot_io.h"
#include "tests/eval_tracks_json.h"
#include "tests/log_capture.h"
#include "tests/model_paths.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using testing::modelDir;
using testing::videosDir;

nlohmann::json evalJson(const std::string& gt, const std::string& tracks, int stride) {
  EvalTracksOptions options;
  options.groundTruth = gt;
  options.tracks = tracks;
  options.stride = stride;
  return testing::evalTracksJson(options);
}

// At the daemon's 5 detections per second: only frames 1, 6, 11, ... are tracked and written,
// and the tracker keeps more identities than the IoU baseline (bench/tracking.md).
TEST(TrackCommandTest, FiveDetectionsPerSecondTrackEveryFifthFrameAndBeatTheBaseline) {
  VIGIL_REQUIRE_MODEL();
  const auto clip = videosDir() / "TUD-Campus.mp4";
  const auto gt = videosDir() / "TUD-Campus.person.json";
  if (!std::filesystem::exists(clip) || !std::filesystem::exists(gt)) {
    GTEST_SKIP() << clip << " or its ground truth absent";
  }
  TempDir dir;
  std::map<std::string, nlohmann::json> scores;
  for (const std::string tracker : {"bytetrack", "iou"}) {
    TrackCommandOptions options;
    options.detector.model = modelDir().string();
    options.video = clip.string();
    options.out = (dir.path() / (tracker + ".txt")).string();
    options.detectFps = 5;  // the clip is 25 fps: every 5th frame
    options.tracker = tracker;
    std::ostringstream out;
    ASSERT_EQ(runTrackCommand(options, out), 0);
    EXPECT_NE(out.str().find("15 frame(s) tracked (every 5"), std::string::npos) << out.str();
    auto tracks = readMotText(options.out);
    ASSERT_TRUE(tracks) << tracks.error().message;
    for (const auto& [frame, boxes] : *tracks) {
      EXPECT_EQ((frame - 1) % 5, 0) << "frame " << frame << " was not tracked";
    }
    scores[tracker] = evalJson(gt.string(), options.out, 5);
  }
  EXPECT_EQ(scores["bytetrack"]["frames"], 15);
  EXPECT_GT(scores["bytetrack"]["IDF1"].get<double>(), scores["iou"]["IDF1"].get<double>());
  EXPECT_GT(scores["bytetrack"]["MOTA"].get<double>(), scores["iou"]["MOTA"].get<double>());
}

// `vigil track --lines-out` counts what it writes to --out: `vigil eval-lines` on that file says
// the same counts, and the ground truth's are the clip's.
TEST(TrackCommandTest, LinesOutCountsWhatEvalLinesCountsOnTheSameTracks) {
  VIGIL_REQUIRE_MODEL();
  const auto clip = videosDir() / "TUD-Campus.mp4";
  const auto gt = videosDir() / "TUD-Campus.person.json";
  if (!std::filesystem::exists(clip) || !std::filesystem::exists(gt)) {
    GTEST_SKIP() << clip << " or its ground truth absent";
  }
  TempDir dir;
  TrackCommandOptions options;
  options.detector.model = modelDir().string();
  options.video = clip.string();
  options.out = (dir.path() / "tracks.txt").string();
  options.detectFps = 5;
  options.linesOut = (dir.path() / "lines.jsonl").string();
  options.lines = {"v320=320,0,320,480", "h390=0,390,640,390"};
  std::ostringstream out;
  ASSERT_EQ(runTrackCommand(options, out), 0);
  std::map<std::string, int> written;  // "line direction" -> crossings
  std::ifstream lines(options.linesOut);
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ((j["frame"].get<int>() - 1) % 5, 0) << line;
    EXPECT_EQ(j["box"].size(), 4U) << line;
    ++written[j["line"].get<std::string>() + " " + j["direction"].get<std::string>()];
  }
  EXPECT_GT(written.size(), 0U) << out.str();

  EvalLinesOptions eval;
  eval.groundTruth = gt.string();
  eval.tracks = options.out;
  eval.lines = options.lines;
  eval.stride = 5;
  eval.json = true;
  std::ostringstream report;
  ASSERT_EQ(runEvalLinesCommand(eval, report), 0);
  std::string last;
  std::istringstream reportLines(report.str());
  for (std::string line; std::getline(reportLines, line);) last = line;
  const auto scores = nlohmann::json::parse(last);
  EXPECT_EQ(scores["frames"], 15);
  for (const auto& l : scores["lines"]) {
    for (const std::string d : {"in", "out"}) {
      EXPECT_EQ(l[d]["tracks"].get<int>(), written[l["name"].get<std::string>() + " " + d])
          << l.dump();
    }
  }
  // The ground truth on frames 1, 6, 11, ...: over x = 320 (drawn downwards: `in` is walking
  // left) four persons walk right, and one walks left from 7 px right of it (on frame 1: inside
  // the band, so on no side yet, not counted); one walks down over y = 390.
  EXPECT_EQ(scores["lines"][0]["in"]["truth"], 0) << report.str();
  EXPECT_EQ(scores["lines"][0]["out"]["truth"], 4) << report.str();
  EXPECT_EQ(scores["lines"][1]["in"]["truth"], 1) << report.str();
  EXPECT_EQ(scores["truth"].get<int>(), 5) << report.str();
  EXPECT_LE(scores["abs_error"].get<int>(), scores["truth"].get<int>()) << report.str();
}

TEST(TrackCommandTest, ABadTracksFileIsRefusedWithItsLine) {
  const auto gt = videosDir() / "TUD-Campus.person.json";
  if (!std::filesystem::exists(gt)) GTEST_SKIP() << gt << " absent";
  TempDir dir;
  writeFile(dir.path() / "tracks.txt", "1,1,10,10,5,5,0.9,-1,-1,-1\n2,1,ten,10,5,5,0.9,-1,-1,-1\n");
  EvalTracksOptions options;
  options.groundTruth = gt.string();
  options.tracks = (dir.path() / "tracks.txt").string();
  std::ostringstream out;
  testing::LogCapture log("track");
  EXPECT_EQ(runEvalTracksCommand(options, out), 2);
  EXPECT_TRUE(out.str().empty()) << "no figures from a file that did not read";
  EXPECT_NE(log.text().find(options.tracks +
                            ":2: field 3 is 'ten', not a number (frame,id,x,y,w,h,score,...)"),
            std::string::npos)
      << log.text();
}

}  // namespace
}  // namespace vigil
