#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace vigil {

// A rows x cols cost matrix, row-major.
struct CostMatrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<double> costs;

  double at(std::size_t r, std::size_t c) const { return costs[r * cols + c]; }
};

// The pairs (row, col) of a minimum-cost assignment in which a pair may be made only if its cost
// is at most `maxCost`, and leaving a row or a column unassigned costs maxCost / 2 (the
// extension of lapjv's cost_limit that SORT and ByteTrack use). So a pair is made when it is
// cheaper than leaving both its row and its column alone. Sorted by row.
//
// Kuhn-Munkres with potentials on the (rows + cols) square extension: O((rows + cols)^3),
// a few microseconds for 20 x 20. Scratch memory is `scratch`'s, reused between calls.
struct AssignmentScratch {
  std::vector<double> u, v, minv, cost;
  std::vector<std::size_t> p, way;
  std::vector<char> used;
};
void assignWithLimit(const CostMatrix& m, double maxCost,
                     std::vector<std::pair<std::size_t, std::size_t>>& out,
                     AssignmentScratch& scratch);

// A maximum-weight matching (weights >= 0; a pair of weight 0 is never reported). Used to match
// whole trajectories (IDF1) and per-frame detections (CLEAR MOT, HOTA). Sorted by row.
void assignMaxWeight(const CostMatrix& weights,
                     std::vector<std::pair<std::size_t, std::size_t>>& out,
                     AssignmentScratch& scratch);

}  // namespace vigil
