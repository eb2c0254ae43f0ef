// One streaming session against a listed FrameSource and a recording FrameSink: streaming at the
// first frame, the session's ends (lost, ended, stalled on corrupt frames, stopped), frames
// dropped when the pool is empty, and the sink's wish for keyframes only passed on.
#include "daemon/capture/camera/stream_session.h"

#include <gtest/gtest.h>

#include <deque>
#include <optional>
#include <vector>

namespace vigil {
namespace {

using namespace std::chrono_literals;

// Reads as listed (nullopt: a frame), then `otherwise` for every read after.
class ListedSource final : public FrameSource {
 public:
  Expected<SourceInfo> open() override { return SourceInfo{}; }
  Expected<void> read(Frame& frame, std::chrono::milliseconds) override {
    std::optional<ErrorCode> code = otherwise;
    if (!reads.empty()) {
      code = reads.front();
      reads.pop_front();
    }
    if (code) return makeError(*code, "listed failure");
    frame.picture.bgrForWriting(cv::Size(8, 6));
    return {};
  }
  void close() override {}
  void setKeyframesOnly(bool keyframesOnly) override { told.push_back(keyframesOnly); }

  std::deque<std::optional<ErrorCode>> reads;
  std::optional<ErrorCode> otherwise = ErrorCode::kUnavailable;
  std::vector<bool> told;  // setKeyframesOnly's calls
};

class RecordingSink final : public FrameSink {
 public:
  CameraCounters& counters() override { return counters_; }
  void attach() override {}
  void detach() override {}
  bool admit(const CapturedPicture&, SteadyClock::time_point) override { return true; }
  void offer(FrameHandle) override {}
  bool keyframesOnly() const override { return idle; }

  bool idle = false;

 private:
  CameraCounters counters_;
};

class StreamSessionTest : public ::testing::Test {
 protected:
  StreamSessionTest() { camera.fps = 100; }

  // A session on this fixture's parts; each frame handed off is kept in `handedOff` (so that
  // with `keep` the pool runs empty), and `stopAfter` frames stop the camera.
  StreamSession session(std::chrono::milliseconds stallTimeout = 200ms) {
    return StreamSession({camera, stallTimeout, sink, *pool, status, health, scratch, stopping,
                          [this](FrameHandle frame, SteadyClock::time_point) {
                            ids.push_back(frame->id);
                            if (keep) handedOff.push_back(std::move(frame));
                            if (ids.size() == stopAfter) stopping = true;
                          }});
  }

  CameraConfig camera;
  RecordingSink sink;
  std::shared_ptr<FramePool> pool = FramePool::create(2);
  CameraStatus status{"test", sink.counters()};
  StreamHealth health{"test", sink.counters()};
  Frame scratch;
  std::atomic<bool> stopping{false};
  ListedSource source;
  std::vector<std::uint64_t> ids;
  std::vector<FrameHandle> handedOff;
  bool keep = false;
  std::size_t stopAfter = 0;
};

TEST_F(StreamSessionTest, SaysStreamingAtTheFirstFrameAndEndsWhenTheSourceIsLost) {
  source.reads = {std::nullopt, std::nullopt, std::nullopt};
  auto s = session();
  const StreamEnd end = s.run(source, SourceInfo{8, 6, 100, "TEST", "listed", "listed", ""});
  EXPECT_EQ(end.reason, "listed failure");
  EXPECT_FALSE(end.ended);
  EXPECT_TRUE(s.streamed());
  EXPECT_EQ(status.state(), CameraState::kStreaming);
  EXPECT_EQ(sink.counters().captured.load(), 3U);
  ASSERT_EQ(ids.size(), 3U);
  EXPECT_LT(ids[0], ids[1]);
  EXPECT_LT(ids[1], ids[2]);
}

TEST_F(StreamSessionTest, TheSourcesEndEndsItForGood) {
  source.otherwise = ErrorCode::kEndOfStream;
  auto s = session();
  const StreamEnd end = s.run(source, SourceInfo{});
  EXPECT_TRUE(end.ended);
  EXPECT_FALSE(s.streamed());
  EXPECT_NE(status.state(), CameraState::kStreaming);
}

TEST_F(StreamSessionTest, OnlyCorruptFramesForTheStallLimitEndIt) {
  source.otherwise = ErrorCode::kInvalidData;
  auto s = session(80ms);  // longer than 5 frame periods (50 ms)
  const StreamEnd end = s.run(source, SourceInfo{});
  EXPECT_FALSE(end.ended);
  EXPECT_NE(end.reason.find("no usable frame for 80 ms"), std::string::npos) << end.reason;
  EXPECT_NE(end.reason.find("listed failure"), std::string::npos) << end.reason;
  EXPECT_GT(health.badFrames(), 0U);
}

TEST_F(StreamSessionTest, AStopEndsItWithNoReason) {
  source.otherwise = std::nullopt;
  stopAfter = 2;
  auto s = session();
  const StreamEnd end = s.run(source, SourceInfo{});
  EXPECT_TRUE(end.reason.empty());
  EXPECT_FALSE(end.ended);
  EXPECT_EQ(ids.size(), 2U);
}

TEST_F(StreamSessionTest, FramesReadWithThePoolEmptyAreDroppedAndCounted) {
  source.reads = {std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  keep = true;  // the pool's two frames stay out
  auto s = session();
  s.run(source, SourceInfo{});
  EXPECT_EQ(ids.size(), 2U);
  EXPECT_EQ(sink.counters().captured.load(), 4U);
  EXPECT_EQ(sink.counters().dropped.load(), 2U);
}

TEST_F(StreamSessionTest, TheSourceIsToldWhenTheSinkWantsKeyframesOnlyAndWhenNoLonger) {
  source.reads = {std::nullopt, std::nullopt};
  sink.idle = true;
  auto s = session();
  s.run(source, SourceInfo{});
  EXPECT_EQ(source.told, std::vector<bool>{true}) << "told once, not at every frame";
  source.reads = {std::nullopt};
  sink.idle = false;
  auto next = session();  // a new session starts as the source opened: every picture
  next.run(source, SourceInfo{});
  EXPECT_EQ(source.told, std::vector<bool>{true}) << "a new session's source was not told";
}

}  // namespace
}  // namespace vigil
