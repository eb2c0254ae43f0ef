#include "detector/track/linear_assignment.h"

#include <algorithm>
#include <limits>

namespace vigil {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Minimum-cost perfect assignment of an n x n matrix (scratch.cost, row-major). Returns in
// scratch.p[j] (1-based columns) the 1-based row assigned to column j. The classic
// potentials-based Hungarian algorithm, O(n^3).
void hungarianSquare(std::size_t n, AssignmentScratch& s) {
  s.u.assign(n + 1, 0);
  s.v.assign(n + 1, 0);
  s.p.assign(n + 1, 0);
  s.way.assign(n + 1, 0);
  for (std::size_t i = 1; i <= n; ++i) {
    s.p[0] = i;
    std::size_t j0 = 0;
    s.minv.assign(n + 1, kInfinity);
    s.used.assign(n + 1, 0);
    do {
      s.used[j0] = 1;
      const std::size_t i0 = s.p[j0];
      double delta = kInfinity;
      std::size_t j1 = 0;
      for (std::size_t j = 1; j <= n; ++j) {
        if (s.used[j]) continue;
        const double cur = s.cost[(i0 - 1) * n + (j - 1)] - s.u[i0] - s.v[j];
        if (cur < s.minv[j]) {
          s.minv[j] = cur;
          s.way[j] = j0;
        }
        if (s.minv[j] < delta) {
          delta = s.minv[j];
          j1 = j;
        }
      }
      for (std::size_t j = 0; j <= n; ++j) {
        if (s.used[j]) {
          s.u[s.p[j]] += delta;
          s.v[j] -= delta;
        } else {
          s.minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (s.p[j0] != 0);
    do {
      const std::size_t j1 = s.way[j0];
      s.p[j0] = s.p[j1];
      j0 = j1;
    } while (j0 != 0);
  }
}

}  // namespace

void assignWithLimit(const CostMatrix& m, double maxCost,
                     std::vector<std::pair<std::size_t, std::size_t>>& out, AssignmentScratch& s) {
  out.clear();
  if (m.rows == 0 || m.cols == 0) return;
  // [ C   L ]   C: the costs (pairs above maxCost forbidden), L: rows x rows, maxCost / 2 on the
  // [ L'  0 ]   diagonal (row left alone); L': cols x cols likewise for columns.
  const std::size_t n = m.rows + m.cols;
  // A large finite value, so that the potentials stay finite.
  const double forbidden = 1e6 + 4 * std::max(0.0, maxCost);
  // Leaving a row or column alone costs a hair more than half the limit, so that a pair of cost
  // exactly maxCost is still made ("at most").
  const double alone = maxCost / 2 + 1e-9;
  s.cost.assign(n * n, forbidden);
  for (std::size_t r = 0; r < m.rows; ++r) {
    for (std::size_t c = 0; c < m.cols; ++c) {
      const double cost = m.at(r, c);
      if (cost <= maxCost) s.cost[r * n + c] = cost;
    }
    s.cost[r * n + m.cols + r] = alone;
  }
  for (std::size_t c = 0; c < m.cols; ++c) {
    s.cost[(m.rows + c) * n + c] = alone;
    for (std::size_t r = 0; r < m.rows; ++r) s.cost[(m.rows + c) * n + m.cols + r] = 0;
  }
  hungarianSquare(n, s);
  for (std::size_t j = 1; j <= m.cols; ++j) {
    const std::size_t r = s.p[j] - 1;
    if (r < m.rows && m.at(r, j - 1) <= maxCost) out.emplace_back(r, j - 1);
  }
  std::sort(out.begin(), out.end());
}

void assignMaxWeight(const CostMatrix& w, std::vector<std::pair<std::size_t, std::size_t>>& out,
                     AssignmentScratch& s) {
  out.clear();
  const std::size_t n = std::max(w.rows, w.cols);
  if (w.rows == 0 || w.cols == 0) return;
  s.cost.assign(n * n, 0);
  for (std::size_t r = 0; r < w.rows; ++r) {
    for (std::size_t c = 0; c < w.cols; ++c) s.cost[r * n + c] = -w.at(r, c);
  }
  hungarianSquare(n, s);
  for (std::size_t j = 1; j <= n; ++j) {
    const std::size_t r = s.p[j] - 1;
    if (r < w.rows && j - 1 < w.cols && w.at(r, j - 1) > 0) out.emplace_back(r, j - 1);
  }
  std::sort(out.begin(), out.end());
}

}  // namespace vigil
