// The packets an idle camera's decoder skips, kept from the last keyframe (KeyframeBacklog), on
// their own, with a made-up stream whose pictures can be told apart (numbered_stream.h): what is
// kept and from where, the limit, and a replay that gives the newest picture decoded from the
// keyframe at once.
#include "daemon/capture/ffmpeg/keyframe_backlog.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "tests/unit/daemon/capture/ffmpeg/numbered_stream.h"

namespace vigil {
namespace {

using testing::NumberedStream;

// A packet of a few made-up bytes, a keyframe's or another's: enough for keeping and counting.
testing::PacketPtr madeUpPacket(bool key) {
  testing::PacketPtr packet(av_packet_alloc());
  av_new_packet(packet.get(), 16);
  if (key) packet->flags |= AV_PKT_FLAG_KEY;
  return packet;
}

// The stream's packets at decoding positions `from` to `through` kept in `backlog`.
void keepPackets(KeyframeBacklog& backlog, const NumberedStream& stream, std::size_t from,
                 std::size_t through) {
  for (std::size_t at = from; at <= through; ++at) backlog.keep(stream.packets()[at].packet.get());
}

TEST(KeyframeBacklogTest, PacketsAreKeptFromAKeyframeOnAndAKeyframeStartsAgain) {
  const NumberedStream stream(30, 10);
  KeyframeBacklog backlog;
  keepPackets(backlog, stream, 5, 9);
  EXPECT_EQ(backlog.size(), 0U) << "no keyframe to decode them from";
  keepPackets(backlog, stream, 10, 10);
  EXPECT_EQ(backlog.size(), 1U);
  keepPackets(backlog, stream, 11, 13);
  EXPECT_EQ(backlog.size(), 4U);
  keepPackets(backlog, stream, 14, 20);
  EXPECT_EQ(backlog.size(), 1U) << "keyframe 20 alone";
  backlog.clear();
  EXPECT_EQ(backlog.size(), 0U);
  keepPackets(backlog, stream, 21, 21);
  EXPECT_EQ(backlog.size(), 0U) << "cleared: nothing kept until the next keyframe";
}

TEST(KeyframeBacklogTest, ALongerRunThanTheMostPacketsIsDroppedUntilTheNextKeyframe) {
  KeyframeBacklog backlog;
  backlog.keep(madeUpPacket(true).get());
  for (std::size_t i = 1; i < KeyframeBacklog::kMostPackets; ++i) {
    backlog.keep(madeUpPacket(false).get());
  }
  EXPECT_EQ(backlog.size(), KeyframeBacklog::kMostPackets);
  backlog.keep(madeUpPacket(false).get());
  EXPECT_EQ(backlog.size(), 0U) << "one more: too far back to keep";
  backlog.keep(madeUpPacket(false).get());
  EXPECT_EQ(backlog.size(), 0U);
  backlog.keep(madeUpPacket(true).get());
  EXPECT_EQ(backlog.size(), 1U);
}

TEST(KeyframeBacklogTest, AReplayDecodesFromTheKeyframeToTheNewestPacketAtOnce) {
  const NumberedStream stream(30, 10);
  testing::DecoderPtr decoder = stream.openDecoder();
  testing::FramePtr scratch = testing::blankFrame();
  testing::FramePtr newest = testing::blankFrame();
  for (std::size_t at = 0; at <= 3; ++at) {  // the decoder was decoding pictures 0 to 3
    avcodec_send_packet(decoder.get(), stream.packets()[at].packet.get());
    receiveNewest(decoder.get(), scratch.get(), newest.get());
  }
  ASSERT_EQ(stream.numberOf(*newest), 3);
  KeyframeBacklog backlog;
  keepPackets(backlog, stream, 10, 16);
  backlog.replay(decoder.get(), scratch.get(), newest.get());
  EXPECT_EQ(stream.numberOf(*newest), 16)
      << "picture 16 as decoded from keyframe 10 (from picture 3 it would be picture 4)";
  EXPECT_EQ(backlog.size(), 0U) << "empty after a replay";
}

TEST(KeyframeBacklogTest, AReplayOfTheKeyframeAloneGivesItsPicture) {
  const NumberedStream stream(30, 10);
  testing::DecoderPtr decoder = stream.openDecoder();
  testing::FramePtr scratch = testing::blankFrame();
  testing::FramePtr newest = testing::blankFrame();
  KeyframeBacklog backlog;
  keepPackets(backlog, stream, 20, 20);
  backlog.replay(decoder.get(), scratch.get(), newest.get());
  EXPECT_EQ(stream.numberOf(*newest), 20);
}

// Only the newest picture is delivered, so the pictures nothing refers to (B-frames) are not
// decoded: with two B-frames between references, the newest picture a replay gives is the
// reference before the last one sent (a decoder reorders), never a B-frame.
TEST(KeyframeBacklogTest, AReplaySkipsThePicturesNothingRefersTo) {
  const NumberedStream stream(30, 12, 2);
  // Keyframe 12 (after it, B-frames 10 and 11 of the GOP before), P15, B13, B14, P18, B16.
  std::size_t key = 1;
  while (key < stream.packets().size() && !stream.packets()[key].key) ++key;
  ASSERT_LT(key + 7, stream.packets().size());
  std::vector<int> kept;
  for (std::size_t at = key; at <= key + 7; ++at) kept.push_back(stream.packets()[at].number);
  ASSERT_EQ(kept, (std::vector<int>{12, 10, 11, 15, 13, 14, 18, 16}));

  testing::DecoderPtr decoder = stream.openDecoder();
  testing::FramePtr scratch = testing::blankFrame();
  testing::FramePtr newest = testing::blankFrame();
  KeyframeBacklog backlog;
  keepPackets(backlog, stream, key, key + 7);
  backlog.replay(decoder.get(), scratch.get(), newest.get());
  EXPECT_EQ(stream.numberOf(*newest), 15) << "decoding every picture would have given B-frame 16";
  EXPECT_EQ(decoder->skip_frame, AVDISCARD_NONREF) << "the caller sets skip_frame afterwards";
}

TEST(KeyframeBacklogTest, AReplayOfNothingLeavesNoPicture) {
  const NumberedStream stream(30, 10);
  testing::DecoderPtr decoder = stream.openDecoder();
  testing::FramePtr scratch = testing::blankFrame();
  testing::FramePtr newest = testing::blankFrame();
  avcodec_send_packet(decoder.get(), stream.packets()[0].packet.get());
  ASSERT_TRUE(receiveNewest(decoder.get(), scratch.get(), newest.get()));
  KeyframeBacklog backlog;
  backlog.replay(decoder.get(), scratch.get(), newest.get());
  EXPECT_EQ(newest->width, 0) << "the picture held before is unreferenced";
}

TEST(KeyframeBacklogTest, ReceiveNewestLeavesTheNewestOfThePicturesReady) {
  const NumberedStream stream(30, 12, 2);
  testing::DecoderPtr decoder = stream.openDecoder();
  testing::FramePtr scratch = testing::blankFrame();
  testing::FramePtr newest = testing::blankFrame();
  // The keyframe alone: a decoder that reorders holds it back.
  ASSERT_EQ(avcodec_send_packet(decoder.get(), stream.packets()[0].packet.get()), 0);
  EXPECT_FALSE(receiveNewest(decoder.get(), scratch.get(), newest.get()));
  EXPECT_EQ(newest->width, 0);
  // The next reference frees picture 0, and B-frame 1 decodes at once: two pictures ready.
  ASSERT_EQ(stream.packets()[1].number, 3);
  ASSERT_EQ(stream.packets()[2].number, 1);
  ASSERT_EQ(avcodec_send_packet(decoder.get(), stream.packets()[1].packet.get()), 0);
  ASSERT_EQ(avcodec_send_packet(decoder.get(), stream.packets()[2].packet.get()), 0);
  EXPECT_TRUE(receiveNewest(decoder.get(), scratch.get(), newest.get()));
  EXPECT_EQ(stream.numberOf(*newest), 1);
  EXPECT_FALSE(receiveNewest(decoder.get(), scratch.get(), newest.get()));
  EXPECT_EQ(stream.numberOf(*newest), 1) << "nothing ready: the newest stays";
}

}  // namespace
}  // namespace vigil
