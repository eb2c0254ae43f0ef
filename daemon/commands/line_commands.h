#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "daemon/base/error.h"
#include "detector/track/byte_tracker.h"
#include "detector/track/line_crossing.h"

namespace vigil {

// A counting line given on the command line: `[NAME=]x1,y1,x2,y2[,x3,y3...]` in pixels (the
// frame's top-left pixel at (0, 0), as cameras.yaml's lines). Unnamed lines are line1, line2, ...
// by their place (`index` from 0).
struct NamedLine {
  std::string name;
  CountingLine line;
};
Expected<NamedLine> parseLineArgument(const std::string& text, std::size_t index, double band,
                                      int minFrames);
Expected<std::vector<NamedLine>> parseLineArguments(const std::vector<std::string>& texts,
                                                    double band, int minFrames);

// `vigil track --lines-out FILE --line ...`: the crossings of the tracks `vigil track` writes
// (confirmed, detected on the frame), one JSON object a line: {"frame", "time", "line",
// "direction", "track_id", "box": [x, y, w, h]} (box in pixels, top-left pixel at (0, 0)).
class TrackLineWriter {
 public:
  TrackLineWriter(std::vector<NamedLine> lines, std::ostream& out);
  void observe(int frame, double time, const std::vector<Track>& tracks);
  std::uint64_t crossings() const { return crossings_; }

 private:
  std::vector<NamedLine> lines_;
  std::ostream& out_;
  std::vector<std::map<std::uint64_t, LineTrackState>> states_;  // per line, by track id
  std::uint64_t crossings_ = 0;
};

struct EvalLinesOptions {
  std::string groundTruth;
  std::string tracks;
  std::vector<std::string> lines;
  int stride = 0;               // 0: every ground-truth frame
  bool framesInTracks = false;  // only the frames the tracks file names
  double band = kDefaultLineBandPixels;
  int minFrames = 1;
  bool json = false;
};

// `vigil eval-lines --gt GT.json --tracks T.txt --line ... [--stride N | --frames-in-tracks]`:
// each line's crossings by the ground truth's tracks and by the tracks file's, on the same
// frames, with the same rule (line_crossing.h), and the error per line and direction. Both files
// are MOTChallenge-style (top-left pixel (1, 1)) and are moved to the lines' pixels first.
// Returns 0, or 2 when a file or a line cannot be used (the message says where and why).
void addEvalLinesCommand(CLI::App& app, EvalLinesOptions& options);
int runEvalLinesCommand(const EvalLinesOptions& options, std::ostream& out);

}  // namespace vigil
