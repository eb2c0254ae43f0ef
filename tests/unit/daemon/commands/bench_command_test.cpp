#include "daemon/commands/bench_command.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(SummarizeTest, OddCountMedianAndNearestRankP95) {
  // 1..21 shuffled: median 11; p95 rank ceil(0.95*21) = 20 -> value 20.
  std::vector<double> v;
  for (int i = 21; i >= 1; --i) v.push_back(i);
  Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 11);
  EXPECT_DOUBLE_EQ(s.p95, 20);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 21);
}

TEST(SummarizeTest, EvenCountMedianIsMeanOfMiddlePair) {
  Summary s = summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.p95, 4);  // rank ceil(3.8) = 4
}

TEST(SummarizeTest, EmptyIsAllZero) {
  Summary s = summarize({});
  EXPECT_DOUBLE_EQ(s.median, 0);
  EXPECT_DOUBLE_EQ(s.max, 0);
}

TEST(SplitBackendsTest, CommaSeparatedNamesWithoutEmptyOnes) {
  EXPECT_EQ(splitBackends("cpu,cpu-ort"), (std::vector<std::string>{"cpu", "cpu-ort"}));
  EXPECT_EQ(splitBackends("auto"), (std::vector<std::string>{"auto"}));
  EXPECT_EQ(splitBackends(",cpu,,"), (std::vector<std::string>{"cpu"}));
  EXPECT_TRUE(splitBackends("").empty());
}

}  // namespace
}  // namespace vigil
