#!/usr/bin/python3
"""Writes YOLOX-nano as a model that runs at its declared 416x416 only, for the test of a
manifest that says input.any_size over a graph that cannot: the head's three Reshapes get fixed
sizes (52x52, 26x26 and 13x13 anchors) instead of -1; nothing else changes. The manifest is the
shipped one, its file's sha256 the new file's.

usage: make_fixed_size_model.py MODEL_DIR OUT_DIR
"""

import hashlib
import os
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    model_dir, out_dir = sys.argv[1], sys.argv[2]
    model = onnx.load(os.path.join(model_dir, "yolox_nano.onnx"))
    graph = model.graph
    shapes = {n.input[1] for n in graph.node if n.op_type == "Reshape"}
    anchors = iter([52 * 52, 26 * 26, 13 * 13])
    fixed = 0
    for init in graph.initializer:
        if init.name in shapes and numpy_helper.to_array(init).tolist() == [1, 85, -1]:
            init.CopyFrom(numpy_helper.from_array(
                np.array([1, 85, next(anchors)], dtype=np.int64), init.name))
            fixed += 1
    for node in graph.node:
        if node.op_type == "Constant" and node.output[0] in shapes:
            value = node.attribute[0]
            if numpy_helper.to_array(value.t).tolist() == [1, 85, -1]:
                value.t.CopyFrom(numpy_helper.from_array(
                    np.array([1, 85, next(anchors)], dtype=np.int64)))
                fixed += 1
    if fixed != 3:
        sys.exit(f"expected YOLOX's three head Reshapes to [1, 85, -1], fixed {fixed}")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "yolox_nano.onnx")
    onnx.save(model, path)
    data = open(path, "rb").read()
    manifest = open(os.path.join(model_dir, "model.yaml")).read()
    accepted = (f"    accepted:\n      - {{sha256: {hashlib.sha256(data).hexdigest()}, "
                f"size: {len(data)}, origin: \"tests/tools/make_fixed_size_model.py\"}}\n")
    manifest, count = re.subn(r"    accepted:\n(      - .*\n)+", accepted, manifest)
    if count != 1:
        sys.exit("the shipped manifest's accepted list was not found")
    with open(os.path.join(out_dir, "model.yaml"), "w") as out:
        out.write(manifest)


if __name__ == "__main__":
    main()
