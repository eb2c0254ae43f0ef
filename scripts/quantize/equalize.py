"""Cross-layer equalization (Nagel et al. 2019, "Data-Free Quantization Through Weight
Equalization and Bias Correction", section 4.1), for convs joined by a SiLU.

For conv1 -> act -> conv2, output channel i of conv1 is divided by s_i and input channel i of
conv2 multiplied by s_i, s_i = sqrt(r1_i / r2_i) (r: the channel's max |weight|), so both get
the same range per channel, and so do the activations between them. That is exact for ReLU
(f(x/s) = f(x)/s) but not for SiLU. Two modes:
  approximate: x*sigmoid(x) is left as is on the scaled tensor (what a plain CLE does);
  exact:       the sigmoid reads s*x through a per-channel Mul, so x*sigmoid(s*x) equals the
               original activation divided by s: the float model's output does not change.
By weights (Nagel) or by the activations a calibration measured (the per-tensor activation
scales are what starve channels here; see equalize()).
Only chains whose SiLU output feeds convs alone are equalized (a Concat or Add would see the
scale), all those convs together.
"""

import numpy as np
from onnx import helper, numpy_helper

from quantize.graph import silu_sigmoid


def _group(node):
    return next((a.i for a in node.attribute if a.name == "group"), 1)


def find_pairs(graph):
    """(conv1, sigmoid, mul, [conv2, ...]) chains: conv1's output only feeds the SiLU, and the
    SiLU's output only convs (as their data input), each dense or depthwise."""
    pairs = []
    for mul in graph.model.graph.node:
        if mul.op_type != "Mul":
            continue
        sigmoid, x = silu_sigmoid(graph, mul)
        conv1 = graph.producer.get(x)
        if sigmoid is None or conv1 is None or conv1.op_type != "Conv" or _group(conv1) != 1 \
                and _group(conv1) != graph.array(conv1.input[1]).shape[0]:
            continue
        if sorted(n.name for n in graph.consumers[x]) != sorted([sigmoid.name, mul.name]):
            continue
        users = graph.consumers.get(mul.output[0], [])
        if not users or any(u is None or u.op_type != "Conv" or u.input[0] != mul.output[0]
                            or _group(u) not in (1, graph.array(u.input[1]).shape[0])
                            for u in users):
            continue
        pairs.append((conv1, sigmoid, mul, users))
    return pairs


def _in_channel_range(w2, depthwise):
    if depthwise:
        return np.max(np.abs(w2.reshape(w2.shape[0], -1)), axis=1)
    return np.max(np.abs(np.moveaxis(w2, 1, 0).reshape(w2.shape[1], -1)), axis=1)


def equalize(graph, mode="exact", sweeps=8, activation_ranges=None, alpha=0.5):
    """Equalizes every pair in place; returns the number of pairs.

    By weights (activation_ranges None): Nagel's s_i = sqrt(r1_i / r2_i), in sweeps so a conv
    that ends one pair and starts the next settles (Nagel et al. iterate likewise).
    By activations (activation_ranges: {conv1 output: max |value| per channel} measured on the
    unequalized model): conv1's channel range m_i = (r1_i / max r1)^(1 - alpha) *
    (a_i / max a)^alpha is balanced against the consumers' r2_i, s_i = sqrt(m_i / r2_i), once
    (the measured ranges hold for the unequalized model only). alpha 1: the activations alone
    (weights per channel); 0.5: both (weights per tensor). Per-tensor activation scales starve
    small channels however even the weights are; this evens what they hold.
    """
    pairs = find_pairs(graph)
    total = {conv1.name: np.ones(graph.array(conv1.input[1]).shape[0]) for conv1, *_ in pairs}
    for _ in range(1 if activation_ranges is not None else sweeps):
        for conv1, _sigmoid, _mul, consumers in pairs:
            w1 = graph.array(conv1.input[1]).astype(np.float64)
            b1 = graph.array(conv1.input[2]).astype(np.float64)
            w2s = [graph.array(c.input[1]).astype(np.float64) for c in consumers]
            r1 = np.max(np.abs(w1.reshape(w1.shape[0], -1)), axis=1)
            r2 = np.max([_in_channel_range(w2, _group(c) != 1)
                         for w2, c in zip(w2s, consumers)], axis=0)
            if activation_ranges is None:
                s = np.where((r1 > 0) & (r2 > 0), np.sqrt(r1 / np.maximum(r2, 1e-30)), 1.0)
            else:
                a = np.asarray(activation_ranges[conv1.output[0]], dtype=np.float64)
                m = (r1 / max(r1.max(), 1e-30)) ** (1 - alpha) * (a / max(a.max(), 1e-30)) ** alpha
                ok = (m > 0) & (r2 > 0)
                s = np.where(ok, np.sqrt(m / np.maximum(r2 / max(r2.max(), 1e-30), 1e-30)), 1.0)
                s /= np.exp(np.mean(np.log(s)))  # a common factor is for the weights to keep
            w1 /= s.reshape(-1, 1, 1, 1)
            b1 /= s
            graph.set_array(conv1.input[1], w1.astype(np.float32))
            graph.set_array(conv1.input[2], b1.astype(np.float32))
            for w2, c in zip(w2s, consumers):
                w2 *= s.reshape(-1, 1, 1, 1) if _group(c) != 1 else s.reshape(1, -1, 1, 1)
                graph.set_array(c.input[1], w2.astype(np.float32))
            total[conv1.name] *= s
    if mode == "exact":
        _restore_sigmoid_inputs(graph, pairs, total)
    graph.refresh()
    return len(pairs)


def _restore_sigmoid_inputs(graph, pairs, total):
    """Sigmoid(x') becomes Sigmoid(x' * s): the gate sees the unscaled pre-activation again."""
    g = graph.model.graph
    nodes = list(g.node)
    for conv1, sigmoid, _mul, _conv2 in pairs:
        s = total[conv1.name].astype(np.float32).reshape(1, -1, 1, 1)
        const = f"{sigmoid.name}_gate_scale"
        g.initializer.append(numpy_helper.from_array(s, const))
        gated = f"{sigmoid.name}_gate_input"
        mul = helper.make_node("Mul", [sigmoid.input[0], const], [gated],
                               name=f"{sigmoid.name}_gate")
        sigmoid.input[0] = gated
        nodes.insert(nodes.index(sigmoid), mul)
    del g.node[:]
    g.node.extend(nodes)
