#include "daemon/events/ha_entities.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "daemon/events/camera_topics.h"

namespace vigil {
namespace {

class HaEntitiesSink : public MessageSink {
 public:
  void publish(std::string topic, std::string payload, bool retained) override {
    EXPECT_TRUE(retained) << topic;
    topics.push_back(std::move(topic));
    payloads.push_back(std::move(payload));
  }
  std::vector<std::string> topics;
  std::vector<std::string> payloads;
};

PublishedCamera haDoor() {
  ZoneSpec left{"left", {{0, 0}, {0.5F, 0}, {0.5F, 1}, {0, 1}}};
  return PublishedCamera{"door", PresenceSettings{}, {left}, {}, {}};
}

DiscoverySettings haSettings() {
  DiscoverySettings s;
  s.haPrefix = "ha";
  s.instance = "attic";
  return s;
}

TEST(HaEntitiesTest, AnnouncesTheNodeAndACameraAndRemovesTheCameraWithEmptyPayloads) {
  HaEntitiesSink sink;
  HaEntities entities(haSettings(), true, true, &sink);
  entities.announceNode();
  ASSERT_EQ(sink.topics.size(), 1U);
  EXPECT_EQ(sink.topics[0], nodeDiscoveryMessage(haSettings()).topic);

  const auto expected = discoveryMessages(haSettings(), discoveredCamera(haDoor(), true));
  sink.topics.clear();
  sink.payloads.clear();
  entities.announce(haDoor());
  ASSERT_EQ(sink.topics.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(sink.topics[i], expected[i].topic);
    EXPECT_EQ(sink.payloads[i], expected[i].payload);
  }

  const auto removals = discoveryRemovals(haSettings(), discoveredCamera(haDoor(), true));
  sink.topics.clear();
  sink.payloads.clear();
  entities.remove(haDoor());
  ASSERT_EQ(sink.topics.size(), removals.size());
  for (std::size_t i = 0; i < removals.size(); ++i) {
    EXPECT_EQ(sink.topics[i], removals[i].topic);
    EXPECT_EQ(sink.payloads[i], "");
  }
}

TEST(HaEntitiesTest, DisabledSendsNothingButKnowsHomeAssistantsStatusTopic) {
  HaEntitiesSink sink;
  HaEntities entities(haSettings(), false, true, &sink);
  entities.announceNode();
  entities.announce(haDoor());
  entities.remove(haDoor());
  EXPECT_TRUE(sink.topics.empty());
  EXPECT_EQ(entities.statusTopic(), "ha/status");
  HaEntities withoutSink(haSettings(), true, false, nullptr);
  withoutSink.announce(haDoor());  // nothing to send to, nothing fails
}

}  // namespace
}  // namespace vigil
