// A part's figures, written once in its report, as /metrics renders them (FigureSeries) and as
// the status API keeps them (FigureList).
#include "daemon/base/figure_series.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>

namespace vigil {
namespace {

constexpr FigureName kSeen{"seen", "test_pictures_seen_total", "Pictures seen"};
constexpr FigureName kSaid{"said", "test_pictures_said_total", "Pictures the decoder spoke of",
                           "kind"};
constexpr FigureName kLoad{"load", "test_load", "Share of a core"};
constexpr FigureName kBusy{"busy", "test_busy_seconds_total", "Seconds spent"};

// A part as a camera's counters are one: its figures read from atomics when asked.
struct Part {
  std::atomic<std::uint64_t> seen{0};
  std::atomic<std::uint64_t> truncated{0};
  double load = 0.25;
  double busy = 1.5;
  void report(FigureWriter& out) const {
    out.count(kSeen, {}, seen.load());
    out.count(kSaid, "truncated", truncated.load());
    out.count(kSaid, "metadata", 0);
    out.level(kLoad, {}, load);
    out.total(kBusy, {}, busy);
  }
};

TEST(FigureSeriesTest, EachFigureIsASeriesWithThePartsLabelsReadWhenRendered) {
  Registry registry;
  auto part = std::make_shared<Part>();
  FigureSeries series(registry, {"camera"}, {"door"},
                      [part](FigureWriter& out) { part->report(out); });
  part->seen = 7;
  part->truncated = 2;
  const std::string text = registry.render();
  EXPECT_NE(text.find("# HELP test_pictures_seen_total Pictures seen\n"
                      "# TYPE test_pictures_seen_total counter\n"
                      "test_pictures_seen_total{camera=\"door\"} 7\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("test_pictures_said_total{camera=\"door\",kind=\"truncated\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("test_pictures_said_total{camera=\"door\",kind=\"metadata\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE test_load gauge\ntest_load{camera=\"door\"} 0.25\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE test_busy_seconds_total counter\n"
                      "test_busy_seconds_total{camera=\"door\"} 1.5\n"),
            std::string::npos)
      << "a total is a counter with a fractional value\n"
      << text;
  part->seen = 8;
  EXPECT_NE(registry.render().find("test_pictures_seen_total{camera=\"door\"} 8\n"),
            std::string::npos)
      << "read again at every render";
}

TEST(FigureSeriesTest, ThePartsSeriesGoWithItAndTheRegistrysOthersStay) {
  Registry registry;
  registry.counter("test_later_total", "Another family", {}).labels({})->inc();
  auto part = std::make_shared<Part>();
  {
    FigureSeries gate(registry, {"camera"}, {"gate"},
                      [part](FigureWriter& out) { part->report(out); });
    FigureSeries door(registry, {"camera"}, {"door"},
                      [part](FigureWriter& out) { part->report(out); });
    const std::string text = registry.render();
    EXPECT_NE(text.find("test_pictures_seen_total{camera=\"gate\"} 0\n"), std::string::npos);
    EXPECT_NE(text.find("test_pictures_seen_total{camera=\"door\"} 0\n"), std::string::npos);
  }
  const std::string text = registry.render();
  EXPECT_EQ(text.find("camera=\"gate\""), std::string::npos) << text;
  EXPECT_EQ(text.find("camera=\"door\""), std::string::npos) << text;
  EXPECT_NE(text.find("test_later_total 1\n"), std::string::npos) << text;
}

// A part that may be absent (a detector before its first load, or between a reload's swap):
// its series are made from the names it reports when there, and absent while it is not.
TEST(FigureSeriesTest, APartAbsentAtFirstHasItsSeriesAbsentUntilItIsThere) {
  Registry registry;
  std::shared_ptr<Part> slot;
  FigureSeries series(
      registry, {}, {},
      [&slot](FigureWriter& out) {
        if (slot) slot->report(out);
      },
      [](FigureWriter& out) { Part().report(out); });
  EXPECT_EQ(registry.render().find("test_pictures_seen_total"), std::string::npos)
      << "no sample while the part is absent";
  slot = std::make_shared<Part>();
  slot->seen = 4;
  EXPECT_NE(registry.render().find("test_pictures_seen_total 4\n"), std::string::npos)
      << registry.render();
  slot.reset();
  EXPECT_EQ(registry.render().find("test_pictures_seen_total 4"), std::string::npos);
}

TEST(FigureListTest, KeepsWhatThePartWroteAndFindsACountByKeyAndLabel) {
  Part part;
  part.seen = 3;
  part.truncated = 1;
  FigureList figures;
  part.report(figures);
  ASSERT_EQ(figures.figures().size(), 5U);
  EXPECT_EQ(figures.figures()[0].name, &kSeen);
  EXPECT_EQ(figures.countOf("seen"), 3U);
  EXPECT_EQ(figures.countOf("said", "truncated"), 1U);
  EXPECT_EQ(figures.countOf("said", "metadata"), 0U);
  EXPECT_EQ(figures.countOf("said"), std::nullopt) << "a labelled count needs its label";
  EXPECT_EQ(figures.countOf("load"), std::nullopt) << "a level is not a count";
}

}  // namespace
}  // namespace vigil
