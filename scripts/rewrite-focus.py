#!/usr/bin/python3
"""Writes a YOLOX ONNX model with its Focus stem (eight strided Slices and a Concat: the picture
cut into four 2x2 phases, 12 channels at half size) and the 3x3 convolution after it replaced by
one 6x6 convolution of stride 2 on the picture, as YOLOv5 did in its version 6. The same
arithmetic: output (i, j) of the 3x3 conv reads phase (a, b) at half-size offsets -1..1, that is
picture rows 2i-2..2i+3 and columns 2j-2..2j+3, the conv's zero padding becoming 2 pixels of
zeros around the picture. Outputs differ only by float rounding (bench/int8-cpu.md: 1.5e-5).

  scripts/rewrite-focus.py IN.onnx OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def slice_phase(node, inits):
    """(axis, start) of a step-2 Slice: which phase of which axis it keeps."""
    starts, _, axes, steps = (numpy_helper.to_array(inits[i]).item() for i in node.input[1:5])
    if steps != 2:
        raise SystemExit(f"rewrite-focus: {node.name}: a Slice of step {steps}, not Focus's 2")
    return axes, starts


def focus_phases(graph, concat, inits):
    """For each Concat input, the (row phase, column phase) its two Slices keep."""
    producers = {o: n for n in graph.node for o in n.output}
    phases = []
    for name in concat.input:
        cols = producers[name]
        rows = producers[cols.input[0]]
        (ax_r, a), (ax_c, b) = slice_phase(rows, inits), slice_phase(cols, inits)
        if (ax_r, ax_c) != (2, 3) or rows.input[0] != graph.input[0].name:
            raise SystemExit("rewrite-focus: the stem is not YOLOX's Focus")
        phases.append((a, b))
    return phases


def rewrite(model):
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    concat = next(n for n in graph.node if n.op_type == "Concat")
    conv = next(n for n in graph.node if n.op_type == "Conv")
    if conv.input[0] != concat.output[0]:
        raise SystemExit("rewrite-focus: the first Conv does not read the Focus Concat")
    phases = focus_phases(graph, concat, inits)
    weights = numpy_helper.to_array(inits[conv.input[1]])
    channels = weights.shape[1] // len(phases)
    stem = np.zeros((weights.shape[0], channels, 6, 6), dtype=weights.dtype)
    for k, (a, b) in enumerate(phases):
        for di in range(3):
            for dj in range(3):
                stem[:, :, 2 * di + a, 2 * dj + b] = weights[:, k * channels:(k + 1) * channels, di, dj]
    name = conv.input[1] + "_stem6x6"
    graph.initializer.append(numpy_helper.from_array(stem, name))
    replaced = helper.make_node("Conv", [graph.input[0].name, name, conv.input[2]], list(conv.output),
                                name="stem_conv6x6", kernel_shape=[6, 6], pads=[2, 2, 2, 2],
                                strides=[2, 2], dilations=[1, 1], group=1)
    nodes = list(graph.node)
    kept = nodes[nodes.index(conv) + 1:]
    used = {i for n in kept for i in n.input} | {replaced.input[2]}
    del graph.node[:]
    graph.node.extend([replaced] + kept)
    unused = [i for i in graph.initializer if i.name not in used and i.name != name]
    for i in unused:
        graph.initializer.remove(i)
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    onnx.save(rewrite(onnx.load(sys.argv[1])), sys.argv[2])
