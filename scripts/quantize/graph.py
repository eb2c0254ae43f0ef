"""What the network is: YOLOX as this quantizer knows it, checked node by node, and its cut
into the part for the NPU (one output: every level's box values and score logits) and the
float head for the CPU (the score sigmoids and the layout transpose).

A graph with a node outside the known patterns is refused with the node's name: quantizing a
pattern nobody checked gives a model that runs and is quietly wrong.
"""

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

from quantize import QuantizeError

# Operators whose output holds the same values as (a subset of) their first input: they keep
# its quantization. Concat joins all its inputs' quantization into one.
PASS_THROUGH = {"Slice", "Reshape", "MaxPool", "Resize", "Transpose"}
KNOWN = PASS_THROUGH | {"Conv", "Sigmoid", "Mul", "Add", "Concat"}

NPU_OUTPUT = "npu_output"  # the NPU part's one output: [1, channels, anchors], logits
HEAD_OUTPUT = "output"


class Graph:
    """An ONNX model with producer and consumer maps kept at hand."""

    def __init__(self, model):
        self.model = model
        self.refresh()

    def refresh(self):
        g = self.model.graph
        self.inits = {t.name: t for t in g.initializer}
        self.producer = {o: n for n in g.node for o in n.output}
        self.consumers = {}
        for n in g.node:
            for i in n.input:
                self.consumers.setdefault(i, []).append(n)
        for o in g.output:
            self.consumers.setdefault(o.name, []).append(None)  # None: the graph's output

    def array(self, name):
        return numpy_helper.to_array(self.inits[name])

    def set_array(self, name, value):
        new = numpy_helper.from_array(np.ascontiguousarray(value), name)
        self.inits[name].CopyFrom(new)

    def activations(self):
        """Every tensor computed at run time, in graph order: the inputs and node outputs."""
        names = [i.name for i in self.model.graph.input if i.name not in self.inits]
        return names + [o for n in self.model.graph.node for o in n.output]


def _where(node):
    return f"node '{node.name or node.output[0]}' ({node.op_type})"


def check_known(graph):
    """Refuses any node outside the patterns below, naming it."""
    for n in graph.model.graph.node:
        if n.op_type not in KNOWN:
            raise QuantizeError(f"{_where(n)}: not a pattern this quantizer knows "
                                f"(known: {', '.join(sorted(KNOWN))})")
        if n.op_type == "Mul" and not _is_silu_mul(graph, n) and not _is_gate_scale(graph, n):
            raise QuantizeError(f"{_where(n)}: a Mul that is neither x * Sigmoid(x) (SiLU) nor "
                                "x times a constant is not a pattern this quantizer knows")
        if n.op_type == "Resize":
            mode = next((a.s for a in n.attribute if a.name == "mode"), b"nearest")
            if mode != b"nearest":
                raise QuantizeError(f"{_where(n)}: Resize mode {mode.decode()} changes values; only "
                                    "nearest keeps its input's quantization")
        if n.op_type == "Conv" and (len(n.input) < 2 or n.input[1] not in graph.inits):
            raise QuantizeError(f"{_where(n)}: a Conv whose weights are not constant")


def _is_silu_mul(graph, mul):
    a, b = mul.input
    for x, s in ((a, b), (b, a)):
        p = graph.producer.get(s)
        if p is not None and p.op_type == "Sigmoid" and p.input[0] == x:
            return True
    return False


def _is_gate_scale(graph, mul):
    """x * constant per channel: the sigmoid's input scale that exact equalization adds."""
    return mul.input[1] in graph.inits and mul.input[0] not in graph.inits


def silu_sigmoid(graph, mul):
    """The Sigmoid node of a SiLU Mul, and the Mul's other (pre-activation) input."""
    for x, s in ((mul.input[0], mul.input[1]), (mul.input[1], mul.input[0])):
        p = graph.producer.get(s)
        if p is not None and p.op_type == "Sigmoid" and p.input[0] == x:
            return p, x
    return None, None


class Cut:
    """The two parts and what the quantizer must know of the NPU part's output."""

    def __init__(self, npu, head, score_channels, score_logits):
        self.npu = npu                        # ONNX model: input -> NPU_OUTPUT
        self.head = head                      # ONNX model: NPU_OUTPUT -> output
        self.score_channels = score_channels  # (first, end) of the logit channels in NPU_OUTPUT
        self.score_logits = score_logits      # the prediction convs' outputs that are logits


def cut_for_npu(model, input_name="images", output_name=HEAD_OUTPUT):
    """Splits YOLOX into a Cut: the NPU part and the CPU head.

    YOLOX ends: per level Concat[box(4), Sigmoid(obj), Sigmoid(cls)] -> Reshape -> one Concat
    over the levels -> Transpose -> output [1, anchors, 85]. The NPU part keeps everything up to
    the last Concat, without the score sigmoids: its one output carries box values and score
    logits, a range one integer scale can hold (sigmoids next to raw box values could not). The
    head applies the sigmoids to the score channels and transposes, in float, on the CPU.
    """
    model = onnx.load_from_string(model.SerializeToString())
    graph = Graph(model)
    check_known(graph)
    g = model.graph
    outputs = [o.name for o in g.output]
    if outputs != [output_name]:
        raise QuantizeError(f"graph outputs {outputs}: expected one, '{output_name}'")
    transpose = graph.producer[output_name]
    if transpose.op_type != "Transpose":
        raise QuantizeError(f"{_where(transpose)}: expected the output to come from a Transpose")
    levels = graph.producer.get(transpose.input[0])
    if levels is None or levels.op_type != "Concat":
        raise QuantizeError(f"{_where(transpose)}: expected its input to come from a Concat of the "
                            "levels")

    score_channels = None
    removed = set()
    for reshape_out in levels.input:
        reshape = graph.producer.get(reshape_out)
        level = graph.producer.get(reshape.input[0]) if reshape is not None else None
        if reshape is None or reshape.op_type != "Reshape" or level.op_type != "Concat":
            raise QuantizeError(f"{_where(levels)}: expected Reshape(Concat[box, obj, cls]) inputs")
        channels = []
        for part in level.input:
            p = graph.producer[part]
            width = _channels(graph, part)
            if p.op_type == "Sigmoid" and graph.consumers[part] == [level]:
                channels.append((width, True))
                removed.add(p.name)
            elif p.op_type == "Conv":
                channels.append((width, False))
            else:
                raise QuantizeError(f"{_where(p)}: a level's prediction is neither a Conv nor a "
                                    "Sigmoid of one")
        mask = np.concatenate([np.full(w, s) for w, s in channels])
        first = int(np.argmax(mask)) if mask.any() else len(mask)
        if not mask[first:].all():
            raise QuantizeError(f"{_where(level)}: the score channels must be one run at the end")
        span = (first, len(mask))
        if score_channels not in (None, span):
            raise QuantizeError(f"{_where(level)}: levels disagree on the score channels")
        score_channels = span

    # NPU part: the sigmoids' consumers read their inputs; the level Concat is the output.
    bypass = {n.output[0]: n.input[0] for n in g.node if n.name in removed}
    keep = [n for n in g.node if n.name not in removed and n is not transpose]
    for n in keep:
        for k, i in enumerate(n.input):
            if i in bypass:
                n.input[k] = bypass[i]
    levels.output[0] = NPU_OUTPUT
    del g.node[:]
    g.node.extend(keep)
    channels_total = score_channels[1]
    anchors = _static_dim(model, levels)
    del g.output[:]
    g.output.extend([helper.make_tensor_value_info(NPU_OUTPUT, onnx.TensorProto.FLOAT,
                                                   [1, channels_total, anchors])])
    del g.value_info[:]
    npu_model = shape_inference.infer_shapes(model)
    head_model = _head(channels_total, anchors, score_channels)
    return Cut(npu_model, head_model, score_channels, sorted(bypass.values()))


def _channels(graph, tensor):
    p = graph.producer[tensor]
    conv = p if p.op_type == "Conv" else graph.producer[p.input[0]]
    return int(graph.array(conv.input[1]).shape[0])


def _static_dim(model, levels):
    inferred = shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    shape = shapes.get(levels.output[0])
    if not shape or len(shape) != 3 or not shape[2]:
        raise QuantizeError(f"{_where(levels)}: its output shape is not static [1, C, anchors]")
    return shape[2]


def _head(channels, anchors, score_channels):
    """The CPU head: sigmoid over the score channels, then [1, C, A] -> [1, A, C]."""
    first, end = score_channels
    f32 = onnx.TensorProto.FLOAT
    inits = [numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in
             (("box_start", [0]), ("box_end", [first]), ("score_start", [first]),
              ("score_end", [end]), ("axis1", [1]))]
    nodes = [
        helper.make_node("Slice", [NPU_OUTPUT, "box_start", "box_end", "axis1"], ["box"],
                         name="head_box"),
        helper.make_node("Slice", [NPU_OUTPUT, "score_start", "score_end", "axis1"], ["logit"],
                         name="head_logit"),
        helper.make_node("Sigmoid", ["logit"], ["score"], name="head_sigmoid"),
        helper.make_node("Concat", ["box", "score"], ["decoded"], axis=1, name="head_concat"),
        helper.make_node("Transpose", ["decoded"], [HEAD_OUTPUT], perm=[0, 2, 1],
                         name="head_transpose"),
    ]
    graph = helper.make_graph(
        nodes, "yolox_head",
        [helper.make_tensor_value_info(NPU_OUTPUT, f32, [1, channels, anchors])],
        [helper.make_tensor_value_info(HEAD_OUTPUT, f32, [1, anchors, channels])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="vigil quantize-model")
    onnx.checker.check_model(model)
    return model
