#pragma once

#include <string>
#include <string_view>

#include "foundation/error.h"

namespace vigil {

// An ONNX model's bytes with the spatial size of its inputs left free: what ONNX Runtime needs
// to run a graph that works at any size (YOLOX's: its Resize takes scales, its Reshapes -1) on
// pictures smaller than the size its file declares (ModelManifest's input.any_size).
//
// Only declarations change, never a node or a weight (the file on disk, verified by its sha256,
// is not touched): every graph input of rank 4 gets symbolic height and width (dims 2 and 3);
// every graph output's dimensions between its first and its last become symbolic (YOLOX's
// anchors: [1, 3549, 85] at 416x416 is [1, anchors, 85]); the intermediate shapes the file
// records (the graph's value_info, a hint for runtimes) are dropped, as they were inferred for
// the declared size. `where` names the file in errors; bytes that are not an ONNX model's
// protobuf are kInvalidData.
Expected<std::string> freeSpatialSize(std::string_view model, const std::string& where);

}  // namespace vigil
