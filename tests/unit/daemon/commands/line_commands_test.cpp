#include "daemon/commands/line_commands.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

// Ground truth of one person (track 7) whose feet walk down x = 51 (MOT pixels, 1-based), from
// y = 61 to y = 141 in steps of 20 over frames 1..5.
void writeTruth(const std::filesystem::path& file) {
  nlohmann::json images = nlohmann::json::array();
  nlohmann::json annotations = nlohmann::json::array();
  for (int f = 1; f <= 5; ++f) {
    images.push_back({{"id", f}, {"frame_index", f}, {"width", 200}, {"height", 200}});
    annotations.push_back({{"id", f},
                           {"image_id", f},
                           {"track_id", 7},
                           {"bbox", {31, 41 + 20 * (f - 1) - 80, 40, 100}},
                           {"iscrowd", 0}});
  }
  std::ofstream(file) << nlohmann::json{{"images", images}, {"annotations", annotations}}.dump();
}

nlohmann::json lastJson(const std::string& text) {
  std::string last;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) last = line;
  return nlohmann::json::parse(last);
}

TEST(EvalLinesTest, TheTruthAndTheTracksAreCountedByTheSameRuleOnTheSameFrames) {
  TempDir dir;
  writeTruth(dir.path() / "gt.json");
  // The tracker saw the same person as two tracks, each crossing: one crossing too many. Boxes
  // at (x + 1, y + 1), MOTChallenge's pixels.
  std::ofstream(dir.path() / "t.txt") << "1,1,31,-39,40,100,0.9,-1,-1,-1\n"
                                         "2,1,31,-19,40,100,0.9,-1,-1,-1\n"
                                         "3,1,31,21,40,100,0.9,-1,-1,-1\n"
                                         "4,2,31,-20,40,100,0.9,-1,-1,-1\n"
                                         "5,2,31,41,40,100,0.9,-1,-1,-1\n";
  EvalLinesOptions o;
  o.groundTruth = (dir.path() / "gt.json").string();
  o.tracks = (dir.path() / "t.txt").string();
  o.lines = {"door=0,100,200,100", "0,150,200,150"};
  o.json = true;
  std::ostringstream out;
  ASSERT_EQ(runEvalLinesCommand(o, out), 0);
  const auto j = lastJson(out.str());
  EXPECT_EQ(j["frames"], 5);
  EXPECT_EQ(j["lines"][0]["name"], "door");
  EXPECT_EQ(j["lines"][0]["in"]["truth"], 1);
  EXPECT_EQ(j["lines"][0]["in"]["tracks"], 2);
  EXPECT_EQ(j["lines"][0]["in"]["error"], 1);
  EXPECT_EQ(j["lines"][0]["out"]["truth"], 0);
  EXPECT_EQ(j["lines"][1]["name"], "line2");
  EXPECT_EQ(j["lines"][1]["in"]["truth"], 0) << "the feet stop at y = 140";
  EXPECT_EQ(j["truth"], 1);
  EXPECT_EQ(j["abs_error"], 1);
  EXPECT_DOUBLE_EQ(j["abs_error_fraction"].get<double>(), 1.0);
  EXPECT_NE(out.str().find("door             in             1      2     +1"), std::string::npos)
      << out.str();
  // Every other frame (1, 3, 5): the truth still crosses once, counted on frame 5.
  o.stride = 2;
  std::ostringstream strided;
  ASSERT_EQ(runEvalLinesCommand(o, strided), 0);
  EXPECT_EQ(lastJson(strided.str())["lines"][0]["in"]["truth"], 1);
  EXPECT_EQ(lastJson(strided.str())["frames"], 3);
}

TEST(EvalLinesTest, ABadLineSaysWhichAndWhy) {
  EXPECT_EQ(parseLineArgument("1,2,3", 0, 8, 1).error().message,
            "--line '1,2,3': 3 numbers; a line is x1,y1,x2,y2[,x3,y3...] (pairs)");
  EXPECT_EQ(parseLineArgument("a=1,2", 0, 8, 1).error().message,
            "--line 'a=1,2': a line needs at least 2 points, got 1");
  EXPECT_EQ(parseLineArgument("1,2,1,2", 0, 8, 1).error().message,
            "--line '1,2,1,2': segment 1 (points 1 and 2, both [1, 2]) has zero length");
  EXPECT_EQ(parseLineArgument("1,2,x,4", 0, 8, 1).error().message,
            "--line '1,2,x,4': 'x' is not a number");
  EXPECT_EQ(parseLineArguments({"d=0,0,1,1", "d=0,0,2,2"}, 8, 1).error().message,
            "--line 'd=0,0,2,2': a second line named 'd'");
  auto named = parseLineArgument("0,0,10,0,10,10", 2, 8, 1);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->name, "line3");
  EXPECT_EQ(named->line.points().size(), 3U);
}

}  // namespace
}  // namespace vigil
