#include "daemon/commands/line_commands.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <ostream>

#include "daemon/base/log.h"
#include "detector/track/mot_io.h"

namespace vigil {

namespace {

Expected<double> coordinate(const std::string& text, const std::string& where) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    return makeError(ErrorCode::kInvalidArgument, "{}: '{}' is not a number", where, text);
  }
  return v;
}

// MOTChallenge boxes have their top-left pixel at (1, 1); lines, like the daemon's boxes, at
// (0, 0).
void toPixels(MotSequence& sequence) {
  for (auto& [frame, boxes] : sequence) {
    for (MotBox& b : boxes) {
      b.box.x -= 1;
      b.box.y -= 1;
    }
  }
}

// Crossings per direction (in, out).
using DirectionCounts = std::array<int, 2>;

DirectionCounts countsOf(const std::vector<SequenceCrossing>& crossings) {
  DirectionCounts c{0, 0};
  for (const SequenceCrossing& s : crossings) ++c[s.direction == CrossingDirection::kIn ? 0 : 1];
  return c;
}

struct LineResult {
  const NamedLine* line = nullptr;
  DirectionCounts truth{};
  DirectionCounts tracks{};
  DirectionCounts truthEveryFrame{};
};

nlohmann::json resultJson(const LineResult& r) {
  nlohmann::json points = nlohmann::json::array();
  for (const LinePoint& p : r.line->line.points()) points.push_back({p.x, p.y});
  nlohmann::json j = {{"name", r.line->name}, {"points", points}};
  for (int d = 0; d < 2; ++d) {
    j[d == 0 ? "in" : "out"] = {
        {"truth", r.truth[d]}, {"tracks", r.tracks[d]}, {"error", r.tracks[d] - r.truth[d]}};
  }
  j["truth_every_frame"] = {{"in", r.truthEveryFrame[0]}, {"out", r.truthEveryFrame[1]}};
  return j;
}

void printResults(const std::vector<LineResult>& results, std::size_t frames,
                  const EvalLinesOptions& o, std::ostream& out) {
  out << fmt::format("{} frames, band {} px, min_frames {}\n", frames, o.band, o.minFrames);
  out << fmt::format("{:<16} {:<9} {:>6} {:>6} {:>6}\n", "line", "direction", "truth", "tracks",
                     "error");
  int truth = 0, tracks = 0, absError = 0, everyFrame = 0;
  nlohmann::json lines = nlohmann::json::array();
  for (const LineResult& r : results) {
    for (int d = 0; d < 2; ++d) {
      out << fmt::format("{:<16} {:<9} {:>6} {:>6} {:>+6}\n", r.line->name, d == 0 ? "in" : "out",
                         r.truth[d], r.tracks[d], r.tracks[d] - r.truth[d]);
      truth += r.truth[d];
      tracks += r.tracks[d];
      absError += std::abs(r.tracks[d] - r.truth[d]);
      everyFrame += r.truthEveryFrame[d];
    }
    lines.push_back(resultJson(r));
  }
  const double fraction = truth > 0 ? static_cast<double>(absError) / truth : 0.0;
  out << fmt::format(
      "total: {} ground-truth crossings, {} counted, absolute error {} ({:.1f} %); the ground "
      "truth on every annotated frame: {}\n",
      truth, tracks, absError, 100 * fraction, everyFrame);
  if (!o.json) return;
  out << nlohmann::json{{"frames", frames},
                        {"band", o.band},
                        {"min_frames", o.minFrames},
                        {"lines", lines},
                        {"truth", truth},
                        {"tracks", tracks},
                        {"abs_error", absError},
                        {"abs_error_fraction", fraction},
                        {"truth_every_frame", everyFrame}}
             .dump()
      << '\n';
}

}  // namespace

Expected<NamedLine> parseLineArgument(const std::string& text, std::size_t index, double band,
                                      int minFrames) {
  const std::string where = fmt::format("--line '{}'", text);
  std::string name = fmt::format("line{}", index + 1);
  std::string numbers = text;
  if (auto eq = text.find('='); eq != std::string::npos) {
    name = text.substr(0, eq);
    numbers = text.substr(eq + 1);
    if (name.empty()) return makeError(ErrorCode::kInvalidArgument, "{}: empty name", where);
  }
  std::vector<double> values;
  for (std::size_t at = 0;;) {
    const std::size_t comma = numbers.find(',', at);
    auto v = coordinate(numbers.substr(at, comma == std::string::npos ? comma : comma - at), where);
    if (!v) return tl::unexpected(v.error());
    values.push_back(*v);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (values.size() % 2 != 0) {
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: {} numbers; a line is x1,y1,x2,y2[,x3,y3...] (pairs)", where,
                     values.size());
  }
  std::vector<LinePoint> points;
  for (std::size_t i = 0; i + 1 < values.size(); i += 2)
    points.push_back({values[i], values[i + 1]});
  auto line = CountingLine::make(std::move(points), band, minFrames);
  if (!line) return makeError(ErrorCode::kInvalidArgument, "{}: {}", where, line.error().message);
  return NamedLine{std::move(name), std::move(*line)};
}

Expected<std::vector<NamedLine>> parseLineArguments(const std::vector<std::string>& texts,
                                                    double band, int minFrames) {
  std::vector<NamedLine> lines;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    auto line = parseLineArgument(texts[i], i, band, minFrames);
    if (!line) return tl::unexpected(line.error());
    for (const NamedLine& other : lines) {
      if (other.name == line->name) {
        return makeError(ErrorCode::kInvalidArgument, "--line '{}': a second line named '{}'",
                         texts[i], line->name);
      }
    }
    lines.push_back(std::move(*line));
  }
  return lines;
}

TrackLineWriter::TrackLineWriter(std::vector<NamedLine> lines, std::ostream& out)
    : lines_(std::move(lines)), out_(out), states_(lines_.size()) {}

void TrackLineWriter::observe(int frame, double time, const std::vector<Track>& tracks) {
  for (std::size_t l = 0; l < lines_.size(); ++l) {
    for (const Track& t : tracks) {
      if (!t.confirmed || !t.matched) continue;  // what `vigil track` writes
      auto counted = observeTrack(lines_[l].line, states_[l][t.id], t);
      if (!counted) continue;
      out_ << nlohmann::json{{"frame", frame},
                             {"time", time},
                             {"line", lines_[l].name},
                             {"direction", crossingDirectionName(*counted)},
                             {"track_id", t.id},
                             {"box", {t.box.x, t.box.y, t.box.width, t.box.height}}}
                  .dump()
           << '\n';
      ++crossings_;
    }
  }
}

void addEvalLinesCommand(CLI::App& app, EvalLinesOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "eval-lines", "Count line crossings of ground truth and tracks; the error per line");
  cmd->add_option("--gt", options.groundTruth, "Ground truth (*.person.json)")->required();
  cmd->add_option("--tracks", options.tracks, "Tracks in MOTChallenge text (vigil track --out)")
      ->required();
  cmd->add_option("--line", options.lines,
                  "[NAME=]x1,y1,x2,y2[,x3,y3...]: a directed line in pixels; `in` is from its "
                  "left-hand side to its right-hand side on the image (repeat for more)")
      ->required();
  cmd->add_option("--stride", options.stride,
                  "Count on frames 1, 1+N, 1+2N, ... only: the ones `vigil track --detect-fps` "
                  "tracked (default: every ground-truth frame)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--frames-in-tracks", options.framesInTracks,
                "Count only on the frames the tracks file has a line for (`vigil run "
                "--tracks-out`)")
      ->excludes("--stride");
  cmd->add_option(
         "--band", options.band,
         "Pixels clear of the line, on both sides, for a crossing to count (the hysteresis)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-frames", options.minFrames,
                  "Observations on the new side before a crossing counts")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", options.json, "One JSON object on the last line");
}

int runEvalLinesCommand(const EvalLinesOptions& options, std::ostream& out) {
  auto log = logger("track");
  auto lines = parseLineArguments(options.lines, options.band, options.minFrames);
  if (!lines) {
    log->error("{}", lines.error().message);
    return 2;
  }
  auto judging =
      readTrackJudging(options.groundTruth, options.tracks, options.stride, options.framesInTracks);
  if (!judging) {
    log->error("{}", judging.error().message);
    return 2;
  }
  const MotSequence& truth = judging->truth.boxes;
  const std::vector<int>& frames = judging->frames;
  toPixels(judging->truth.boxes);
  toPixels(judging->tracks);
  std::vector<LineResult> results;
  for (const NamedLine& l : *lines) {
    results.push_back({&l, countsOf(crossingsOf(l.line, truth, frames)),
                       countsOf(crossingsOf(l.line, judging->tracks, frames)),
                       countsOf(crossingsOf(l.line, truth, judging->truth.frames))});
  }
  printResults(results, frames.size(), options, out);
  return 0;
}

}  // namespace vigil
