#include "daemon/history/event_history.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/temp_dir.h"
#include "tests/wait.h"

namespace vigil {
namespace {

EventRecord recentRecord(const std::string& id) {
  EventRecord e;
  e.id = id;
  e.camera = "door";
  e.start = std::chrono::system_clock::now();
  e.count = 1;
  e.maxCount = 1;
  e.maxScore = 0.8F;
  return e;
}

std::size_t picturesIn(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    if (f.is_regular_file() && f.path().extension() == ".jpg") ++n;
  }
  return n;
}

TEST(EventHistoryTest, EventsAndPicturesAreWrittenAndReadBackAfterAReopen) {
  TempDir dir;
  {
    auto history = EventHistory::open({.dir = dir.path()});
    ASSERT_TRUE(history) << history.error().message;
    (*history)->record(recentRecord("door-1"));
    (*history)->recordPicture("door-1", EventPictureKind::kFirst, "first-jpeg");
    (*history)->recordPicture("door-1", EventPictureKind::kBest, "better-jpeg");
    (*history)->flush();
    FigureList figures;
    (*history)->report(figures);
    EXPECT_EQ(figures.countOf("events_written"), 1U);
    EXPECT_EQ(figures.countOf("pictures_written"), 2U);
  }
  auto history = EventHistory::open({.dir = dir.path()});
  ASSERT_TRUE(history);
  auto found = (*history)->find("door-1");
  ASSERT_TRUE(found && *found);
  const StoredEvent& event = **found;
  EXPECT_TRUE(event.event.end.has_value()) << "left open: it ends at its last update";
  std::ifstream best((*history)->picture(event, EventPictureKind::kBest));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(best), {}), "better-jpeg");
  std::ifstream first((*history)->picture(event, EventPictureKind::kFirst));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(first), {}), "first-jpeg");
}

TEST(EventHistoryTest, AFullQueueDropsAndCountsInsteadOfWaiting) {
  TempDir dir;
  auto history = EventHistory::open({.dir = dir.path(), .queueCapacity = 1});
  ASSERT_TRUE(history);
  for (int i = 0; i < 200; ++i) (*history)->record(recentRecord("door-" + std::to_string(i)));
  (*history)->flush();
  FigureList figures;
  (*history)->report(figures);
  const std::uint64_t written = figures.countOf("events_written").value_or(0);
  const std::uint64_t dropped = figures.countOf("dropped").value_or(0);
  EXPECT_EQ(written + dropped, 200U);
  EXPECT_GT(dropped, 0U) << "200 records into a queue of 1 all fitted";
}

TEST(EventHistoryTest, PruningRemovesTheOldEventsPictureFiles) {
  TempDir dir;
  auto history = EventHistory::open(
      {.dir = dir.path(), .maxBytes = 300'000, .pruneEvery = std::chrono::milliseconds(20)});
  ASSERT_TRUE(history);
  const std::string picture(100'000, 'j');
  for (int i = 0; i < 6; ++i) {
    const std::string id = "door-" + std::to_string(i);
    EventRecord e = recentRecord(id);
    e.start += std::chrono::seconds(i);
    (*history)->record(e);
    (*history)->recordPicture(id, EventPictureKind::kFirst, picture);
  }
  ASSERT_TRUE(testing::waitUntil([&] {
    FigureList figures;
    (*history)->report(figures);
    return figures.countOf("pruned").value_or(0) >= 3;
  }));
  (*history)->flush();
  EXPECT_LE(picturesIn(dir.path() / "pictures"), 3U);
  auto kept = (*history)->query(EventQuery{});
  ASSERT_TRUE(kept);
  ASSERT_FALSE(kept->empty());
  EXPECT_EQ(kept->front().event.id, "door-5") << "the newest is kept";
}

}  // namespace
}  // namespace vigil
