#include "detector/track/linear_assignment.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using Pairs = std::vector<std::pair<std::size_t, std::size_t>>;

Pairs withLimit(CostMatrix m, double limit) {
  Pairs out;
  AssignmentScratch scratch;
  assignWithLimit(m, limit, out, scratch);
  return out;
}

TEST(LinearAssignmentTest, MinimumTotalCostAmongAllowedPairs) {
  // Row 0 prefers column 0 alone, but the cheapest whole assignment crosses.
  EXPECT_EQ(withLimit({2, 2, {0.1, 0.2, 0.15, 0.79}}, 0.8), (Pairs{{0, 1}, {1, 0}}));
  EXPECT_EQ(withLimit({2, 2, {0.1, 0.9, 0.2, 0.3}}, 0.8), (Pairs{{0, 0}, {1, 1}}));
}

TEST(LinearAssignmentTest, PairsAboveTheLimitAreNeverMade) {
  EXPECT_TRUE(withLimit({1, 1, {0.81}}, 0.8).empty());
  EXPECT_EQ(withLimit({1, 1, {0.8}}, 0.8), (Pairs{{0, 0}}));
  // Both rows want column 1; row 1 has no other allowed column, so row 0 gives way.
  EXPECT_EQ(withLimit({2, 2, {0.5, 0.1, 0.9, 0.2}}, 0.8), (Pairs{{0, 0}, {1, 1}}));
  EXPECT_EQ(withLimit({2, 2, {0.9, 0.1, 0.9, 0.2}}, 0.8), (Pairs{{0, 1}}));
}

TEST(LinearAssignmentTest, RectangularAndEmpty) {
  EXPECT_EQ(withLimit({1, 3, {0.7, 0.2, 0.5}}, 0.8), (Pairs{{0, 1}}));
  EXPECT_EQ(withLimit({3, 1, {0.7, 0.6, 0.5}}, 0.8), (Pairs{{2, 0}}));
  EXPECT_TRUE(withLimit({0, 3, {}}, 0.8).empty());
}

TEST(LinearAssignmentTest, MaximumWeightLeavesZeroWeightsOut) {
  Pairs out;
  AssignmentScratch scratch;
  assignMaxWeight({2, 2, {1, 0, 0, 0}}, out, scratch);
  EXPECT_EQ(out, (Pairs{{0, 0}}));
  // 3 + 3 beats 4 + 0.
  assignMaxWeight({2, 3, {4, 3, 0, 3, 0, 0}}, out, scratch);
  EXPECT_EQ(out, (Pairs{{0, 1}, {1, 0}}));
}

}  // namespace
}  // namespace vigil
