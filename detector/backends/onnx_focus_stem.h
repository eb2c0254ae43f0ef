#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vigil {

// An ONNX model's bytes with YOLOX's Focus stem fused into one convolution, for cpu-ort.
//
// YOLOX begins with "Focus": eight strided Slices cut the picture into its four 2x2 phases, a
// Concat stacks them as 12 channels at half size, and a 3x3 convolution follows. The same
// arithmetic is one 6x6 convolution of stride 2 on the picture, padded by 2 (YOLOv5's version 6
// made this change): output (i, j) of the 3x3 convolution reads phase (a, b) at half-size
// offsets -1..1, that is picture row 2i - 2 + 2di + a and column 2j - 2 + 2dj + b. ONNX Runtime
// runs the Slices and the Concat as copies: the fused graph takes 0.88x of the CPU a frame
// back to back, 0.91x at a camera's pace (bench/fitted-input.md), and its outputs differ from
// the file's by float rounding only.
//
// The file on disk, verified by its sha256, is not touched; in memory the ten nodes become one
// Conv with the weights rearranged, and the initializers and recorded shapes only they used
// are dropped. nullopt when the graph has no such stem (any other model; a stem whose Slices,
// Concat or convolution differ in any way from the above) or keeps weights in other files, and
// the model then runs as it is.
std::optional<std::string> fuseFocusStem(std::string_view model);

}  // namespace vigil
