#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "detector/box.h"

namespace vigil {

// One box of a ground truth or of a tracker's output in one frame.
struct MotBox {
  std::uint64_t id = 0;
  Box box;
  bool ignore = false;  // ground truth only: an ignore region (a tracker box on it is neither
                        // a true nor a false positive)
};

// Frame number -> its boxes.
using MotSequence = std::map<int, std::vector<MotBox>>;

struct MotScores {
  // CLEAR MOT (Bernardin and Stiefelhagen, 2008), as TrackEval computes it: a match needs IoU
  // >= 0.5, a ground-truth track keeps its previous frame's match when it still qualifies.
  double mota = 0;  // 1 - (fn + fp + idSwitches) / gtBoxes
  double motp = 0;  // mean IoU of the matches (higher is better)
  int tp = 0;
  int fp = 0;
  int fn = 0;
  int idSwitches = 0;
  int gtBoxes = 0;
  int gtTracks = 0;
  int mostlyTracked = 0;  // matched on more than 80 % of their frames
  int partlyTracked = 0;
  int mostlyLost = 0;  // matched on less than 20 % of their frames
  // Identity scores (Ristani et al., 2016): one tracker id per ground-truth id over the whole
  // sequence, the pairing that matches the most boxes (IoU >= 0.5).
  double idf1 = 0;
  double idp = 0;
  double idr = 0;
  // HOTA (Luiten et al., 2021): the mean over IoU thresholds 0.05, 0.10, ... 0.95 of
  // sqrt(DetA * AssA).
  double hota = 0;
  double detA = 0;
  double assA = 0;
  double locA = 0;
  int frames = 0;  // frames scored
};

// Scores `hypothesis` against `truth` on the frames `frames` only (the frames that were
// tracked; boxes of other frames are not looked at).
MotScores evaluateTracks(const MotSequence& truth, const MotSequence& hypothesis,
                         const std::vector<int>& frames);

}  // namespace vigil
