"""The quantized graph: ONNX QDQ form, as ONNX Runtime fuses it and AMD's integer NPU compiler
takes it.

Every tensor computed at run time is followed by QuantizeLinear -> DequantizeLinear (its
consumers read the dequantized copy); conv weights become int8 constants behind a
DequantizeLinear, biases int32 with scale s_input * s_weight and zero point 0. Tensors joined by
an operator that does not change values (Slice, Reshape, MaxPool, nearest Resize, Transpose)
or by a Concat share one quantization (Quark's AlignConcat; ORT fuses nothing otherwise).
16-bit activations use com.microsoft's QuantizeLinear/DequantizeLinear (the ONNX ops take
16-bit types only from opset 21; python3-onnx 1.12 knows opset 17).
"""

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from quantize import QuantizeError
from quantize import scales as S
from quantize.graph import PASS_THROUGH, Graph

OPSET = 17
ONNX_TYPES = {"int8": onnx.TensorProto.INT8, "uint8": onnx.TensorProto.UINT8,
              "int16": onnx.TensorProto.INT16, "uint16": onnx.TensorProto.UINT16,
              "int32": onnx.TensorProto.INT32}
NUMPY_TYPES = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
               "int32": np.int32}


@dataclass
class Recipe:
    """How to quantize: weights, activations and the corrections between them."""
    weights: str = "per-channel"         # per-channel | pow2-tensor
    activations: str = "uint8"           # uint8 | uint16
    activation_range: str = "minmse"     # pow2-minmse | minmse | minmax
    bias_correction: bool = True


class _Groups:
    """Union-find over tensor names: tensors that must share one quantization."""

    def __init__(self):
        self.parent = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


# Score logits below this never matter: sigmoid(-6.9) = 0.001, a tenth of the lowest threshold
# Vigil uses (eval's 0.01; a person's score is objectness times class, each at least the score).
# Ranging the output on the logits' full depth (-20 and below) would coarsen the box values
# that share its one scale.
SCORE_LOGIT_FLOOR = -6.9


def activation_params(model, stats, recipe, score_logits=()):
    """{tensor: QuantParams} for every run-time tensor, one choice per shared group.

    A group's range comes from its source tensors only: a pass-through or Concat output holds
    nothing but its inputs' values. Score logits count from SCORE_LOGIT_FLOOR up."""
    graph = Graph(model)
    groups = _Groups()
    acts = graph.activations()
    for t in acts:
        groups.find(t)
    for n in model.graph.node:
        if n.op_type in PASS_THROUGH:
            groups.union(n.output[0], n.input[0])
        elif n.op_type == "Concat":
            for i in n.input:
                groups.union(n.output[0], i)
    members = {}
    for t in acts:
        members.setdefault(groups.find(t), []).append(t)
    derived = {n.output[0] for n in model.graph.node
               if n.op_type in PASS_THROUGH or n.op_type == "Concat"}
    params = {}
    for root in sorted(members):
        names = members[root]
        sources = [t for t in names if t not in derived] or names
        lo, hi, parts = np.inf, -np.inf, []
        for t in sources:
            s = stats[t].samples
            t_lo = stats[t].lo
            if t in score_logits:
                s, t_lo = np.maximum(s, SCORE_LOGIT_FLOOR), max(t_lo, SCORE_LOGIT_FLOOR)
            lo, hi = min(lo, t_lo), max(hi, stats[t].hi)
            parts.append(s)
        samples = np.concatenate(parts)
        if recipe.activation_range == "pow2-minmse":
            p = S.power_of_two_minmse(samples, lo, hi, recipe.activations)
        elif recipe.activation_range == "minmse":
            p = S.affine_minmse(samples, lo, hi, recipe.activations)
        else:
            p = S.affine_minmax(lo, hi, recipe.activations)
        for t in names:
            params[t] = p
    return params


def starved_tensors(stats, params, steps=16, share=0.10):
    """Tensors where at least `share` of the channels span fewer than `steps` integer steps."""
    starved = []
    for t, p in params.items():
        absmax = stats[t].channel_absmax
        if absmax is not None and np.mean(absmax / float(p.scale) < steps) >= share:
            starved.append(t)
    return starved


def _weight_params(w, recipe):
    if recipe.weights == "pow2-tensor":
        return S.QuantParams(S.power_of_two_weight_scale(w), 0, "int8")
    return S.QuantParams(S.symmetric_weight_scales(w, per_channel=True), 0, "int8")


def _bias_error(delta, input_mean, depthwise):
    """Expected output shift per channel from the weights' rounding: (W_q - W) . E[x]."""
    if input_mean is None:
        return np.zeros(delta.shape[0])
    per_channel = delta.reshape(delta.shape[0], delta.shape[1], -1).sum(axis=2)
    if depthwise:
        return per_channel[:, 0] * input_mean
    return per_channel @ input_mean


def quantize(model, stats, recipe, score_logits=()):
    """Returns (qdq_model, report) for a float model whose every run-time tensor has stats."""
    model = onnx.load_from_string(model.SerializeToString())
    graph = Graph(model)
    g = model.graph
    params = activation_params(model, stats, recipe, set(score_logits))
    wide = recipe.activations in ("uint16", "int16")
    domain = "com.microsoft" if wide else ""
    new_inits, nodes = [], []
    report = {"convs": 0, "bias_corrected": 0, "max_bias_shift": 0.0}

    def constant(name, array):
        new_inits.append(numpy_helper.from_array(array, name))
        return name

    def qparams_inputs(base, p):
        scale = np.asarray(p.scale, dtype=np.float32)
        zero = np.full(scale.shape, p.zero_point, dtype=NUMPY_TYPES[p.dtype])
        return [constant(f"{base}_scale", scale), constant(f"{base}_zero_point", zero)]

    def dequantized_constant(name, q, p, axis):
        """Replaces initializer `name` by integer q behind a DequantizeLinear that outputs name."""
        qname = constant(f"{name}_quantized", q)
        kwargs = {"axis": axis} if np.ndim(p.scale) == 1 else {}
        nodes.append(helper.make_node("DequantizeLinear", [qname] + qparams_inputs(name, p),
                                      [name], name=f"{name}_dequantize", **kwargs))

    consts_done = set()
    activation_set = set(graph.activations())
    input_names = [i.name for i in g.input if i.name in activation_set]
    for name in input_names:
        _qdq(nodes, qparams_inputs, name, f"{name}_q", f"{name}_dq", params[name], domain)
    for n in g.node:
        if n.op_type == "Conv":
            _quantize_conv(graph, n, params, stats, recipe, report, dequantized_constant,
                           consts_done)
        elif n.op_type == "Mul" and n.input[1] in graph.inits and n.input[1] not in consts_done:
            gate = graph.array(n.input[1])
            flat = gate.reshape(-1)
            p = S.QuantParams(np.array([S.power_of_two_weight_scale(v) if recipe.weights ==
                                        "pow2-tensor" else abs(v) / 127.0 or 1.0 for v in flat],
                                       dtype=np.float32), 0, "int8")
            q = np.clip(np.rint(flat / p.scale), -128, 127).astype(np.int8).reshape(gate.shape)
            dequantized_constant(n.input[1], q, p, axis=1)
            consts_done.add(n.input[1])
        for k, i in enumerate(n.input):
            if i in input_names:
                n.input[k] = f"{i}_dq"
        out = n.output[0]
        n.output[0] = f"{out}_f"
        nodes.append(n)
        _qdq(nodes, qparams_inputs, f"{out}_f", f"{out}_q", out, params[out], domain)

    dropped = consts_done
    kept = [t for t in g.initializer if t.name not in dropped]
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]
    del model.opset_import[:]
    model.opset_import.extend([helper.make_opsetid("", OPSET)])
    if wide:
        model.opset_import.extend([helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    report["activation_tensors"] = len(params)
    report["starved"] = len(starved_tensors(stats, params))
    return model, report


def _qdq(nodes, qparams_inputs, source, quantized, dequantized, p, domain):
    qp = qparams_inputs(source, p)
    nodes.append(helper.make_node("QuantizeLinear", [source] + qp, [quantized],
                                  name=f"{source}_quantize", domain=domain))
    nodes.append(helper.make_node("DequantizeLinear", [quantized] + qp, [dequantized],
                                  name=f"{source}_dequantize", domain=domain))


def _quantize_conv(graph, conv, params, stats, recipe, report, dequantized_constant, done):
    w_name, b_name = conv.input[1], conv.input[2] if len(conv.input) > 2 else None
    if w_name in done or (b_name and b_name in done):
        raise QuantizeError(f"node '{conv.name}' (Conv): shares its weights with another conv")
    w = graph.array(w_name).astype(np.float32)
    wp = _weight_params(w, recipe)
    qmin, qmax = wp.qrange
    scale = np.asarray(wp.scale, dtype=np.float64)
    w_scale = scale.reshape(-1, 1, 1, 1) if scale.ndim == 1 else scale
    w_q = np.clip(np.rint(w / w_scale), qmin, qmax).astype(np.int8)
    dequantized_constant(w_name, w_q, wp, axis=0)
    done.add(w_name)
    report["convs"] += 1
    if not b_name:
        return
    b = graph.array(b_name).astype(np.float64)
    if recipe.bias_correction:
        delta = w_q.astype(np.float64) * w_scale - w
        group = next((a.i for a in conv.attribute if a.name == "group"), 1)
        shift = _bias_error(delta, stats[conv.input[0]].channel_mean
                            if conv.input[0] in stats else None, group != 1)
        b = b - shift
        report["bias_corrected"] += 1
        report["max_bias_shift"] = max(report["max_bias_shift"], float(np.max(np.abs(shift))))
    x_scale = float(params[conv.input[0]].scale)
    b_scale = (x_scale * scale).astype(np.float32) if scale.ndim == 1 \
        else np.float32(x_scale * float(scale))
    b_q = np.rint(b / b_scale.astype(np.float64))
    if np.any(np.abs(b_q) >= 2 ** 31 - 1):
        raise QuantizeError(f"node '{conv.name}' (Conv): bias does not fit int32 at scale "
                            f"{float(np.min(b_scale)):.3g}")
    bp = S.QuantParams(b_scale, 0, "int32")
    dequantized_constant(b_name, b_q.astype(np.int32), bp, axis=0)
    done.add(b_name)
