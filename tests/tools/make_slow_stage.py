#!/usr/bin/python3
"""Writes a model bundle whose Vitis AI stage is slow on purpose, for the tests of the run
timeout with ONNX Runtime's real CPU provider (no NPU needed).

The stage (npu.onnx, opset 13, a QDQ model like the integer bundles) takes a [1, 3, 32, 32]
picture and returns [1, 21, 6] (YOLOX's layout for a 32x32 input, strides 8/16/32, one class).
Its cost depends on the picture: a Loop runs round(max(pixel) * ITERATIONS_PER_LEVEL) times a
128x128 matrix product (with the identity, so the numbers stay put), so a black picture (the
canary, canary.ppm) costs nothing and a bright one as long as the test wants. ONNX Runtime
checks its terminate flag between nodes, the loop's included, so a run cut by
RunOptionsSetTerminate ends within one iteration.

--canary-level N makes the canary picture that bright instead (a canary that hangs too).

usage: make_slow_stage.py OUT_DIR [--iterations-per-level N] [--timeout-ms MS] [--canary-level N]
"""

import argparse
import hashlib
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SIZE = 32
ANCHORS = (SIZE // 8) ** 2 + (SIZE // 16) ** 2 + (SIZE // 32) ** 2  # 21
CHANNELS = 6  # box 4, objectness, one class


def loop_body():
    state_in = helper.make_tensor_value_info("state_in", TensorProto.FLOAT, [128, 128])
    iteration = helper.make_tensor_value_info("iteration", TensorProto.INT64, [])
    cond_in = helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])
    cond_out = helper.make_tensor_value_info("cond_out", TensorProto.BOOL, [])
    state_out = helper.make_tensor_value_info("state_out", TensorProto.FLOAT, [128, 128])
    identity = numpy_helper.from_array(np.eye(128, dtype=np.float32), "eye")
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("MatMul", ["state_in", "eye"], ["state_out"]),
    ]
    return helper.make_graph(nodes, "body", [iteration, cond_in, state_in],
                             [cond_out, state_out], [identity])


def model(iterations_per_level):
    images = helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, SIZE, SIZE])
    output = helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, ANCHORS, CHANNELS])
    init = [
        numpy_helper.from_array(np.array(iterations_per_level, dtype=np.float32), "per_level"),
        numpy_helper.from_array(np.array(True), "true"),
        numpy_helper.from_array(np.full((128, 128), 0.5, dtype=np.float32), "state0"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "q_scale"),
        numpy_helper.from_array(np.array(0, dtype=np.uint8), "q_zero"),
        numpy_helper.from_array(np.array([1, 1, 1], dtype=np.int64), "shape111"),
        numpy_helper.from_array(np.zeros((1, ANCHORS, CHANNELS), dtype=np.float32), "zeros"),
        numpy_helper.from_array(np.array(0.0, dtype=np.float32), "nothing"),
    ]
    nodes = [
        helper.make_node("ReduceMax", ["images"], ["peak"], keepdims=0),
        helper.make_node("Mul", ["peak", "per_level"], ["trips_f"]),
        helper.make_node("Cast", ["trips_f"], ["trips"], to=TensorProto.INT64),
        helper.make_node("Loop", ["trips", "true", "state0"], ["state_final"], body=loop_body()),
        helper.make_node("ReduceSum", ["state_final"], ["state_sum"], keepdims=0),
        helper.make_node("Mul", ["state_sum", "nothing"], ["loop_term"]),
        # The picture's level through a uint8 QuantizeLinear/DequantizeLinear pair (exact for
        # 0..255 with scale 1): a QDQ model, as the integer bundles are.
        helper.make_node("ReduceMax", ["images"], ["peak_kept"], keepdims=1),
        helper.make_node("QuantizeLinear", ["peak_kept", "q_scale", "q_zero"], ["peak_q"]),
        helper.make_node("DequantizeLinear", ["peak_q", "q_scale", "q_zero"], ["peak_dq"]),
        helper.make_node("Reshape", ["peak_dq", "shape111"], ["level"]),
        helper.make_node("Add", ["zeros", "level"], ["levels"]),
        helper.make_node("Add", ["levels", "loop_term"], ["output"]),
    ]
    graph = helper.make_graph(nodes, "slow_stage", [images], [output], init)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="vigil tests/tools/make_slow_stage.py")
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def canary_ppm(level):
    return b"P6\n%d %d\n255\n" % (SIZE, SIZE) + bytes([level]) * (SIZE * SIZE * 3)


def listed(name, data, origin):
    return (f"  {name}:\n    accepted:\n    - {{sha256: {hashlib.sha256(data).hexdigest()}, "
            f"size: {len(data)}, origin: '{origin}'}}\n")


def manifest(onnx_bytes, ppm, timeout_ms):
    sha = hashlib.sha256(onnx_bytes).hexdigest()
    return f"""# Written by tests/tools/make_slow_stage.py: a stage slow on purpose, for the run timeout's tests.
schema: 1
name: slow-stage
description: 'a Vitis AI stage whose run lasts as long as the picture is bright (tests only)'
quantization:
  preset: a8w8
  precision: 'uint8 activations (one QuantizeLinear/DequantizeLinear pair), float loop'
  source_model: {{file: npu.onnx, sha256: {sha}}}
  calibration:
    frames: 1
    sources:
    - {{file: canary.ppm, sha256: {hashlib.sha256(ppm).hexdigest()}, frames: [0]}}
files:
{listed("npu.onnx", onnx_bytes, "tests/tools/make_slow_stage.py")}{listed("canary.ppm", ppm, "a picture of one level")}input:
  width: {SIZE}
  height: {SIZE}
  channel_order: bgr
  value_range: [0, 255]
  letterbox: {{anchor: top-left, pad_value: 114}}
stages:
- name: npu
  runtime: onnx
  file: npu.onnx
  inputs:
  - {{name: images, shape: [1, 3, {SIZE}, {SIZE}], layout: NCHW, dtype: float32}}
  outputs:
  - {{name: output, shape: [1, {ANCHORS}, {CHANNELS}], layout: anchors-by-channels, dtype: float32}}
  npu:
    runtime: vitisai
    compiler: int8
    timeout_ms: {timeout_ms}
    canary_tolerance: 0.001
    canary_interval_s: 0
    canary: {{image: canary.ppm}}
postprocess:
  type: yolox
  strides: [8, 16, 32]
  scores_activated: true
  score: objectness-times-class
  default_min_score: 0.3
  default_nms_iou: 0.45
  default_classes: [person]
  class_names: [person]
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--iterations-per-level", type=float, default=2000.0)
    parser.add_argument("--timeout-ms", type=int, default=300)
    parser.add_argument("--canary-level", type=int, default=0, choices=range(256), metavar="0..255")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    onnx_bytes = model(args.iterations_per_level).SerializeToString()
    ppm = canary_ppm(args.canary_level)
    with open(os.path.join(args.out, "npu.onnx"), "wb") as f:
        f.write(onnx_bytes)
    with open(os.path.join(args.out, "canary.ppm"), "wb") as f:
        f.write(ppm)
    with open(os.path.join(args.out, "model.yaml"), "w") as f:
        f.write(manifest(onnx_bytes, ppm, args.timeout_ms))


if __name__ == "__main__":
    main()
