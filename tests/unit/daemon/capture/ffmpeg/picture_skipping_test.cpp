// Which of a stream's pictures the decoder decodes (PictureSkipping), on its own, on a made-up
// stream whose pictures can be told apart (numbered_stream.h), fed packet by packet as
// FfmpegReader feeds it: an idle camera's keyframes only, a resume that replays from the last
// keyframe or waits for the next, a wake by the skipped packets' sizes, B-frames not decoded, and
// a picture stream's keyframe now and then. On real clips through FfmpegReader in
// captured_picture_test.cpp.
#include "daemon/capture/ffmpeg/picture_skipping.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "tests/unit/daemon/capture/ffmpeg/numbered_stream.h"

namespace vigil {
namespace {

using testing::NumberedStream;
using Verdict = PictureSkipping::Verdict;

// FfmpegReader's loop around a PictureSkipping, one packet at a time: a due replay first, then
// the packet's verdict: sent (every picture the decoder has then is delivered), sent and drained
// (the newest delivered), kept (a wake replays at once) or kept only.
class SkippingRig {
 public:
  explicit SkippingRig(const NumberedStream& stream, double secondsPerPacket = 1.0 / 30)
      : stream_(stream), secondsPerPacket_(secondsPerPacket), decoder_(stream.openDecoder()) {
    skipping.attach(decoder_.get());
  }
  ~SkippingRig() { skipping.detach(); }
  SkippingRig(const SkippingRig&) = delete;
  SkippingRig& operator=(const SkippingRig&) = delete;

  // The packets at decoding positions `from` to `through`, `seconds` from their positions; the
  // numbers of the pictures delivered meanwhile.
  std::vector<int> feed(std::size_t from, std::size_t through) {
    std::vector<int> delivered;
    for (std::size_t at = from; at <= through && at < stream_.packets().size(); ++at) {
      if (skipping.replayDue() && skipping.replay(scratch_.get(), newest_.get())) {
        deliver(*newest_, at, delivered);
      }
      const AVPacket* packet = stream_.packets()[at].packet.get();
      const Verdict verdict = skipping.admit(packet, static_cast<double>(at) * secondsPerPacket_);
      verdicts.push_back(verdict);
      if (verdict == Verdict::kWake) {
        if (skipping.replay(scratch_.get(), newest_.get())) deliver(*newest_, at, delivered);
        continue;
      }
      if (verdict == Verdict::kKeep) continue;
      EXPECT_EQ(avcodec_send_packet(decoder_.get(), packet), 0) << "packet " << at;
      if (verdict == Verdict::kSendAndDrain) {
        if (skipping.drainKeyframe(scratch_.get(), newest_.get())) {
          deliver(*newest_, at, delivered);
        }
        continue;
      }
      while (avcodec_receive_frame(decoder_.get(), scratch_.get()) == 0) {
        deliver(*scratch_, at, delivered);
      }
    }
    next_ = through + 1;
    return delivered;
  }
  // The packets from where the last feed ended through `through`.
  std::vector<int> feedThrough(std::size_t through) { return feed(next_, through); }
  // The rest of the stream, and what the decoder holds at its end (a reader's flush).
  std::vector<int> feedToEnd() {
    std::vector<int> delivered = feed(next_, stream_.packets().size() - 1);
    avcodec_send_packet(decoder_.get(), nullptr);
    while (avcodec_receive_frame(decoder_.get(), scratch_.get()) == 0) {
      deliver(*scratch_, stream_.packets().size(), delivered);
    }
    return delivered;
  }
  // The source opened again: a new decoder from the start of the stream.
  void reopen() {
    skipping.detach();
    decoder_ = stream_.openDecoder();
    skipping.attach(decoder_.get());
    next_ = 0;
  }

  // The decoding position of the packet after which each picture was delivered, in order.
  std::vector<std::size_t> deliveredAt;
  std::vector<Verdict> verdicts;  // of every packet fed, in order
  PictureSkipping skipping;

 private:
  void deliver(const AVFrame& picture, std::size_t at, std::vector<int>& delivered) {
    delivered.push_back(stream_.numberOf(picture));
    deliveredAt.push_back(at);
  }

  const NumberedStream& stream_;
  double secondsPerPacket_;
  testing::DecoderPtr decoder_;
  testing::FramePtr scratch_ = testing::blankFrame();
  testing::FramePtr newest_ = testing::blankFrame();
  std::size_t next_ = 0;
};

std::vector<int> numbersFromTo(int first, int last) {
  std::vector<int> out;
  for (int n = first; n <= last; ++n) out.push_back(n);
  return out;
}

// The numbers of the pictures other pictures refer to (I and P: not the B-frames), in order.
std::vector<int> referencePictures(const NumberedStream& stream) {
  std::vector<int> out;
  int newest = -1;
  for (const auto& p : stream.packets()) {
    if (p.number > newest) out.push_back(p.number);  // decoded ahead of the B-frames before it
    newest = std::max(newest, p.number);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(PictureSkippingTest, AnIdleCameraDecodesOnlyTheKeyframes) {
  const NumberedStream stream(30, 10);
  SkippingRig rig(stream);
  EXPECT_FALSE(rig.skipping.skippingToKeyframe());
  EXPECT_EQ(rig.feedThrough(2), numbersFromTo(0, 2)) << "every picture until idle";
  rig.skipping.setKeyframesOnly(true);
  EXPECT_TRUE(rig.skipping.skippingToKeyframe());
  EXPECT_EQ(rig.feedToEnd(), (std::vector<int>{10, 20}));
  EXPECT_EQ(rig.verdicts[10], Verdict::kSendAndDrain);
  EXPECT_EQ(rig.verdicts[11], Verdict::kSend) << "sent, and skipped by the decoder";
  EXPECT_TRUE(rig.skipping.skippingToKeyframe());
}

TEST(PictureSkippingTest, ResumingReplaysFromTheLastKeyframeToTheNewestPacketAtOnce) {
  const NumberedStream stream(30, 10);
  SkippingRig rig(stream);
  rig.feedThrough(2);
  rig.skipping.setKeyframesOnly(true);
  EXPECT_EQ(rig.feedThrough(14), std::vector<int>{10});
  rig.skipping.setKeyframesOnly(false);
  EXPECT_TRUE(rig.skipping.replayDue());
  EXPECT_FALSE(rig.skipping.skippingToKeyframe());
  EXPECT_EQ(rig.feedThrough(17), (std::vector<int>{14, 15, 16, 17}))
      << "picture 14, decoded from keyframe 10, before the next packet";
  EXPECT_EQ(rig.deliveredAt[rig.deliveredAt.size() - 4], 15U) << "replayed before packet 15";
  EXPECT_FALSE(rig.skipping.replayDue());
  EXPECT_EQ(rig.feedToEnd(), numbersFromTo(18, 29));
}

TEST(PictureSkippingTest, ResumingWithNoKeyframeSinceGoingIdleSkipsToTheNextKeyframe) {
  const NumberedStream stream(30, 10);
  SkippingRig rig(stream);
  rig.feedThrough(2);
  rig.skipping.setKeyframesOnly(true);
  EXPECT_TRUE(rig.feedThrough(6).empty());
  rig.skipping.setKeyframesOnly(false);
  EXPECT_FALSE(rig.skipping.replayDue()) << "nothing kept to replay";
  EXPECT_TRUE(rig.skipping.skippingToKeyframe())
      << "pictures 7 to 9 would be decoded from references skipped";
  EXPECT_EQ(rig.feedThrough(12), (std::vector<int>{10, 11, 12}));
  EXPECT_FALSE(rig.skipping.skippingToKeyframe());
}

TEST(PictureSkippingTest, AStreamThatNeverFlagsAKeyframeResumesAfter600Packets) {
  NumberedStream stream(620, 600);  // intra pictures 0 and 600, neither flagged
  stream.unflagKeyframes();
  SkippingRig rig(stream);
  rig.feedThrough(2);
  rig.skipping.setKeyframesOnly(true);
  rig.feedThrough(4);
  rig.skipping.setKeyframesOnly(false);
  EXPECT_EQ(rig.feedThrough(603), std::vector<int>{600})
      << "599 packets awaited a keyframe packet (600 is the intra picture the decoder skipping "
         "to keyframes decodes itself)";
  EXPECT_TRUE(rig.skipping.skippingToKeyframe());
  // The 600th resumes the decoding: its picture, decoded from references skipped, is damaged
  // (the price of a stream that never says where to start).
  EXPECT_EQ(rig.feedThrough(604).size(), 1U);
  EXPECT_FALSE(rig.skipping.skippingToKeyframe());
  EXPECT_EQ(rig.deliveredAt.back(), 604U);
}

// Somebody walks in (pictures 30 to 50) between keyframes 0 and 60 of an idle camera.
bool walkerIn30To50(int n) { return n >= 30 && n <= 50; }

TEST(PictureSkippingTest, SkippedPacketsSayingThePictureChangedWakeTheDecodingUntilTheKeyframe) {
  const NumberedStream stream(75, 60, 0, walkerIn30To50);
  SkippingRig rig(stream);
  rig.skipping.setKeyframesOnly(true);
  EXPECT_EQ(rig.feedThrough(29), std::vector<int>{0}) << "the still pictures are skipped";
  std::size_t woke = 30;
  std::vector<int> atWake;
  for (; woke < 60 && atWake.empty(); ++woke) atWake = rig.feedThrough(woke);
  --woke;
  ASSERT_EQ(rig.verdicts[woke], Verdict::kWake);
  EXPECT_LT(woke, 30U + 15U) << "within half a second of packets";
  EXPECT_EQ(atWake, std::vector<int>{static_cast<int>(woke)})
      << "the waking packet's picture, decoded from keyframe 0 at once";
  EXPECT_FALSE(rig.skipping.skippingToKeyframe());
  EXPECT_EQ(rig.feedThrough(59), numbersFromTo(static_cast<int>(woke) + 1, 59))
      << "every picture after it, until the keyframe";
  EXPECT_EQ(rig.feedToEnd(), std::vector<int>{60}) << "from the keyframe on, skipping again";
  EXPECT_TRUE(rig.skipping.skippingToKeyframe());
}

TEST(PictureSkippingTest, ToldToResumeWhileWokenItDecodesOnPastTheKeyframe) {
  const NumberedStream stream(75, 60, 0, walkerIn30To50);
  SkippingRig rig(stream);
  rig.skipping.setKeyframesOnly(true);
  rig.feedThrough(29);
  std::size_t woke = 30;
  while (woke < 60 && rig.feedThrough(woke).empty()) ++woke;
  ASSERT_EQ(rig.verdicts.back(), Verdict::kWake);
  rig.skipping.setKeyframesOnly(false);  // the motion check saw the walker
  EXPECT_FALSE(rig.skipping.replayDue()) << "decoding every picture already";
  EXPECT_EQ(rig.feedToEnd(), numbersFromTo(static_cast<int>(woke) + 1, 74));
}

TEST(PictureSkippingTest, SkippingNonReferencePicturesLeavesOutTheBFrames) {
  const NumberedStream stream(30, 12, 2);
  const std::vector<int> references = referencePictures(stream);
  ASSERT_LT(references.size(), 20U) << "the stream has B-frames";
  SkippingRig rig(stream);
  rig.skipping.setSkipNonReference(true);
  std::vector<int> delivered = rig.feedToEnd();
  std::sort(delivered.begin(), delivered.end());
  EXPECT_EQ(delivered, references);

  rig.reopen();  // a new decoder: every picture again
  delivered = rig.feedToEnd();
  EXPECT_EQ(delivered, numbersFromTo(0, 29));
}

TEST(PictureSkippingTest, WhileIdleSkippingNonReferencePicturesStillDecodesOnlyKeyframes) {
  const NumberedStream stream(30, 12, 2);
  SkippingRig rig(stream);
  rig.skipping.setKeyframesOnly(true);
  rig.skipping.setSkipNonReference(true);
  EXPECT_EQ(rig.feed(0, 29), (std::vector<int>{0, 12, 24}));
  rig.skipping.setKeyframesOnly(false);
  EXPECT_TRUE(rig.skipping.replayDue());
}

// A decoder that reorders pictures (B-frames) holds a keyframe's picture until the next
// reference; idle, the next reference is skipped, so the keyframe is drained at once.
TEST(PictureSkippingTest, AnIdleKeyframeIsGivenAtItsPacketEvenWithBFrames) {
  const NumberedStream stream(30, 12, 2);
  SkippingRig rig(stream);
  rig.skipping.setKeyframesOnly(true);
  std::vector<int> keyframes;
  std::vector<std::size_t> keyPackets;
  for (std::size_t at = 0; at < stream.packets().size(); ++at) {
    if (!stream.packets()[at].key) continue;
    keyframes.push_back(stream.packets()[at].number);
    keyPackets.push_back(at);
  }
  ASSERT_EQ(keyframes, (std::vector<int>{0, 12, 24}));
  EXPECT_EQ(rig.feed(0, 29), keyframes);
  EXPECT_EQ(rig.deliveredAt, keyPackets) << "each keyframe delivered at its own packet";
}

TEST(PictureSkippingTest, DetachingForgetsThatTheCameraWasIdle) {
  const NumberedStream stream(30, 10);
  SkippingRig rig(stream);
  rig.skipping.setKeyframesOnly(true);
  rig.feedThrough(14);
  rig.reopen();
  EXPECT_FALSE(rig.skipping.skippingToKeyframe());
  EXPECT_FALSE(rig.skipping.replayDue()) << "the packets kept are gone with the old decoder";
  EXPECT_EQ(rig.feedToEnd(), numbersFromTo(0, 29));
}

// A picture stream, 2 packets a second with a keyframe every 4 packets (every 2 s of video), a
// keyframe decoded once 6 s passed since the last: the others, and the packets after them, kept and
// not sent.
TEST(PictureSkippingTest, APictureStreamDecodesAKeyframeOnlyEveryFewSecondsAndNothingWakesIt) {
  const NumberedStream stream(30, 4, 0, [](int n) { return n >= 13 && n <= 22; });
  SkippingRig rig(stream, 0.5);
  rig.skipping.setPicturesOnly(true, 6);
  rig.reopen();  // kept by detach() and attach()
  rig.skipping.setKeyframesOnly(true);
  EXPECT_EQ(rig.feed(0, 29), (std::vector<int>{0, 12, 24}))
      << "the keyframes at 0, 6 (6 s after 0) and 12 s; those at 2, 4, 8, 10 and 14 s kept";
  EXPECT_EQ(rig.verdicts[1], Verdict::kSend) << "after a keyframe decoded: sent, skipped";
  EXPECT_EQ(rig.verdicts[4], Verdict::kKeep);
  EXPECT_EQ(rig.verdicts[5], Verdict::kKeep) << "after a keyframe kept: kept";
  EXPECT_EQ(rig.verdicts[12], Verdict::kSendAndDrain);
  for (std::size_t at = 13; at <= 22; ++at) {
    EXPECT_NE(rig.verdicts[at], Verdict::kWake) << "packet " << at << ": no motion check to wake";
  }
}

TEST(PictureSkippingTest, APictureStreamDecodesAKeyframeAtOnceWhenTheVideoStartsAgain) {
  const NumberedStream stream(30, 4);
  SkippingRig rig(stream, 0.5);
  rig.skipping.setPicturesOnly(true, 6);
  rig.skipping.setKeyframesOnly(true);
  rig.feed(0, 29);  // the last keyframe decoded at 12 s
  EXPECT_EQ(rig.feed(0, 9), std::vector<int>{0}) << "the file looped: its 0 s is due at once";
}

TEST(PictureSkippingTest, APictureStreamResumedAfterAKeptKeyframeReplaysFromIt) {
  const NumberedStream stream(30, 4);
  SkippingRig rig(stream, 0.5);
  rig.skipping.setPicturesOnly(true, 6);
  rig.skipping.setKeyframesOnly(true);
  EXPECT_EQ(rig.feedThrough(9), std::vector<int>{0}) << "keyframe 8 and packet 9 kept";
  rig.skipping.setKeyframesOnly(false);
  ASSERT_TRUE(rig.skipping.replayDue());
  EXPECT_EQ(rig.feedThrough(11), (std::vector<int>{9, 10, 11}));
}

}  // namespace
}  // namespace vigil
