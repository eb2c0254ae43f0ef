"""Calibration: frames as Vigil's detector sees them, and what every tensor holds on them.

Frames come from images or videos, sampled evenly and in a fixed order, letterboxed exactly as
detector/preprocess.cpp does (r = min(W/w, H/h), INTER_LINEAR, top-left, pad value), so the
statistics describe the inputs the quantized model will get. The float model runs in OpenCV
DNN, which returns any node's output by name.
"""

import hashlib
import os
import tempfile

import cv2
import numpy as np

from quantize import QuantizeError

IMAGE_EXTENSIONS = {".jpg", ".jpeg", ".png", ".bmp"}
SAMPLES_PER_FRAME = 4096  # values kept per tensor and frame for the error searches


class CalibrationSource:
    """The sampled frames and a record of where they came from (paths, sha256, indices)."""

    def __init__(self, paths, frames, width, height, pad_value):
        self.records = []
        self.frames = []
        files = []
        for path in paths:
            if os.path.isdir(path):
                files += sorted(os.path.join(path, f) for f in os.listdir(path)
                                if os.path.splitext(f)[1].lower() in IMAGE_EXTENSIONS
                                and not f.startswith("."))  # skip frames still being written
            elif os.path.isfile(path):
                files.append(path)
            else:
                raise QuantizeError(f"{path}: calibration source not found")
        if not files:
            raise QuantizeError(f"{', '.join(paths)}: no calibration images or videos")
        images = [f for f in files if os.path.splitext(f)[1].lower() in IMAGE_EXTENSIONS]
        videos = [f for f in files if f not in images]
        if len(images) > frames:  # evenly over the set, in order
            images = [images[i] for i in np.linspace(0, len(images) - 1, frames).round()
                      .astype(int)]
        for f in images:
            img = cv2.imread(f, cv2.IMREAD_COLOR)
            if img is None:
                raise QuantizeError(f"{f}: not a readable image")
            self.frames.append(letterbox(img, width, height, pad_value))
            self.records.append({"file": os.path.basename(f), "sha256": sha256(f), "frames": [0]})
        remaining = frames - len(images)  # shared by the videos, the first ones one more
        for k, f in enumerate(videos):
            count = remaining // len(videos) + (k < remaining % len(videos))
            if count == 0:
                continue
            picked = _sample_video(f, count)
            self.frames += [letterbox(img, width, height, pad_value) for _, img in picked]
            self.records.append({"file": os.path.basename(f), "sha256": sha256(f),
                                 "frames": [i for i, _ in picked]})


def _sample_video(path, count):
    capture = cv2.VideoCapture(path)
    total = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    if not capture.isOpened() or total <= 0:
        raise QuantizeError(f"{path}: not a readable video")
    wanted = sorted(set(np.linspace(0, total - 1, min(count, total)).round().astype(int)))
    picked, index = [], 0
    while wanted and index <= wanted[-1]:  # decode in order: seeking is not exact in every codec
        ok, img = capture.read()
        if not ok:
            raise QuantizeError(f"{path}: decoding stopped at frame {index} of {total}")
        if index in wanted:
            picked.append((index, img))
        index += 1
    return picked


def letterbox(img, width, height, pad_value):
    h, w = img.shape[:2]
    r = min(width / w, height / h)
    rw, rh = int(round(w * r)), int(round(h * r))
    canvas = np.full((height, width, 3), pad_value, dtype=np.uint8)
    canvas[:rh, :rw] = img if (rw, rh) == (w, h) else cv2.resize(img, (rw, rh),
                                                                 interpolation=cv2.INTER_LINEAR)
    return canvas.transpose(2, 0, 1)[None].astype(np.float32)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


class TensorStats:
    """What one tensor held over the calibration frames."""

    def __init__(self):
        self.lo, self.hi = np.inf, -np.inf
        self.parts = []
        self.channel_sum = None
        self.channel_absmax = None
        self.frames = 0

    def add(self, x):
        self.lo = min(self.lo, float(x.min()))
        self.hi = max(self.hi, float(x.max()))
        flat = x.reshape(-1)
        self.parts.append(flat[:: max(1, flat.size // SAMPLES_PER_FRAME)].astype(np.float32))
        if x.ndim == 4:
            mean = x.mean(axis=(0, 2, 3), dtype=np.float64)
            absmax = np.abs(x).max(axis=(0, 2, 3))
            self.channel_sum = mean if self.channel_sum is None else self.channel_sum + mean
            self.channel_absmax = absmax if self.channel_absmax is None \
                else np.maximum(self.channel_absmax, absmax)
        self.frames += 1

    @property
    def samples(self):
        return np.concatenate(self.parts).astype(np.float64)

    @property
    def channel_mean(self):
        return None if self.channel_sum is None else self.channel_sum / self.frames


def collect(model, input_name, frames):
    """Runs the float model on every frame; returns {tensor name: TensorStats}."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "calibration.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        net = cv2.dnn.readNetFromONNX(path)
    nodes = list(model.graph.node)
    layers = [f"onnx_node!{n.name}" for n in nodes]
    known = set(net.getLayerNames())
    missing = [n.name for n, l in zip(nodes, layers) if l not in known]
    if missing:
        raise QuantizeError(f"node '{missing[0]}': OpenCV DNN does not expose its output "
                            "(it fused it away); cannot calibrate it")
    stats = {n.output[0]: TensorStats() for n in nodes}
    stats[input_name] = TensorStats()
    for frame in frames:
        net.setInput(frame)
        stats[input_name].add(frame)
        for n, out in zip(nodes, net.forward(layers)):
            if not np.all(np.isfinite(out)):
                raise QuantizeError(f"node '{n.name}': non-finite output on a calibration frame")
            stats[n.output[0]].add(out)
    return stats
