#include "daemon/events/availability_messages.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace vigil {
namespace {

class AvailabilitySink : public MessageSink {
 public:
  void publish(std::string topic, std::string payload, bool retained) override {
    EXPECT_TRUE(retained) << topic;
    sent.emplace_back(std::move(topic), std::move(payload));
  }
  std::vector<std::pair<std::string, std::string>> sent;
};

using Sent = std::vector<std::pair<std::string, std::string>>;

TEST(AvailabilityMessagesTest, WhatIsSetBeforeTheAnnounceWaitsForIt) {
  AvailabilitySink sink;
  AvailabilityMessages availability("vigil", &sink);
  EXPECT_EQ(availability.statusTopic(), "vigil/status");
  availability.setAttributes(R"({"backend":"cpu"})", false);
  availability.setCameraAvailable("door", true, false);
  EXPECT_TRUE(sink.sent.empty());
  availability.announce();
  availability.announceCamera("door");
  availability.announceCamera("yard");  // never reported: nothing said of it
  EXPECT_EQ(sink.sent, (Sent{{"vigil/status", "online"},
                             {"vigil/status/attributes", R"({"backend":"cpu"})"},
                             {"vigil/door/status", "online"}}));
}

TEST(AvailabilityMessagesTest, OnceAnnouncedOnlyChangesAreSent) {
  AvailabilitySink sink;
  AvailabilityMessages availability("vigil", &sink);
  availability.announce();  // no attributes yet: status only
  EXPECT_EQ(sink.sent, (Sent{{"vigil/status", "online"}}));
  sink.sent.clear();
  availability.setAttributes("{}", true);
  availability.setAttributes("{}", true);
  availability.setCameraAvailable("door", false, true);
  availability.setCameraAvailable("door", false, true);
  availability.setCameraAvailable("door", true, true);
  EXPECT_EQ(sink.sent, (Sent{{"vigil/status/attributes", "{}"},
                             {"vigil/door/status", "offline"},
                             {"vigil/door/status", "online"}}));
}

TEST(AvailabilityMessagesTest, AForgottenCameraIsNewWhenReportedAgain) {
  AvailabilitySink sink;
  AvailabilityMessages availability("vigil", &sink);
  availability.setCameraAvailable("door", true, true);
  availability.forget("door");
  sink.sent.clear();
  availability.announceCamera("door");
  EXPECT_TRUE(sink.sent.empty());
  availability.setCameraAvailable("door", true, true);
  EXPECT_EQ(sink.sent, (Sent{{"vigil/door/status", "online"}}));
}

}  // namespace
}  // namespace vigil
