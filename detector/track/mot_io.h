#pragma once

#include <filesystem>
#include <ostream>
#include <vector>

#include "detector/track/byte_tracker.h"
#include "detector/track/mot_metrics.h"
#include "foundation/error.h"

namespace vigil {

// Ground truth in the format of ../shared/data/videos/*.person.json: COCO-style, each image
// with its `frame_index` (from 1), each annotation with `track_id`, `bbox` [x, y, w, h] and
// `iscrowd` (1: an ignore region).
struct GroundTruth {
  MotSequence boxes;
  std::vector<int> frames;  // every annotated video frame, ascending
};
Expected<GroundTruth> readGroundTruthJson(const std::filesystem::path& file);

// A tracks file to be judged against ground truth (eval-tracks, eval-lines): both read, and the
// frames the judging covers: every ground-truth frame; with stride > 1 frames 1, 1+stride, ...;
// with framesInTracks the ground-truth frames the tracks file has lines for.
struct TrackJudging {
  GroundTruth truth;
  MotSequence tracks;
  std::vector<int> frames;
};
Expected<TrackJudging> readTrackJudging(const std::filesystem::path& groundTruth,
                                        const std::filesystem::path& tracks, int stride,
                                        bool framesInTracks);

// MOTChallenge text: one line per box, `frame,id,x,y,w,h,score,-1,-1,-1` (frames from 1, boxes
// in pixels with the top-left pixel at (1, 1)). Errors name the file and line.
Expected<MotSequence> readMotText(const std::filesystem::path& file);

// One MOTChallenge line. `box` is in Vigil's pixel coordinates (top-left pixel at (0, 0)): one
// is added to x and y.
void writeMotLine(std::ostream& out, std::uint64_t frame, std::uint64_t id, const Box& box,
                  float score);
// Writes the confirmed tracks matched on this frame as MOTChallenge lines; a track reported first
// on its second frame (reportedFirstOnItsSecondFrame) gets its start box as a line of
// `previousFrame`, the frame tracked before this one (0: none).
void writeMotLines(std::ostream& out, int frame, int previousFrame,
                   const std::vector<Track>& tracks);
// A frame's detections as MOTChallenge's det.txt has them: id -1, the score in column 7.
void writeMotDetections(std::ostream& out, int frame, const std::vector<Detection>& detections);

}  // namespace vigil
