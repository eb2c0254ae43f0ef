#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
}

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <vector>

// A made-up MPEG-4 part 2 stream whose pictures can be told apart, for the rooms that decide
// which of a stream's packets its decoder decodes (PictureSkipping, KeyframeBacklog): which
// picture a decoder gave is read back from the picture itself, so a test says "picture 14". A
// picture counts as picture n only when it is picture n as decoding the whole stream gives it:
// one decoded from references that were skipped is none.
namespace vigil::testing {

struct AvPacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct AvFrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct AvCodecContextFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
using PacketPtr = std::unique_ptr<AVPacket, AvPacketFree>;
using FramePtr = std::unique_ptr<AVFrame, AvFrameFree>;
using DecoderPtr = std::unique_ptr<AVCodecContext, AvCodecContextFree>;

inline FramePtr blankFrame() { return FramePtr(av_frame_alloc()); }

// 64x32 pictures, 30 a second, of still noise, but for a 16x16 window at the top left onto a
// noise strip that moves a pixel to the left from one picture to the next (each picture's window
// is its reference's moved: an encoder codes it as motion, so a picture decoded from the wrong
// reference shows another picture's window, or none). On the pictures `busy` says, the right
// half is noise new in every picture (somebody walking in: many times the bytes of a still
// picture between keyframes). A keyframe every `keyframeEvery` pictures (at most 600, the
// encoder's limit) and `bFrames` B-frames between references; quantizer 2, no scene-change
// keyframes.
class NumberedStream {
 public:
  static constexpr int kWidth = 64;
  static constexpr int kHeight = 32;
  static constexpr int kMostPictures = 1000;

  struct Packet {
    PacketPtr packet;
    int number = 0;  // the picture it codes (its pts)
    bool key = false;
  };

  NumberedStream(int pictures, int keyframeEvery, int bFrames = 0,
                 std::function<bool(int)> busy = {}) {
    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    if (codec == nullptr || pictures > kMostPictures) {
      ADD_FAILURE() << "no MPEG-4 encoder, or too many pictures";
      return;
    }
    DecoderPtr encoder(avcodec_alloc_context3(codec));
    encoder->width = kWidth;
    encoder->height = kHeight;
    encoder->pix_fmt = AV_PIX_FMT_YUV420P;
    encoder->time_base = AVRational{1, 30};
    encoder->framerate = AVRational{30, 1};
    encoder->gop_size = keyframeEvery;
    encoder->max_b_frames = bFrames;
    encoder->flags |= AV_CODEC_FLAG_QSCALE | AV_CODEC_FLAG_GLOBAL_HEADER;
    encoder->global_quality = FF_QP2LAMBDA * 2;
    av_opt_set_int(encoder->priv_data, "sc_threshold", 1'000'000'000, 0);
    if (avcodec_open2(encoder.get(), codec, nullptr) < 0) {
      ADD_FAILURE() << "cannot open the MPEG-4 encoder";
      return;
    }
    extradata_.assign(encoder->extradata, encoder->extradata + encoder->extradata_size);
    std::mt19937 noise(7);
    background_.resize(static_cast<std::size_t>(kWidth * kHeight));
    for (auto& b : background_) b = static_cast<std::uint8_t>(noise() & 0xFF);
    strip_.resize(static_cast<std::size_t>(kWindow * (kWindow + pictures)));
    for (auto& t : strip_) t = static_cast<std::uint8_t>(noise() & 0xFF);
    FramePtr picture = blankFrame();
    picture->format = AV_PIX_FMT_YUV420P;
    picture->width = kWidth;
    picture->height = kHeight;
    av_frame_get_buffer(picture.get(), 0);
    for (int n = 0; n < pictures; ++n) {
      av_frame_make_writable(picture.get());
      draw(*picture, n, pictures, busy && busy(n), noise);
      picture->pts = n;
      avcodec_send_frame(encoder.get(), picture.get());
      receive(*encoder);
    }
    avcodec_send_frame(encoder.get(), nullptr);
    receive(*encoder);
    decodeAll();
  }

  // The packets in decoding order.
  const std::vector<Packet>& packets() const { return packets_; }

  // As a stream that never flags its keyframes: the packets say none is one (the decoder still
  // knows an intra picture when it decodes one).
  void unflagKeyframes() {
    for (Packet& p : packets_) {
      p.packet->flags &= ~AV_PKT_FLAG_KEY;
      p.key = false;
    }
  }

  // A decoder for the stream, just opened.
  DecoderPtr openDecoder() const {
    const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_MPEG4);
    DecoderPtr decoder(avcodec_alloc_context3(codec));
    decoder->width = kWidth;
    decoder->height = kHeight;
    decoder->extradata =
        static_cast<std::uint8_t*>(av_mallocz(extradata_.size() + AV_INPUT_BUFFER_PADDING_SIZE));
    std::copy(extradata_.begin(), extradata_.end(), decoder->extradata);
    decoder->extradata_size = static_cast<int>(extradata_.size());
    decoder->thread_count = 1;
    if (avcodec_open2(decoder.get(), codec, nullptr) < 0) ADD_FAILURE() << "no MPEG-4 decoder";
    return decoder;
  }

  // Which picture a decoded picture is: n when it is picture n as decoding the whole stream
  // gives it (within a grey level on average); -1 for none, or for an empty frame.
  int numberOf(const AVFrame& picture) const {
    if (picture.width != kWidth || picture.height != kHeight) return -1;
    for (const auto& [n, luma] : decoded_) {
      long difference = 0;
      for (int y = 0; y < kHeight; ++y) {
        for (int x = 0; x < kWidth; ++x) {
          difference += std::abs(picture.data[0][y * picture.linesize[0] + x] -
                                 luma[static_cast<std::size_t>(y * kWidth + x)]);
        }
      }
      if (difference < kWidth * kHeight) return n;
    }
    return -1;
  }

 private:
  void draw(AVFrame& p, int n, int pictures, bool busy, std::mt19937& noise) const {
    const int stripWidth = kWindow + pictures;
    for (int y = 0; y < kHeight; ++y) {
      for (int x = 0; x < kWidth; ++x) {
        std::uint8_t& pixel = p.data[0][y * p.linesize[0] + x];
        if (x < kWindow && y < kWindow) {
          pixel = strip_[static_cast<std::size_t>(y * stripWidth + x + n)];
        } else if (busy && x >= kWidth / 2) {
          pixel = static_cast<std::uint8_t>(noise() & 0xFF);
        } else {
          pixel = background_[static_cast<std::size_t>(y * kWidth + x)];
        }
      }
    }
    for (int plane = 1; plane < 3; ++plane) {
      for (int y = 0; y < kHeight / 2; ++y) {
        std::fill_n(p.data[plane] + y * p.linesize[plane], kWidth / 2, 128);
      }
    }
  }

  void receive(AVCodecContext& encoder) {
    for (;;) {
      PacketPtr packet(av_packet_alloc());
      if (avcodec_receive_packet(&encoder, packet.get()) != 0) return;
      Packet p;
      p.number = static_cast<int>(packet->pts);
      p.key = (packet->flags & AV_PKT_FLAG_KEY) != 0;
      p.packet = std::move(packet);
      packets_.push_back(std::move(p));
    }
  }

  // Every picture as decoding the whole stream from its start gives it.
  void decodeAll() {
    DecoderPtr decoder = openDecoder();
    FramePtr picture = blankFrame();
    auto take = [&] {
      while (avcodec_receive_frame(decoder.get(), picture.get()) == 0) {
        std::vector<std::uint8_t>& luma = decoded_[static_cast<int>(picture->pts)];
        for (int y = 0; y < kHeight; ++y) {
          const std::uint8_t* row = picture->data[0] + y * picture->linesize[0];
          luma.insert(luma.end(), row, row + kWidth);
        }
      }
    };
    for (const Packet& p : packets_) {
      avcodec_send_packet(decoder.get(), p.packet.get());
      take();
    }
    avcodec_send_packet(decoder.get(), nullptr);
    take();
    if (decoded_.size() != packets_.size()) ADD_FAILURE() << "the stream does not decode whole";
  }

  std::vector<std::uint8_t> extradata_;
  static constexpr int kWindow = 16;
  std::vector<std::uint8_t> background_;  // kHeight rows of kWidth
  std::vector<std::uint8_t> strip_;       // kWindow rows of kWindow + pictures
  std::vector<Packet> packets_;
  std::map<int, std::vector<std::uint8_t>> decoded_;  // the luma of picture n
};

}  // namespace vigil::testing
