#include "daemon/status/event_pages.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

using std::chrono::system_clock;

system_clock::time_point unixSeconds(double s) {
  return system_clock::time_point(
      std::chrono::duration_cast<system_clock::duration>(std::chrono::duration<double>(s)));
}

TEST(EventPagesTest, TimesAreReadAsIsoWithZonesDatesOrUnixSeconds) {
  EXPECT_EQ(parseTime("2026-12-07T11:40:01Z").value(), unixSeconds(1796643601));
  EXPECT_EQ(parseTime("2026-12-07T11:40:01.500Z").value(), unixSeconds(1796643601.5));
  EXPECT_EQ(parseTime("2026-12-07T12:40:01+01:00").value(), unixSeconds(1796643601));
  EXPECT_EQ(parseTime("2026-12-07").value(), unixSeconds(1796601600));
  EXPECT_EQ(parseTime("1796643601").value(), unixSeconds(1796643601));
  EXPECT_FALSE(parseTime("yesterday"));
  EXPECT_FALSE(parseTime("2026-12-07T11:40:01 CET"));
}

TEST(EventPagesTest, TheQueryStringBecomesAQueryAndABadParameterIsNamed) {
  auto q = eventQueryOf("camera=door&zone=gate%20a&since=2026-12-07&limit=20&before=door-1&_=9");
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->camera, "door");
  EXPECT_EQ(q->zone, "gate a");
  EXPECT_EQ(q->since, unixSeconds(1796601600));
  EXPECT_FALSE(q->until.has_value());
  EXPECT_EQ(q->limit, 20);
  EXPECT_EQ(q->before, "door-1");

  auto limit = eventQueryOf("limit=5000");
  ASSERT_FALSE(limit);
  EXPECT_NE(limit.error().message.find("limit='5000'"), std::string::npos) << limit.error().message;
  auto since = eventQueryOf("since=soon");
  ASSERT_FALSE(since);
  EXPECT_NE(since.error().message.find("since='soon'"), std::string::npos);
}

TEST(EventPagesTest, AnswersFromTheHistoryOrWithoutOneFromTheRecentEvents) {
  RecentEvents recent;
  EventPages memoryOnly(nullptr, recent);
  EXPECT_EQ(memoryOnly.list("").status, 200);
  EXPECT_EQ(memoryOnly.list("limit=0").status, 400);
  EXPECT_EQ(memoryOnly.event("door-1/snapshot.jpg").status, 404);
  EXPECT_EQ(memoryOnly.event("door-1/other.png").status, 404);

  TempDir dir;
  auto history = EventHistory::open({.dir = dir.path()});
  ASSERT_TRUE(history);
  EventRecord e;
  e.id = "door-camera-1-1";
  e.camera = "door";
  e.start = unixSeconds(1796643601);
  (*history)->record(e);
  (*history)->recordPicture(e.id, EventPictureKind::kFirst, "jpeg bytes");
  (*history)->flush();
  EventPages pages(history->get(), recent);
  HttpResponse list = pages.list("camera=door");
  ASSERT_EQ(list.status, 200);
  auto events = nlohmann::json::parse(list.body);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0]["start"], "2026-12-07T11:40:01.000Z");
  EXPECT_EQ(events[0]["snapshot"], "api/events/door-camera-1-1/snapshot.jpg");
  EXPECT_EQ(events[0]["first_picture"], "api/events/door-camera-1-1/first.jpg");
  EXPECT_EQ(pages.list("camera=yard").body, "[]\n");
  EXPECT_EQ(pages.event("door-camera-1-1/snapshot.jpg").body, "jpeg bytes");
  EXPECT_EQ(pages.event("door-camera-1-1/first.jpg").body, "jpeg bytes");
  EXPECT_EQ(pages.event("door-camera-9-9/first.jpg").status, 404);
  HttpResponse one = pages.event("door-camera-1-1");
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(nlohmann::json::parse(one.body)["id"], "door-camera-1-1");
  EXPECT_EQ(pages.event("door-camera-9-9").status, 404);
}

}  // namespace
}  // namespace vigil
