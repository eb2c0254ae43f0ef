#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vigil::testing {

// A JPEG made undecodable where no check before the decoder looks: its first Huffman table
// claims 4080 codes (at most 256 exist). Its markers and declared size stay right, so it passes
// the capture-time check (checkJpegFrame) and only libjpeg refuses it.
inline std::vector<std::uint8_t> withBogusHuffmanTable(std::vector<std::uint8_t> bytes) {
  for (std::size_t i = 2; i + 21 < bytes.size(); ++i) {
    if (bytes[i] == 0xFF && bytes[i + 1] == 0xC4) {
      for (std::size_t k = 0; k < 16; ++k) bytes[i + 5 + k] = 0xFF;
      return bytes;
    }
  }
  ADD_FAILURE() << "no Huffman table in the JPEG";
  return bytes;
}

}  // namespace vigil::testing
