"""Vigil's post-training quantizer for YOLOX ONNX models (scripts/quantize-model.py).

Rooms: graph (what the network is, and its cut into an NPU part and a CPU head), scales (how a
range becomes integers), equalize (cross-layer equalization), calibrate (frames and activation
statistics through OpenCV DNN), qdq (the quantized ONNX graph) and bundle (the model directory
and its manifest). Needs only Debian's python3-onnx, python3-numpy and python3-opencv.
"""


class QuantizeError(Exception):
    """A refusal with where and why; the command prints it and exits 1."""
