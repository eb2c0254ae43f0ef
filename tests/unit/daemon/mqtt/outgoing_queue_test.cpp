// The MQTT client's one buffer on its own: the order messages go to Paho in, what a lost
// connection hands over again, what a full buffer drops and keeps, and its warning's once.
#include "daemon/mqtt/outgoing_queue.h"

#include <gtest/gtest.h>
#include <mqtt/message.h>

#include <string>
#include <vector>

#include "tests/log_capture.h"
#include "tests/occurrences.h"

namespace vigil {
namespace {

OutgoingQueue::Message queuedMessage(const std::string& topic, const std::string& payload) {
  return mqtt::make_message(topic, payload);
}

// The payloads of `batch`, in its order.
std::vector<std::string> payloadsOf(const std::vector<OutgoingQueue::Message>& batch) {
  std::vector<std::string> out;
  for (const auto& m : batch) out.push_back(m->get_payload_str());
  return out;
}

// Everything the queue holds and not yet acknowledged, front first (handed over again).
std::vector<std::string> everythingQueued(OutgoingQueue& queue) {
  queue.resendFromFront();
  return payloadsOf(queue.takeWindow(1000));
}

TEST(OutgoingQueueTest, TheWindowHandsOverTheFrontInPublishOrderAndOnlyOnce) {
  OutgoingQueue queue(10);
  for (const char* p : {"a", "b", "c"}) queue.push(queuedMessage("vigil/x", p), false);
  EXPECT_TRUE(queue.hasUnsent(2));
  EXPECT_EQ(payloadsOf(queue.takeWindow(2)), (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(queue.hasUnsent(2)) << "the window's two are with Paho";
  EXPECT_TRUE(queue.hasUnsent(3));
  EXPECT_EQ(payloadsOf(queue.takeWindow(3)), (std::vector<std::string>{"c"}))
      << "a wider window hands over only what was not yet";
  EXPECT_TRUE(queue.takeWindow(3).empty());
  EXPECT_EQ(queue.size(), 3U) << "handed over is not delivered";
}

TEST(OutgoingQueueTest, AnAcknowledgementBehindTheFrontWaitsForTheFront) {
  OutgoingQueue queue(10);
  std::vector<OutgoingQueue::Message> sent;
  for (const char* p : {"a", "b", "c"}) {
    sent.push_back(queuedMessage("vigil/x", p));
    queue.push(sent.back(), false);
  }
  queue.takeWindow(3);
  EXPECT_EQ(queue.acknowledge(sent[1]), 0U) << "b delivered, a not yet: nothing leaves";
  EXPECT_EQ(queue.size(), 3U);
  EXPECT_EQ(queue.acknowledge(sent[0]), 2U) << "a delivered: a and b leave";
  EXPECT_EQ(queue.size(), 1U);
  EXPECT_EQ(queue.acknowledge(queuedMessage("vigil/x", "c")), 0U)
      << "an equal message that is not the queued one is no acknowledgement";
  EXPECT_EQ(queue.acknowledge(sent[2]), 1U);
  EXPECT_TRUE(queue.empty());
}

TEST(OutgoingQueueTest, AfterALostConnectionTheUnacknowledgedGoAgainInOrder) {
  OutgoingQueue queue(10);
  std::vector<OutgoingQueue::Message> sent;
  for (const char* p : {"a", "b", "c", "d"}) {
    sent.push_back(queuedMessage("vigil/x", p));
    queue.push(sent.back(), false);
  }
  queue.takeWindow(3);
  queue.acknowledge(sent[1]);  // delivered behind the front
  queue.resendFromFront();
  EXPECT_TRUE(queue.hasUnsent(3));
  EXPECT_EQ(payloadsOf(queue.takeWindow(3)), (std::vector<std::string>{"a", "c"}))
      << "b was delivered already, d is beyond the window";
  queue.acknowledge(sent[0]);
  EXPECT_EQ(payloadsOf(queue.takeWindow(3)), (std::vector<std::string>{"d"}))
      << "the window moved on with the front";
}

TEST(OutgoingQueueTest, AFullQueueDropsItsOldestUnsentNonRetainedMessage) {
  OutgoingQueue queue(4);
  queue.push(queuedMessage("vigil/x", "sent"), false);
  queue.takeWindow(1);  // with Paho: never dropped
  queue.push(queuedMessage("vigil/door/person", "retained"), true);
  queue.push(queuedMessage("vigil/x", "oldest unsent"), false);
  queue.push(queuedMessage("vigil/x", "newer"), false);
  EXPECT_TRUE(queue.push(queuedMessage("vigil/x", "too many"), false))
      << "the fifth message into four places drops one";
  EXPECT_EQ(queue.size(), 4U);
  EXPECT_EQ(everythingQueued(queue),
            (std::vector<std::string>{"sent", "retained", "newer", "too many"}));
}

TEST(OutgoingQueueTest, AQueueOfRetainedStatesOnlyDropsTheOldestOfThem) {
  OutgoingQueue queue(2);
  EXPECT_FALSE(queue.push(queuedMessage("vigil/door/person", "ON"), true));
  EXPECT_FALSE(queue.push(queuedMessage("vigil/yard/person", "OFF"), true));
  EXPECT_TRUE(queue.push(queuedMessage("vigil/events", "event"), false));
  EXPECT_EQ(everythingQueued(queue), (std::vector<std::string>{"OFF", "event"}));
}

TEST(OutgoingQueueTest, WhenEverythingQueuedIsWithPahoTheNewMessageIsTheOneDropped) {
  OutgoingQueue queue(2);
  queue.push(queuedMessage("vigil/x", "a"), false);
  queue.push(queuedMessage("vigil/x", "b"), false);
  queue.takeWindow(2);
  EXPECT_TRUE(queue.push(queuedMessage("vigil/x", "c"), false));
  EXPECT_EQ(queue.size(), 2U);
  EXPECT_EQ(everythingQueued(queue), (std::vector<std::string>{"a", "b"}));
}

TEST(OutgoingQueueTest, ARetainedStateReplacesTheUnsentOneOfItsTopicWithoutADrop) {
  OutgoingQueue queue(2);
  queue.push(queuedMessage("vigil/door/person", "ON"), true);
  queue.push(queuedMessage("vigil/events", "event"), false);
  EXPECT_FALSE(queue.push(queuedMessage("vigil/door/person", "OFF"), true))
      << "full, but the replaced state makes the room: not a drop";
  EXPECT_EQ(everythingQueued(queue), (std::vector<std::string>{"event", "OFF"}))
      << "the newest state, queued where it was published";
}

TEST(OutgoingQueueTest, OnlyAnUnsentRetainedStateOfTheSameTopicIsReplaced) {
  OutgoingQueue queue(10);
  queue.push(queuedMessage("vigil/door/person", "ON (sent)"), true);
  queue.takeWindow(1);
  queue.push(queuedMessage("vigil/door/person", "OFF"), true);
  queue.push(queuedMessage("vigil/yard/person", "ON"), true);
  queue.push(queuedMessage("vigil/door/person", "not retained"), false);
  queue.push(queuedMessage("vigil/door/person", "ON again"), true);
  EXPECT_EQ(everythingQueued(queue),
            (std::vector<std::string>{"ON (sent)", "ON", "not retained", "ON again"}))
      << "the one with Paho, another topic's and a non-retained message on the topic stay";
}

TEST(OutgoingQueueTest, TheFullBufferIsWarnedAboutOnceUntilTheQueueDrains) {
  testing::LogCapture log("mqtt");
  OutgoingQueue queue(2);
  queue.push(queuedMessage("vigil/x", "a"), false);
  queue.push(queuedMessage("vigil/x", "b"), false);
  EXPECT_TRUE(queue.push(queuedMessage("vigil/x", "c"), false));
  EXPECT_TRUE(queue.push(queuedMessage("vigil/x", "d"), false));
  EXPECT_EQ(testing::occurrences(log.text(), "offline buffer full (2 messages)"), 1U) << log.text();

  // Delivered but one: not drained, still one warning for the next drop.
  auto batch = queue.takeWindow(2);
  ASSERT_EQ(batch.size(), 2U);
  EXPECT_EQ(queue.acknowledge(batch[0]), 1U);
  queue.push(queuedMessage("vigil/x", "e"), false);
  EXPECT_TRUE(queue.push(queuedMessage("vigil/x", "f"), false));
  EXPECT_EQ(testing::occurrences(log.text(), "offline buffer full"), 1U) << log.text();

  // Drained: the next full buffer is said again.
  queue.acknowledge(batch[1]);
  for (const auto& m : queue.takeWindow(2)) queue.acknowledge(m);
  ASSERT_TRUE(queue.empty());
  queue.push(queuedMessage("vigil/x", "g"), false);
  queue.push(queuedMessage("vigil/x", "h"), false);
  EXPECT_TRUE(queue.push(queuedMessage("vigil/x", "i"), false));
  EXPECT_EQ(testing::occurrences(log.text(), "offline buffer full"), 2U) << log.text();
}

}  // namespace
}  // namespace vigil
