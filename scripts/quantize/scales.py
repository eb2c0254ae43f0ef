"""How a range of real values becomes integers: scales, zero points and their error.

q = clip(round_half_even(x / scale) + zero_point, qmin, qmax), x' = (q - zero_point) * scale,
as ONNX's QuantizeLinear and DequantizeLinear compute them.
"""

from dataclasses import dataclass

import numpy as np

INTEGER_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
                  "uint16": (0, 65535)}


@dataclass(frozen=True)
class QuantParams:
    """One tensor's quantization: a scale (scalar, or per channel along axis 0) and zero point."""
    scale: object  # float, or np.ndarray of float32 per output channel
    zero_point: int
    dtype: str  # a key of INTEGER_RANGES

    @property
    def qrange(self):
        return INTEGER_RANGES[self.dtype]


def fake_quantize(x, params):
    """x quantized and dequantized again: what the integer graph computes in place of x."""
    qmin, qmax = params.qrange
    scale = np.asarray(params.scale, dtype=np.float64)
    if scale.ndim == 1:
        scale = scale.reshape((-1,) + (1,) * (np.ndim(x) - 1))
    q = np.clip(np.rint(np.asarray(x, dtype=np.float64) / scale) + params.zero_point, qmin, qmax)
    return ((q - params.zero_point) * scale).astype(np.float32)


def quantization_mse(samples, params):
    d = fake_quantize(samples, params).astype(np.float64) - samples
    return float(np.mean(d * d))


def power_of_two_weight_scale(w, bits=8):
    """XINT8 weights: the finest power-of-two scale 2^-k that still holds max|w| in bits-1 bits."""
    qmax = 2 ** (bits - 1) - 1
    m = float(np.max(np.abs(w))) if np.size(w) else 0.0
    if m == 0.0:
        return 1.0
    k = int(np.floor(np.log2(qmax / m)))
    while m / 2.0 ** -k > qmax:  # guard the float rounding of log2 at exact powers
        k -= 1
    return float(2.0 ** -k)


def symmetric_weight_scales(w, per_channel):
    """A8W8/A16W8 weights: int8 symmetric, max|w| / 127, per output channel or per tensor."""
    if per_channel:
        m = np.max(np.abs(w.reshape(w.shape[0], -1)), axis=1).astype(np.float64)
        return np.where(m > 0, m / 127.0, 1.0).astype(np.float32)
    m = float(np.max(np.abs(w)))
    return np.float32(m / 127.0 if m > 0 else 1.0)


def power_of_two_minmse(samples, lo, hi, dtype="uint8", candidates=5):
    """XINT8 activations: symmetric, power-of-two scale, chosen by least quantization error.

    Starts from the finest power of two whose range covers max(|lo|, |hi|) and tries it, one
    coarser and `candidates - 2` finer ones (Quark's MinMSE: pos_range 5), keeping the one with
    the least mean squared error over the calibration samples (ties: the first, the coarser).
    """
    qmin, qmax = INTEGER_RANGES[dtype]
    zero_point = (qmin + qmax + 1) // 2 if qmin == 0 else 0  # uint8 "symmetric": 128
    reach = qmax - zero_point  # positive steps
    m = max(abs(float(lo)), abs(float(hi)))
    if m == 0.0:
        return QuantParams(1.0, zero_point, dtype)
    start = int(np.ceil(np.log2(m / reach)))
    best = None
    for exponent in range(start + 1, start + 1 - candidates, -1):
        params = QuantParams(float(2.0 ** exponent), zero_point, dtype)
        error = quantization_mse(samples, params)
        if best is None or error < best[0]:
            best = (error, params)
    return best[1]


def affine_minmax(lo, hi, dtype):
    """Asymmetric: [min(lo, 0), max(hi, 0)] spread over the whole integer range, 0 exact."""
    qmin, qmax = INTEGER_RANGES[dtype]
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if hi - lo == 0.0:
        return QuantParams(1.0, qmin if qmin == 0 else 0, dtype)
    scale = (hi - lo) / (qmax - qmin)
    zero_point = int(np.clip(np.rint(qmin - lo / scale), qmin, qmax))
    return QuantParams(float(np.float32(scale)), zero_point, dtype)


def affine_minmse(samples, lo, hi, dtype, steps=36):
    """Asymmetric with a clipped range: of [lo, hi] shrunk by 0.30 ... 1.00 (`steps` fractions),
    the one with the least mean squared error over the samples (ties: the widest)."""
    best = None
    for fraction in np.linspace(1.0, 0.3, steps):
        params = affine_minmax(lo * fraction, hi * fraction, dtype)
        error = quantization_mse(samples, params)
        if best is None or error < best[0]:
            best = (error, params)
    return best[1]
