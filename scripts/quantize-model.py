#!/usr/bin/python3
"""Makes NPU-ready models from a float YOLOX model directory.

Output: a model directory with `npu.onnx` (the network up to one output, [1, 85, anchors] of box
values and score logits: the part for the NPU), `head.onnx` (score sigmoids and transpose, float,
for the CPU) and a model.yaml recording the preset, the methods, the source model's sha256 and the
calibration frames (files, sha256, frame numbers). Same inputs, byte-identical output.

Presets (models/README.md has each one's accuracy):
  float   no quantization: the float part for the NPU's BF16 flow (XDNA2), and its head
  xint8   what XDNA (Phoenix, Hawk Point) needs: int8 weights per tensor, uint8 activations
          (zero point 128), all scales powers of two, activation ranges by MinMSE
  a8w8    int8 weights per output channel, uint8 asymmetric activations, MinMSE ranges
  a16w8   int8 weights per output channel, uint16 asymmetric activations, MinMax ranges
xint8 and a8w8 equalize SiLU-joined convs by their calibrated activations (--equalize); every
integer preset corrects biases for the weights' rounding, shares one scale across each Concat's
inputs and ranges score logits from sigmoid 0.001 up; flags override single methods.

Calibration: images, image directories or videos (sampled evenly; never the photographs you
evaluate on). Example:
  scripts/quantize-model.py --model models/yolox-nano --preset a16w8 \\
      --calibration ../shared/data/videos/one-by-one-person-detection.mp4 --out /tmp/a16w8
"""

import argparse
import os
import sys

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from quantize import QuantizeError  # noqa: E402
from quantize import bundle, calibrate, equalize, graph, qdq  # noqa: E402

PRESETS = {
    "xint8": dict(weights="pow2-tensor", activations="uint8", activation_range="pow2-minmse",
                  equalize="activations", bias_correction=True),
    "a8w8": dict(weights="per-channel", activations="uint8", activation_range="minmse",
                 equalize="activations", bias_correction=True),
    # 16-bit activations and per-channel weights leave nothing for equalization to even out.
    "a16w8": dict(weights="per-channel", activations="uint16", activation_range="minmax",
                  equalize="none", bias_correction=True),
}

DESCRIBE = {
    "pow2-tensor": "int8 symmetric, one power-of-two scale per tensor",
    "per-channel": "int8 symmetric, one scale per output channel",
    "pow2-minmse": "symmetric (zero point 128), power-of-two scale by MinMSE",
    "minmse": "asymmetric, range clipped by MinMSE",
    "minmax": "asymmetric, calibration min to max",
}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", required=True, help="float model directory (or its model.yaml)")
    ap.add_argument("--preset", required=True, choices=["float"] + sorted(PRESETS))
    ap.add_argument("--calibration", nargs="+", default=[],
                    help="images, image directories or videos (integer presets)")
    ap.add_argument("--frames", type=int, default=96, help="calibration frames (default 96)")
    ap.add_argument("--out", required=True, help="model directory to write (must not exist)")
    ap.add_argument("--name", help="model name (default: source name and preset)")
    ap.add_argument("--canary-image",
                    help="a photograph for the NPU canary: with it the bundle gets an npu section "
                         "for ONNX Runtime's Vitis AI EP (runtime vitisai); without it, CPU only")
    ap.add_argument("--equalize", choices=["none", "weights-approximate", "weights", "activations"],
                    help="cross-layer equalization: by weights (Nagel et al.; -approximate: SiLU "
                         "left as is), or by the calibrated activations (the presets' choice)")
    ap.add_argument("--bias-correction", action=argparse.BooleanOptionalAction, default=None)
    ap.add_argument("--weights", choices=["pow2-tensor", "per-channel"])
    ap.add_argument("--activations", choices=["uint8", "uint16"])
    ap.add_argument("--activation-range", choices=["pow2-minmse", "minmse", "minmax"])
    args = ap.parse_args(argv)
    if args.preset != "float" and not args.calibration:
        ap.error(f"--preset {args.preset} needs --calibration frames")
    if args.frames < 1:
        ap.error("--frames must be at least 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    manifest, onnx_path, source_sha = bundle.read_manifest(args.model)
    source = onnx.load(onnx_path)
    input_name = manifest["stages"][0]["inputs"][0]["name"]
    cut = graph.cut_for_npu(source, input_name, manifest["stages"][0]["outputs"][0]["name"])
    npu_model, head_model, scores = cut.npu, cut.head, cut.score_channels
    anchors = npu_model.graph.output[0].type.tensor_type.shape.dim[2].dim_value
    quantization = {"preset": args.preset, "precision": "float32",
                    "source_model": {"file": os.path.basename(onnx_path), "sha256": source_sha},
                    "npu_part": f"one output '{graph.NPU_OUTPUT}': box values and score logits "
                                f"(channels {scores[0]}-{scores[1] - 1} get their sigmoid in the "
                                "head, on the CPU)"}
    if args.preset == "float":
        quantization["weights"] = quantization["activations"] = "float32 (the BF16 flow converts)"
        for opset in npu_model.opset_import:
            if opset.domain == "":
                opset.version = qdq.OPSET
        npu_bytes = npu_model.SerializeToString()
    else:
        recipe = dict(PRESETS[args.preset])
        for key in ("equalize", "bias_correction", "weights", "activations", "activation_range"):
            if getattr(args, key) is not None:
                recipe[key] = getattr(args, key)
        npu_bytes, quantization = quantize(args, manifest, cut, input_name, recipe, quantization)
    name = args.name or f"{manifest['name']}-npu-{args.preset}"
    description = (f"{manifest['name']} for the NPU, preset {args.preset}: the network up to one "
                   "output, score sigmoids and transpose in a float CPU head")
    vitisai = None
    if args.canary_image:
        convs = sum(1 for n in npu_model.graph.node if n.op_type == "Conv")
        vitisai = bundle.VitisAi(args.canary_image, args.preset, convs)
    bundle.write(args.out, manifest, os.path.basename(onnx_path), source_sha, npu_bytes,
                 head_model.SerializeToString(), anchors, quantization, name, description, vitisai,
                 source_dir=os.path.dirname(os.path.abspath(onnx_path)))
    print(f"quantize-model: wrote {args.out} ({name})")


def quantize(args, manifest, cut, input_name, recipe, quantization):
    g = graph.Graph(cut.npu)
    methods = []
    inp = manifest["input"]
    source = calibrate.CalibrationSource(args.calibration, args.frames, inp["width"],
                                         inp["height"], inp["letterbox"]["pad_value"])
    how = recipe["equalize"]
    if how != "none":
        ranges, alpha = None, None
        if how == "activations":
            before = calibrate.collect(g.model, input_name, source.frames)
            ranges = {t: s.channel_absmax for t, s in before.items()}
            alpha = 0.5 if recipe["weights"] == "pow2-tensor" else 1.0
        pairs = equalize.equalize(g, "approximate" if how == "weights-approximate" else "exact",
                                  activation_ranges=ranges, alpha=alpha or 0.5)
        what = {"weights-approximate": "by weights, SiLU left as is",
                "weights": "by weights, scale inside the sigmoid",
                "activations": f"by calibrated activations (alpha {alpha}), scale inside the "
                               "sigmoid"}[how]
        methods.append(f"cross-layer equalization ({what}; {pairs} conv pairs)")
    stats = calibrate.collect(g.model, input_name, source.frames)
    r = qdq.Recipe(weights=recipe["weights"], activations=recipe["activations"],
                   activation_range=recipe["activation_range"],
                   bias_correction=recipe["bias_correction"])
    model, report = qdq.quantize(g.model, stats, r, cut.score_logits)
    if r.bias_correction:
        methods.append(f"bias correction ({report['bias_corrected']} convs, largest shift "
                       f"{report['max_bias_shift']:.4g})")
    methods.append("Concat inputs and value-keeping ops share one scale")
    methods.append(f"score logits ranged from {qdq.SCORE_LOGIT_FLOOR} (sigmoid 0.001) up")
    quantization.update({
        "precision": f"int8 weights, {r.activations} activations",
        "weights": DESCRIBE[r.weights],
        "activations": f"{r.activations}, {DESCRIBE[r.activation_range]}",
        "methods": methods,
        "starved_tensors": f"{report['starved']} of {report['activation_tensors']} (10% of "
                           "channels within 16 steps)",
        "calibration": {"frames": len(source.frames), "sources": source.records},
    })
    return model.SerializeToString(), quantization


if __name__ == "__main__":
    try:
        main()
    except QuantizeError as e:
        print(f"quantize-model: {e}", file=sys.stderr)
        sys.exit(1)
