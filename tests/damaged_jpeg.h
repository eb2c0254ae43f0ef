#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <vector>

#include "tests/model_paths.h"

namespace vigil::testing {

// JPEGs as a flaky link or a USB camera short of bandwidth gives them, made from a real
// photograph: libjpeg decodes each with warnings instead of refusing it.

// The first dev photograph at `size`, as a camera would encode it; empty when the photographs
// are absent.
inline std::vector<std::uint8_t> photographJpeg(cv::Size size = {640, 480}) {
  const auto photographs = cocoPhotographs();
  if (photographs.empty()) return {};
  cv::Mat picture = cv::imread(photographs.front().string(), cv::IMREAD_COLOR);
  cv::resize(picture, picture, size, 0, 0, cv::INTER_AREA);
  std::vector<std::uint8_t> bytes;
  cv::imencode(".jpg", picture, bytes, {cv::IMWRITE_JPEG_QUALITY, 85});
  return bytes;
}

// The first third of `good`, then noise to its length, then the end marker: headers intact,
// the scan garbled ("Corrupt JPEG data: bad Huffman code", "premature end of data segment").
// Noise as a flaky link makes it, FF bytes included, each followed by 00 or a restart marker's
// D0..D7 only: no end or start marker, nor a marker with a length, which a demuxer (FFmpeg's
// MJPEG parser) would split the stream at or skip by, so the picture's bounds stay where they
// were.
inline std::vector<std::uint8_t> damagedJpeg(const std::vector<std::uint8_t>& good,
                                             unsigned seed = 51) {
  std::vector<std::uint8_t> bytes(good.begin(), good.begin() + good.size() / 3);
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> noise(0, 0xFF);
  while (bytes.size() + 2 < good.size()) {
    auto b = static_cast<std::uint8_t>(noise(random));
    if (bytes.back() == 0xFF) b = b % 9 == 0 ? 0x00 : static_cast<std::uint8_t>(0xD0 + b % 8);
    bytes.push_back(b);
  }
  if (bytes.back() == 0xFF) bytes.back() = 0x00;
  bytes.push_back(0xFF);
  bytes.push_back(0xD9);
  return bytes;
}

// The first third of `good`, then only one-bits (FF bytes, each stuffed with its 00) to its
// length, then the end marker: a code no Huffman table has ("Corrupt JPEG data: bad Huffman
// code"), as a link that drops to ones gives it.
inline std::vector<std::uint8_t> onesJpeg(const std::vector<std::uint8_t>& good) {
  std::vector<std::uint8_t> bytes(good.begin(), good.begin() + good.size() / 3);
  if (bytes.back() == 0xFF) bytes.back() = 0x00;
  while (bytes.size() + 4 < good.size()) {
    bytes.push_back(0xFF);
    bytes.push_back(0x00);
  }
  bytes.push_back(0xFF);
  bytes.push_back(0xD9);
  return bytes;
}

// The first half of `good`, then the end marker: the scan cut short ("Corrupt JPEG data:
// premature end of data segment").
inline std::vector<std::uint8_t> truncatedJpeg(const std::vector<std::uint8_t>& good) {
  std::vector<std::uint8_t> bytes(good.begin(), good.begin() + good.size() / 2);
  bytes.push_back(0xFF);
  bytes.push_back(0xD9);
  return bytes;
}

// `good` with `n` stray bytes before its end marker, as UVC webcams send every good picture
// ("Corrupt JPEG data: N extraneous bytes before marker 0xd9"): harmless.
inline std::vector<std::uint8_t> extraneousBytesJpeg(std::vector<std::uint8_t> good,
                                                     std::size_t n = 24) {
  if (good.size() < 2 || good[good.size() - 2] != 0xFF || good.back() != 0xD9) {
    ADD_FAILURE() << "no end marker at the end of the JPEG";
    return good;
  }
  good.insert(good.end() - 2, n, std::uint8_t{0x5A});
  return good;
}

}  // namespace vigil::testing
