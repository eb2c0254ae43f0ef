#include "daemon/history/history_database.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/log_capture.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using std::chrono::system_clock;

system_clock::time_point second(int s) {
  return system_clock::time_point(std::chrono::seconds(1'765'000'000 + s));
}

EventRecord storedRecord(const std::string& id, const std::string& camera, int startSecond,
                         std::string zone = "") {
  EventRecord e;
  e.id = id;
  e.camera = camera;
  e.zone = std::move(zone);
  e.start = second(startSecond);
  e.count = 1;
  e.maxCount = 2;
  e.maxScore = 0.75F;
  e.trackIds = {3, 9};
  e.backend = "cpu";
  return e;
}

std::vector<std::string> idsOf(const Expected<std::vector<StoredEvent>>& events) {
  std::vector<std::string> out;
  if (events) {
    for (const StoredEvent& e : *events) out.push_back(e.event.id);
  }
  return out;
}

TEST(HistoryDatabaseTest, AnEventIsSavedThenUpdatedAndReadBackWhole) {
  TempDir dir;
  auto db = HistoryDatabase::open(dir.path() / "events.db");
  ASSERT_TRUE(db) << db.error().message;
  EventRecord e = storedRecord("door-1", "door", 0);
  ASSERT_TRUE(db->save(e, second(0)));
  e.end = second(30);
  e.count = 0;
  e.maxCount = 3;
  e.trackIds = {3, 9, 12};
  ASSERT_TRUE(db->save(e, second(30)));
  auto found = db->find("door-1");
  ASSERT_TRUE(found && *found);
  const EventRecord& back = (*found)->event;
  EXPECT_EQ(back.camera, "door");
  EXPECT_EQ(back.start, second(0));
  EXPECT_EQ(back.end, second(30));
  EXPECT_EQ(back.maxCount, 3);
  EXPECT_FLOAT_EQ(back.maxScore, 0.75F);
  EXPECT_EQ(back.trackIds, (std::vector<std::uint64_t>{3, 9, 12}));
  EXPECT_EQ(back.backend, "cpu");
  EXPECT_EQ(db->eventCount().value(), 1);
}

TEST(HistoryDatabaseTest, PagesGoNewestFirstByCameraZoneAndTime) {
  TempDir dir;
  auto db = HistoryDatabase::open(dir.path() / "events.db");
  ASSERT_TRUE(db);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(db->save(storedRecord("door-" + std::to_string(i), "door", i * 10), second(0)));
  }
  ASSERT_TRUE(db->save(storedRecord("yard-0", "yard", 25), second(0)));
  ASSERT_TRUE(db->save(storedRecord("door-gate-0", "door", 26, "gate"), second(0)));

  EventQuery q;
  q.limit = 3;
  EXPECT_EQ(idsOf(db->query(q)), (std::vector<std::string>{"door-4", "door-3", "door-gate-0"}));
  q.before = "door-gate-0";
  EXPECT_EQ(idsOf(db->query(q)), (std::vector<std::string>{"yard-0", "door-2", "door-1"}));
  q.before = "door-1";
  EXPECT_EQ(idsOf(db->query(q)), (std::vector<std::string>{"door-0"}));

  EventQuery door;
  door.camera = "door";
  door.zone = "";
  door.since = second(10);
  door.until = second(40);
  EXPECT_EQ(idsOf(db->query(door)), (std::vector<std::string>{"door-3", "door-2", "door-1"}));
  door.zone = "gate";
  EXPECT_EQ(idsOf(db->query(door)), (std::vector<std::string>{"door-gate-0"}));
}

TEST(HistoryDatabaseTest, TheFirstPictureIsTheBestUntilABetterOneReplacesIt) {
  TempDir dir;
  auto db = HistoryDatabase::open(dir.path() / "events.db");
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->save(storedRecord("door-1", "door", 0), second(0)));
  EXPECT_EQ(db->setPicture("door-1", EventPictureKind::kFirst, "d/first.jpg", 100).value(), "");
  auto found = db->find("door-1").value();
  EXPECT_EQ(found->bestPicture, "d/first.jpg");
  EXPECT_EQ(db->setPicture("door-1", EventPictureKind::kBest, "d/best.jpg", 120).value(), "");
  // The same file name again: nothing to remove. Another one: the old best is unnamed.
  EXPECT_EQ(db->setPicture("door-1", EventPictureKind::kBest, "d/best.jpg", 130).value(), "");
  EXPECT_EQ(db->setPicture("door-1", EventPictureKind::kBest, "d/best2.jpg", 130).value(),
            "d/best.jpg");
  found = db->find("door-1").value();
  EXPECT_EQ(found->firstPicture, "d/first.jpg");
  EXPECT_EQ(found->bestPicture, "d/best2.jpg");
  // A picture of an event the history does not have is unnamed at once.
  EXPECT_EQ(db->setPicture("gone-1", EventPictureKind::kFirst, "d/x.jpg", 10).value(), "d/x.jpg");
}

TEST(HistoryDatabaseTest, PruneDeletesTheOldestByAgeThenBySize) {
  TempDir dir;
  auto db = HistoryDatabase::open(dir.path() / "events.db");
  ASSERT_TRUE(db);
  for (int i = 0; i < 4; ++i) {
    const std::string id = "door-" + std::to_string(i);
    ASSERT_TRUE(db->save(storedRecord(id, "door", i * 100), second(0)));
    ASSERT_TRUE(db->setPicture(id, EventPictureKind::kFirst, id + ".jpg", 1'000'000));
  }
  auto aged = db->prune(second(150), std::int64_t{1} << 40);
  ASSERT_TRUE(aged);
  EXPECT_EQ(aged->events, 2);
  EXPECT_EQ(aged->files, (std::vector<std::string>{"door-0.jpg", "door-1.jpg"}));
  // Two pictures of 1 MB and the database's pages: 1.5 MB keeps only the newest.
  auto sized = db->prune(second(0), 1'500'000);
  ASSERT_TRUE(sized);
  EXPECT_EQ(sized->files, (std::vector<std::string>{"door-2.jpg"}));
  EXPECT_EQ(idsOf(db->query(EventQuery{})), (std::vector<std::string>{"door-3"}));
}

TEST(HistoryDatabaseTest, AnEventLeftOpenEndsAtItsLastUpdate) {
  TempDir dir;
  {
    auto db = HistoryDatabase::open(dir.path() / "events.db");
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->save(storedRecord("door-1", "door", 0), second(12)));
  }
  auto db = HistoryDatabase::open(dir.path() / "events.db");
  ASSERT_TRUE(db);
  EXPECT_EQ(db->endInterrupted().value(), 1);
  auto found = db->find("door-1").value();
  EXPECT_EQ(found->event.end, second(12));
  EXPECT_EQ(found->event.count, 0);
}

TEST(HistoryDatabaseTest, ACorruptFileIsMovedAsideLoudlyAndAFreshOneStarted) {
  TempDir dir;
  const auto file = dir.path() / "events.db";
  std::ofstream(file) << std::string(8192, 'x');  // not a database
  testing::LogCapture log("history");
  auto db = HistoryDatabase::open(file);
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_TRUE(db->save(storedRecord("door-1", "door", 0), second(0)));
  int aside = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().filename().string().starts_with("events.db.broken-")) ++aside;
  }
  EXPECT_EQ(aside, 1);
  EXPECT_NE(log.text().find("moved aside"), std::string::npos) << log.text();
}

}  // namespace
}  // namespace vigil
