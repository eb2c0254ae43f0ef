#!/usr/bin/python3
"""Cuts a YOLOX ONNX model at named tensors into a backbone and a head and writes a model bundle.

The bundle is a directory with both ONNX parts, a canary (an input tensor of the backbone stage
and, when a reference runner is given, the stage's expected output) and a model.yaml that
extends the source manifest: stage `backbone` (marked for the NPU when an xclbin is given) and
stage `head` (always on the CPU), the NPU section (target, flow, minimum XRT version, kernel,
argument table, device tensors with dtype and quantization), and the sha256 of every file.

The daemon never compiles anything: the xclbin and instruction stream (or instruction ELF, or
for --flow full-elf the one ELF alone) are built offline (IRON / mlir-aie) and passed in with
--xclbin/--instructions. Without them the bundle has no NPU section and runs on the CPU only,
split exactly as the NPU would run it. The argument table follows the mlir-aie convention
(opcode 3, instruction slot, count, then inputs and outputs from index 3); in the ELF flows the
instruction slot and count are passed 0. Edit it for a design with another convention.

Uses Debian's python3-onnx (onnx.utils.Extractor) and python3-yaml; run with /usr/bin/python3.

Example:
  scripts/split-model.py --manifest models/yolox-nano/model.yaml --cut 956,990,1024 \
      --out /tmp/yolox-nano-npu --xclbin design.xclbin --instructions insts.bin \
      --reference-runner build/vigil
"""

import argparse
import copy
import hashlib
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnx.utils
import yaml
from onnx import shape_inference

DTYPES = {"float32": np.float32, "int8": np.int8, "uint8": np.uint8}


def fail(message):
    print(f"split-model: {message}", file=sys.stderr)
    sys.exit(1)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def tensor_shapes(model):
    """Name -> static shape of every graph tensor (inputs, outputs, intermediates)."""
    inferred = shape_inference.infer_shapes(model)
    shapes = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(
        inferred.graph.output
    ):
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if dims and all(d > 0 for d in dims):
            shapes[vi.name] = dims
    return shapes


def canary_input(shape, value_min, value_max, pad_value):
    """A deterministic, image-like NCHW input: smooth gradients and blocks in the value range,
    the bottom third padded like a letterboxed frame."""
    _, c, h, w = shape
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    planes = []
    for ch in range(c):
        p = 127.5 + 100.0 * np.sin((x + 7 * ch) / 23.0) * np.cos((y - 5 * ch) / 17.0)
        p += 25.0 * (((x // 32) + (y // 32) + ch) % 2)
        planes.append(p)
    t = np.clip(np.stack(planes)[None], value_min, value_max).astype(np.float32)
    t[:, :, (2 * h) // 3 :, :] = pad_value
    return np.round(t)


def device_bytes(array, spec):
    """Float tensor -> bytes in the NPU stage's device format (layout, dtype, quantization).

    YCXC8 (mlir-aie's conv2d activations): for each row y, for each block of 8 channels, for each
    x, the block's 8 channels; the channels padded up to a multiple of 8 with zero bytes."""
    a = array.astype(np.float32)
    if spec["dtype"] == "float32":
        values = a
    else:
        info = np.iinfo(DTYPES[spec["dtype"]])
        q = np.clip(np.round(a / spec["scale"]) + spec["zero_point"], info.min, info.max)
        values = q.astype(DTYPES[spec["dtype"]])
    if spec["layout"] == "NHWC":
        values = values.transpose(0, 2, 3, 1)
    elif spec["layout"] == "YCXC8":
        n, c, h, w = values.shape
        blocks = (c + 7) // 8
        padded = np.zeros((n, blocks * 8, h, w), dtype=values.dtype)  # zero bytes, whatever dtype
        padded[:, :c] = values
        values = padded.reshape(n, blocks, 8, h, w).transpose(0, 3, 1, 4, 2)
    return np.ascontiguousarray(values).astype(DTYPES[spec["dtype"]]).tobytes()


def stored_count(spec):
    """Elements the device buffer holds: YCXC8 stores its padding channels too."""
    shape = list(spec["shape"])
    if spec["layout"] == "YCXC8":
        shape[1] = (shape[1] + 7) // 8 * 8
    return int(np.prod(shape))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--manifest", required=True, help="source model.yaml (one ONNX stage)")
    ap.add_argument("--cut", required=True, help="comma-separated tensor names: backbone outputs")
    ap.add_argument("--out", required=True, help="bundle directory to write (must not exist)")
    ap.add_argument("--xclbin", help="precompiled NPU design (marks the backbone for the NPU)")
    ap.add_argument("--instructions",
                    help="instruction stream (insts.bin), or the ELF for the ELF flows")
    ap.add_argument("--target", default="npu1", choices=["npu1", "npu2"])
    ap.add_argument("--flow", default="xclbin+insts", choices=["xclbin+insts", "xclbin+elf", "full-elf"])
    ap.add_argument("--min-xrt", default="2.13", help="minimum XRT version (major.minor)")
    ap.add_argument("--kernel", default="MLIR_AIE", help="kernel name (prefix) in the xclbin")
    ap.add_argument("--device-dtype", default="float32", choices=sorted(DTYPES))
    ap.add_argument("--device-layout", default="NCHW", choices=["NCHW", "NHWC", "YCXC8"],
                    help="YCXC8: mlir-aie's blocked conv2d activations (the ONNX shape kept)")
    ap.add_argument("--scale", type=float, default=1.0, help="quantization scale (int8/uint8)")
    ap.add_argument("--zero-point", type=int, default=0)
    ap.add_argument("--tolerance", type=float, default=1e-3, help="canary max abs diff")
    ap.add_argument("--timeout-ms", type=int, default=5000,
                    help="per run; above the amdxdna driver's 2000 ms hang timeout")
    ap.add_argument("--canary-interval-s", type=int, default=600)
    ap.add_argument("--reference-runner",
                    help="a vigil binary; its `stage-run` writes the canary's expected output")
    return ap.parse_args()


def load_source(args):
    """The source manifest, its one stage and its model file, after checking the arguments."""
    src_dir = os.path.dirname(os.path.abspath(args.manifest))
    with open(args.manifest) as f:
        manifest = yaml.safe_load(f)
    if len(manifest.get("stages", [])) != 1:
        fail(f"{args.manifest}: expected exactly one stage to split")
    stage = manifest["stages"][0]
    src_model = os.path.join(src_dir, stage["file"])
    if not os.path.isfile(src_model):
        fail(f"{src_model}: model file missing (scripts/fetch-model.sh installs it)")
    full_elf = args.flow == "full-elf"
    if full_elf and args.xclbin:
        fail("--flow full-elf takes no --xclbin: the ELF carries the whole design")
    if not full_elf and bool(args.xclbin) != bool(args.instructions):
        fail("--xclbin and --instructions go together")
    if os.path.exists(args.out):
        fail(f"{args.out}: already exists; refusing to overwrite a bundle")
    return manifest, stage, src_model


class Bundle:
    """The bundle directory being written, and its files' sha256, size and origin."""

    def __init__(self, out):
        self.out = out
        self.files = {}

    def path(self, name):
        return os.path.join(self.out, name)

    def add_file(self, name, origin):
        path = self.path(name)
        self.files[name] = {
            "accepted": [{"sha256": sha256(path), "size": os.path.getsize(path), "origin": origin}]
        }


def split_stages(args, bundle, stage, src_model):
    """The backbone and head stages, their ONNX files written; the cut tensors."""
    shapes = tensor_shapes(onnx.load(src_model))
    cut = [c for c in args.cut.split(",") if c]
    in_name = stage["inputs"][0]["name"]
    out_names = [o["name"] for o in stage["outputs"]]
    for name in cut:
        if name not in shapes:
            fail(f"{src_model}: no tensor named '{name}' with a static shape")
    os.makedirs(args.out)
    backbone_file, head_file = "backbone.onnx", "head.onnx"
    onnx.utils.extract_model(src_model, bundle.path(backbone_file), [in_name], cut)
    onnx.utils.extract_model(src_model, bundle.path(head_file), cut, out_names)
    cut_tensors = [
        {"name": n, "shape": shapes[n], "layout": "NCHW", "dtype": "float32"} for n in cut
    ]
    src_sha = sha256(src_model)
    bundle.add_file(backbone_file, f"split-model.py from {stage['file']} sha256 {src_sha}, cut {args.cut}")
    bundle.add_file(head_file, f"split-model.py from {stage['file']} sha256 {src_sha}, cut {args.cut}")
    backbone = {"name": "backbone", "runtime": "onnx", "file": backbone_file,
                "inputs": stage["inputs"], "outputs": cut_tensors}
    head = {"name": "head", "runtime": "onnx", "file": head_file,
            "inputs": copy.deepcopy(cut_tensors), "outputs": stage["outputs"]}
    return backbone, head, cut_tensors


def device_spec(args, t):
    """A tensor as the NPU holds it: --device-layout and --device-dtype (with its scale)."""
    spec = {"name": t["name"], "shape": list(t["shape"]), "layout": args.device_layout,
            "dtype": args.device_dtype}
    if args.device_layout == "NHWC":
        n, c, h, w = t["shape"]
        spec["shape"] = [n, h, w, c]
    if args.device_dtype in ("int8", "uint8"):
        spec["scale"] = args.scale
        spec["zero_point"] = args.zero_point
    return spec


def kernel_arguments(args, insts_bytes, dev_in, dev_out):
    """The kernel's arguments: opcode, instructions, their count, then every device tensor."""
    itemsize = np.dtype(DTYPES[args.device_dtype]).itemsize
    arguments = [
        {"index": 0, "role": "opcode", "value": 3},
        {"index": 1, "role": "instructions", "bytes": insts_bytes},
        {"index": 2, "role": "instruction_count"},
    ] if args.flow == "xclbin+insts" else [
        {"index": 0, "role": "opcode", "value": 3},
        {"index": 1, "role": "instructions"},
        {"index": 2, "role": "instruction_count"},
    ]
    for i, t in enumerate(dev_in + dev_out):
        role = "input" if i < len(dev_in) else "output"
        arguments.append({"index": 3 + i, "role": role, "tensor": t["name"],
                          "bytes": stored_count(t) * itemsize})
    return arguments


def write_canary(args, bundle, manifest, stage, backbone_file, cut_tensors, dev_in, dev_out):
    """The canary: input in device format; expected output from the CPU reference of the same
    stage (the vigil binary's stage-run), also in device format."""
    inp = manifest["input"]
    x = canary_input(stage["inputs"][0]["shape"], inp["value_range"][0],
                     inp["value_range"][1], inp["letterbox"]["pad_value"])
    canary_in_f32 = bundle.path("canary_input.f32")
    x.astype(np.float32).tofile(canary_in_f32)
    with open(bundle.path("canary_input.bin"), "wb") as f:
        f.write(device_bytes(x, dev_in[0]))
    bundle.add_file("canary_input.bin", "split-model.py synthetic canary")
    canary = {"input": "canary_input.bin"}
    if args.reference_runner:
        outs = []
        cmd = [args.reference_runner, "stage-run", "--onnx", bundle.path(backbone_file),
               "--input-name", stage["inputs"][0]["name"], "--shape",
               ",".join(str(d) for d in x.shape), "--input", canary_in_f32]
        for t in cut_tensors:
            path = bundle.path(f"canary_{t['name']}.f32")
            cmd += ["--output", f"{t['name']}={path}"]
            outs.append(path)
        subprocess.run(cmd, check=True)
        with open(bundle.path("canary_expected.bin"), "wb") as f:
            for path, t in zip(outs, cut_tensors):
                y = np.fromfile(path, dtype=np.float32).reshape(t["shape"])
                f.write(device_bytes(y, dev_out[cut_tensors.index(t)]))
                os.remove(path)
        bundle.add_file("canary_expected.bin", "CPU reference (OpenCV DNN) of backbone.onnx")
        canary["expected"] = "canary_expected.bin"
    else:
        print("split-model: no --reference-runner: the canary has no expected output; "
              "backend npu will refuse this bundle", file=sys.stderr)
    os.remove(canary_in_f32)
    return canary


def npu_section(args, bundle, manifest, stage, backbone, cut_tensors):
    """The backbone's npu section: the design's files copied in, arguments, tensors, canary."""
    full_elf = args.flow == "full-elf"
    insts = "insts.bin" if args.flow == "xclbin+insts" else "insts.elf"
    copies = [(args.instructions, insts)]
    if not full_elf:
        copies.insert(0, (args.xclbin, "design.xclbin"))
    for src, dst in copies:
        shutil.copyfile(src, bundle.path(dst))
        bundle.add_file(dst, f"precompiled NPU design, {os.path.basename(src)}")
    insts_bytes = os.path.getsize(bundle.path(insts))
    dev_in = [device_spec(args, t) for t in stage["inputs"]]
    dev_out = [device_spec(args, t) for t in cut_tensors]
    arguments = kernel_arguments(args, insts_bytes, dev_in, dev_out)
    canary = write_canary(args, bundle, manifest, stage, backbone["file"], cut_tensors, dev_in,
                          dev_out)
    npu = {
        "target": args.target,
        "flow": args.flow,
        "min_xrt_version": args.min_xrt,
        "xclbin": "design.xclbin",
        "instructions": insts,
        "kernel": args.kernel,
        "timeout_ms": args.timeout_ms,
        "canary_tolerance": args.tolerance,
        "canary_interval_s": args.canary_interval_s,
        "arguments": arguments,
        "inputs": dev_in,
        "outputs": dev_out,
        "canary": canary,
    }
    if full_elf:
        del npu["xclbin"]
    return npu


def main():
    args = parse_args()
    manifest, stage, src_model = load_source(args)
    for_npu = bool(args.instructions)
    bundle = Bundle(args.out)
    backbone, head, cut_tensors = split_stages(args, bundle, stage, src_model)
    if for_npu:
        backbone["npu"] = npu_section(args, bundle, manifest, stage, backbone, cut_tensors)
    description = {
        "schema": 1,
        "name": manifest["name"] + ("-npu" if for_npu else "-split"),
        "description": f"{manifest.get('description', '')}; split at {args.cut} by split-model.py",
        "license": manifest.get("license", ""),
        "files": bundle.files,
        "input": manifest["input"],
        "stages": [backbone, head],
        "postprocess": manifest["postprocess"],
    }
    with open(bundle.path("model.yaml"), "w") as f:
        f.write("# Written by scripts/split-model.py; see models/yolox-nano/model.yaml for the format.\n")
        yaml.safe_dump(description, f, sort_keys=False, default_flow_style=None, width=100)
    print(f"split-model: wrote {args.out} ({'NPU backbone' if for_npu else 'CPU only'})")


if __name__ == "__main__":
    main()
