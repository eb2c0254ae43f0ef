"""The model directory a quantization writes: the NPU part, the CPU head and a model.yaml that
says what was done, from what, calibrated on what, and the sha256 of every file, so Vigil
verifies it like any other model."""

import collections
import copy
import os
import shutil

import yaml

from quantize import QuantizeError
from quantize.calibrate import sha256
from quantize.graph import NPU_OUTPUT

NPU_FILE, HEAD_FILE, CANARY_FILE = "npu.onnx", "head.onnx", "canary.jpg"

# The npu section for ONNX Runtime's Vitis AI EP: the photograph of the canary, the preset (float
# compiles through the BF16 flow, the others through the integer one) and the convolutions of the
# NPU part, every one of which the EP must place on the NPU.
VitisAi = collections.namedtuple("VitisAi", "canary_image preset convolutions")

# Max abs difference between the NPU's npu_output and the CPU reference of the same file, per
# preset: eight output steps for the int8 presets (output scales 0.0625 and 0.05), for a16w8 and
# the BF16 flow a guess. Chosen, not measured on an NPU (none was available).
CANARY_TOLERANCE = {"xint8": 0.5, "a8w8": 0.4, "a16w8": 0.1, "float": 1.0}


def npu_section(vitisai):
    return {"runtime": "vitisai", "compiler": "bf16" if vitisai.preset == "float" else "int8",
            "min_npu_nodes": vitisai.convolutions,
            "canary_tolerance": CANARY_TOLERANCE[vitisai.preset],
            "canary": {"image": CANARY_FILE}}


def read_manifest(model_dir):
    path = os.path.join(model_dir, "model.yaml") if os.path.isdir(model_dir) else model_dir
    try:
        with open(path) as f:
            manifest = yaml.safe_load(f)
    except OSError as e:
        raise QuantizeError(f"{path}: cannot read the model manifest: {e.strerror}") from e
    stages = manifest.get("stages") or []
    if len(stages) != 1:
        raise QuantizeError(f"{path}: stages: expected one float ONNX stage, found {len(stages)}")
    onnx_path = os.path.join(os.path.dirname(path), stages[0]["file"])
    if not os.path.isfile(onnx_path):
        raise QuantizeError(f"{onnx_path}: model file missing (scripts/fetch-model.sh installs it)")
    listed = [v["sha256"] for v in manifest["files"][stages[0]["file"]]["accepted"]]
    digest = sha256(onnx_path)
    if digest not in listed:
        raise QuantizeError(f"{onnx_path}: sha256 {digest} is not listed in {path}; refusing to "
                            "quantize an unverified model")
    return manifest, onnx_path, digest


def write(out, manifest, source_file, source_sha, npu_bytes, head_bytes, anchors, quantization,
          name, description, vitisai=None, source_dir=None):
    if os.path.exists(out):
        raise QuantizeError(f"{out}: already exists; refusing to overwrite a model")
    os.makedirs(out)
    for file_name, data in ((NPU_FILE, npu_bytes), (HEAD_FILE, head_bytes)):
        with open(os.path.join(out, file_name), "wb") as f:
            f.write(data)
    origin = f"scripts/quantize-model.py from {source_file} sha256 {source_sha}"
    written = [NPU_FILE, HEAD_FILE]
    if vitisai:
        shutil.copyfile(vitisai.canary_image, os.path.join(out, CANARY_FILE))
        written.append(CANARY_FILE)
    files = {f: {"accepted": [{"sha256": sha256(os.path.join(out, f)),
                               "size": os.path.getsize(os.path.join(out, f)),
                               "origin": origin if f != CANARY_FILE else
                               f"the NPU canary, copied from {os.path.basename(vitisai.canary_image)}"}]}
             for f in written}
    stage = manifest["stages"][0]
    channels = manifest["stages"][0]["outputs"][0]["shape"][2]
    between = {"name": NPU_OUTPUT, "shape": [1, channels, anchors], "layout": "channels-by-anchors",
               "dtype": "float32"}
    stages = [
        {"name": "npu", "runtime": "onnx", "file": NPU_FILE, "inputs": stage["inputs"],
         "outputs": [between], **({"npu": npu_section(vitisai)} if vitisai else {})},
        {"name": "head", "runtime": "onnx", "file": HEAD_FILE, "inputs": [copy.deepcopy(between)],
         "outputs": stage["outputs"]},
    ]
    result = {
        "schema": 1,
        "name": name,
        "description": description,
        "license": manifest.get("license", ""),
        "quantization": quantization,
        "files": files,
        "input": manifest["input"],
        "stages": stages,
        "postprocess": manifest["postprocess"],
    }
    if vitisai and source_dir:
        # The float model this was made from answers on the CPU when `auto` cannot use the NPU
        # (a QDQ model is slower there); the path is relative so the pair can move together.
        result["cpu_twin"] = {"model": os.path.relpath(source_dir, out), "sha256": source_sha}
    with open(os.path.join(out, "model.yaml"), "w") as f:
        f.write("# Written by scripts/quantize-model.py; see models/yolox-nano/model.yaml for the "
                "format\n# and models/README.md for how each model here was made and measured.\n")
        yaml.safe_dump(result, f, sort_keys=False, default_flow_style=None, width=100)
