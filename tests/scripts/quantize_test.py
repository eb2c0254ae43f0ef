"""scripts/quantize-model.py and its rooms (scripts/quantize/): scale choice on hand-made tensors,
equalization on the real model, determinism, refusals. Run by ctest as scripts.quantize with
VIGIL_MODEL_DIR, VIGIL_SHARED_DIR and VIGIL_BINARY set; parts needing the weights, the shared
clips or the binary skip with the reason when they are absent."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import cv2  # noqa: E402
import onnx  # noqa: E402
import yaml  # noqa: E402

from quantize import calibrate, equalize, graph  # noqa: E402
from quantize import scales as S  # noqa: E402

MODEL_DIR = os.environ.get("VIGIL_MODEL_DIR", os.path.join(ROOT, "models", "yolox-nano"))
SHARED = os.environ.get("VIGIL_SHARED_DIR", os.path.join(ROOT, "..", "shared"))
VIGIL = os.environ.get("VIGIL_BINARY", os.path.join(ROOT, "build", "vigil"))
WEIGHTS = os.path.join(MODEL_DIR, "yolox_nano.onnx")
CLIP = os.path.join(SHARED, "data", "videos", "one-by-one-person-detection.mp4")
QUANTIZE = os.path.join(ROOT, "scripts", "quantize-model.py")


def needs(path, what):
    return unittest.skipUnless(os.path.exists(path), f"{what} absent at {path}")


class PowerOfTwoScaleTest(unittest.TestCase):
    def test_weights_take_the_finest_power_of_two_that_holds_the_largest(self):
        self.assertEqual(S.power_of_two_weight_scale(np.array([1.0, -0.2])), 2.0 ** -6)
        self.assertEqual(S.power_of_two_weight_scale(np.array([0.5])), 2.0 ** -7)
        exactly = np.array([127 * 2.0 ** -8])  # 127 steps of 2^-8: fits exactly
        self.assertEqual(S.power_of_two_weight_scale(exactly), 2.0 ** -8)
        self.assertEqual(S.power_of_two_weight_scale(exactly * 1.001), 2.0 ** -7)
        self.assertEqual(S.power_of_two_weight_scale(np.zeros(3)), 1.0)

    def test_minmse_clips_a_rare_outlier(self):
        rng = np.random.default_rng(7)
        samples = np.concatenate([rng.uniform(-1, 1, 200000), [100.0]])
        chosen = S.power_of_two_minmse(samples, samples.min(), samples.max(), "uint8")
        self.assertEqual(chosen.zero_point, 128)
        covering = 2.0 ** np.ceil(np.log2(100 / 127))
        self.assertLess(chosen.scale, covering, "the outlier should be clipped")
        self.assertEqual(np.log2(chosen.scale), np.round(np.log2(chosen.scale)))
        errors = {e: S.quantization_mse(samples, S.QuantParams(covering * 2.0 ** e, 128, "uint8"))
                  for e in (1, 0, -1, -2, -3)}
        self.assertAlmostEqual(S.quantization_mse(samples, chosen), min(errors.values()))

    def test_minmse_keeps_the_covering_scale_for_a_flat_tensor(self):
        samples = np.linspace(-127, 127, 2001)
        chosen = S.power_of_two_minmse(samples, -127, 127, "uint8")
        self.assertEqual(chosen.scale, 1.0)

    def test_fake_quantize_rounds_half_to_even_and_saturates(self):
        p = S.QuantParams(0.5, 0, "int8")
        np.testing.assert_array_equal(S.fake_quantize(np.array([0.25, 0.75, 100.0, -100.0]), p),
                                      [0.0, 1.0, 63.5, -64.0])

    def test_affine_minmax_represents_zero_exactly(self):
        p = S.affine_minmax(-0.3, 6.0, "uint8")
        self.assertEqual(S.fake_quantize(np.array([0.0]), p)[0], 0.0)
        self.assertLessEqual(abs(S.fake_quantize(np.array([6.0]), p)[0] - 6.0), p.scale)


@needs(WEIGHTS, "YOLOX-nano weights")
class EqualizationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.npu = graph.cut_for_npu(onnx.load(WEIGHTS)).npu
        x = np.full((1, 3, 416, 416), 114, np.float32)
        x[:, :, 60:300, 80:380] = np.random.default_rng(3).integers(0, 256, (1, 3, 240, 300))
        cls.frame = x

    def run_model(self, model):
        path = os.path.join(tempfile.mkdtemp(), "m.onnx")
        onnx.save(model, path)
        net = cv2.dnn.readNetFromONNX(path)
        net.setInput(self.frame)
        out = net.forward()
        shutil.rmtree(os.path.dirname(path))
        return out

    def equalized(self, mode):
        g = graph.Graph(onnx.load_from_string(self.npu.SerializeToString()))
        pairs = equalize.equalize(g, mode)
        return g, pairs

    def test_exact_equalization_keeps_the_output_and_evens_the_ranges(self):
        g, pairs = self.equalized("exact")
        self.assertGreater(pairs, 50)
        before = self.run_model(self.npu)
        after = self.run_model(g.model)
        scale = np.maximum(1.0, np.abs(before))
        self.assertLess(float(np.max(np.abs(after - before) / scale)), 1e-3)
        for conv1, _sig, _mul, consumers in equalize.find_pairs(g):
            w1 = g.array(conv1.input[1])
            r1 = np.abs(w1.reshape(w1.shape[0], -1)).max(axis=1)
            r2 = np.max([equalize._in_channel_range(g.array(c.input[1]), equalize._group(c) != 1)
                         for c in consumers], axis=0)
            np.testing.assert_allclose(r1, r2, rtol=1e-3, err_msg=conv1.name)

    def test_equalization_by_activations_keeps_the_output_and_evens_them(self):
        g = graph.Graph(onnx.load_from_string(self.npu.SerializeToString()))
        pairs = equalize.find_pairs(g)
        conv1 = pairs[0][0]
        rng = np.random.default_rng(5)
        ranges = {p[0].output[0]: rng.uniform(0.1, 50, g.array(p[0].input[1]).shape[0])
                  for p in pairs}
        w_before = g.array(conv1.input[1]).copy()
        r2_before = np.max([equalize._in_channel_range(g.array(c.input[1]),
                                                       equalize._group(c) != 1)
                            for c in pairs[0][3]], axis=0)
        equalize.equalize(g, "exact", activation_ranges=ranges, alpha=1.0)
        before = self.run_model(self.npu)
        after = self.run_model(g.model)
        scale = np.maximum(1.0, np.abs(before))
        self.assertLess(float(np.max(np.abs(after - before) / scale)), 1e-3)
        # alpha 1: channel i of conv1 is divided by s_i = sqrt(a_i / r2_i) (normalized), so the
        # channel's activation range and its consumers' weight range end up in one ratio.
        s = np.abs(w_before.reshape(len(w_before), -1)).max(axis=1) / \
            np.abs(g.array(conv1.input[1]).reshape(len(w_before), -1)).max(axis=1)
        ratio = (ranges[conv1.output[0]] / s) / (r2_before * s)  # (its consumers come later)
        self.assertLess(ratio.max() / ratio.min(), 1.001)
        a = ranges[conv1.output[0]]
        self.assertGreater(a.max() / a.min(), 10, "the test's ranges must differ to show anything")

    def test_approximate_equalization_changes_the_output(self):
        # SiLU is not scale-equivariant: what the exact mode's gate scale is for.
        g, _ = self.equalized("approximate")
        before = self.run_model(self.npu)
        after = self.run_model(g.model)
        self.assertGreater(float(np.max(np.abs(after - before))), 0.1)


class RefusalTest(unittest.TestCase):
    def model_dir_with(self, model):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        path = os.path.join(d, "yolox_nano.onnx")
        onnx.save(model, path)
        with open(os.path.join(MODEL_DIR, "model.yaml")) as f:
            manifest = yaml.safe_load(f)
        manifest["files"]["yolox_nano.onnx"]["accepted"] = [
            {"sha256": calibrate.sha256(path), "size": os.path.getsize(path)}]
        with open(os.path.join(d, "model.yaml"), "w") as f:
            yaml.safe_dump(manifest, f)
        return d

    def quantize(self, model_dir, *extra):
        out = os.path.join(tempfile.mkdtemp(), "out")
        self.addCleanup(shutil.rmtree, os.path.dirname(out))
        return subprocess.run([sys.executable, QUANTIZE, "--model", model_dir, "--preset", "float",
                               "--out", out, *extra], capture_output=True, text=True), out

    @needs(WEIGHTS, "YOLOX-nano weights")
    def test_an_unknown_operator_is_refused_naming_the_node(self):
        model = onnx.load(WEIGHTS)
        node = next(n for n in model.graph.node if n.name == "Sigmoid_366")
        node.op_type = "HardSigmoid"
        result, out = self.quantize(self.model_dir_with(model))
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("node 'Sigmoid_366' (HardSigmoid): not a pattern this quantizer knows",
                      result.stderr)
        self.assertFalse(os.path.exists(out))

    @needs(WEIGHTS, "YOLOX-nano weights")
    def test_a_mul_that_is_not_silu_is_refused_naming_the_node(self):
        model = onnx.load(WEIGHTS)
        node = next(n for n in model.graph.node if n.name == "Mul_367")
        node.input[1] = node.input[0]  # x * x
        result, _ = self.quantize(self.model_dir_with(model))
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("node 'Mul_367' (Mul): a Mul that is neither x * Sigmoid(x)", result.stderr)

    @needs(WEIGHTS, "YOLOX-nano weights")
    def test_weights_the_manifest_does_not_list_are_refused(self):
        d = self.model_dir_with(onnx.load(WEIGHTS))
        with open(os.path.join(d, "yolox_nano.onnx"), "ab") as f:
            f.write(b"\0")
        result, _ = self.quantize(d)
        self.assertEqual(result.returncode, 1)
        self.assertIn("is not listed", result.stderr)

    def test_an_integer_preset_without_calibration_is_refused(self):
        result = subprocess.run([sys.executable, QUANTIZE, "--model", MODEL_DIR, "--preset", "a8w8",
                                 "--out", "/nonexistent/x"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--preset a8w8 needs --calibration frames", result.stderr)


@needs(CLIP, "the calibration clip")
class CalibrationSourceTest(unittest.TestCase):
    def test_frames_are_shared_by_the_sources_and_recorded_exactly(self):
        images = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, images)
        for name in ("b.jpg", "a.jpg", ".c.jpg"):  # .c.jpg: a frame still being written
            cv2.imwrite(os.path.join(images, name), np.full((30, 40, 3), 90, np.uint8))
        source = calibrate.CalibrationSource([images, CLIP, CLIP], 7, 416, 416, 114)
        self.assertEqual(len(source.frames), 7)
        self.assertEqual([r["file"] for r in source.records],
                         ["a.jpg", "b.jpg", os.path.basename(CLIP), os.path.basename(CLIP)])
        self.assertEqual([len(r["frames"]) for r in source.records], [1, 1, 3, 2])
        self.assertEqual(source.records[2]["frames"][0], 0)
        frame = source.frames[0]
        self.assertEqual(frame.shape, (1, 3, 416, 416))
        self.assertEqual(float(frame[0, 0, 400, 400]), 114.0, "letterbox pad below the image")


@needs(WEIGHTS, "YOLOX-nano weights")
@needs(CLIP, "the calibration clip")
class DeterminismTest(unittest.TestCase):
    def test_the_same_inputs_give_byte_identical_models(self):
        outs = []
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        canary = os.path.join(work, "street.jpg")
        cv2.imwrite(canary, np.full((48, 64, 3), 90, np.uint8))
        for run in range(2):
            out = os.path.join(work, f"run{run}")
            subprocess.run([sys.executable, QUANTIZE, "--model", MODEL_DIR, "--preset", "xint8",
                            "--calibration", CLIP, "--frames", "6", "--canary-image", canary,
                            "--out", out], check=True, capture_output=True)
            outs.append(out)
        for name in ("npu.onnx", "head.onnx", "model.yaml", "canary.jpg"):
            with open(os.path.join(outs[0], name), "rb") as a, \
                    open(os.path.join(outs[1], name), "rb") as b:
                self.assertEqual(a.read(), b.read(), f"{name} differs between two runs")
        with open(os.path.join(outs[0], "model.yaml")) as f:
            record = yaml.safe_load(f)["quantization"]
        self.assertEqual(record["calibration"]["sources"][0]["sha256"], calibrate.sha256(CLIP))
        self.assertEqual(len(record["calibration"]["sources"][0]["frames"]), 6)
        self.assertEqual(record["source_model"]["sha256"], calibrate.sha256(WEIGHTS))
        self.assertEqual(record["precision"], "int8 weights, uint8 activations")
        with open(os.path.join(outs[0], "model.yaml")) as f:
            twin = yaml.safe_load(f)["cpu_twin"]
        self.assertEqual(twin, {"model": os.path.relpath(MODEL_DIR, outs[0]),
                                "sha256": calibrate.sha256(WEIGHTS)})
        with open(os.path.join(outs[0], "model.yaml")) as f:
            npu = yaml.safe_load(f)["stages"][0]["npu"]
        self.assertEqual(npu, {"runtime": "vitisai", "compiler": "int8", "min_npu_nodes": 113,
                               "canary_tolerance": 0.5, "canary": {"image": "canary.jpg"}})
        if os.path.exists(VIGIL):  # Vigil's own reader accepts what the quantizer wrote
            doctor = subprocess.run([VIGIL, "doctor", "--model", outs[0]], capture_output=True,
                                    text=True)
            self.assertEqual(doctor.returncode, 0, doctor.stdout + doctor.stderr)
            self.assertIn("for ONNX Runtime's Vitis AI EP (int8 compiler", doctor.stdout)


SHIPPED = os.path.join(ROOT, "models", "yolox-nano-npu-a16w8")


class ShippedModelFormTest(unittest.TestCase):
    """The committed integer models have the form AMD's integer compiler documents (XINT8: all
    scales powers of two; A8W8/A16W8: int8 symmetric weights; int32 biases at s_x * s_w) and
    the NPU part has one output. No compiler runs here: this is the form, not its verdict."""

    def load(self, preset):
        d = os.path.join(ROOT, "models", f"yolox-nano-npu-{preset}")
        if not os.path.isdir(d):
            self.skipTest(f"{d} absent")
        return onnx.load(os.path.join(d, "npu.onnx"))

    def check(self, preset, activation_type, power_of_two):
        model = self.load(preset)
        if activation_type != onnx.TensorProto.UINT16:  # the checker knows no com.microsoft ops
            onnx.checker.check_model(model)
        self.assertEqual([o.name for o in model.graph.output], [graph.NPU_OUTPUT])
        inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
        producer = {o: n for n in model.graph.node for o in n.output}
        kinds = {n.op_type for n in model.graph.node}
        self.assertLessEqual(kinds, graph.KNOWN | {"QuantizeLinear", "DequantizeLinear"})
        scales = []
        for n in model.graph.node:
            if n.op_type == "QuantizeLinear":
                zero = model.graph.initializer[[t.name for t in model.graph.initializer]
                                               .index(n.input[2])]
                self.assertEqual(zero.data_type, activation_type, n.name)
                if power_of_two:  # XINT8 activations are symmetric: uint8 around 128
                    self.assertEqual(int(inits[n.input[2]]), 128, n.name)
                scales.append(float(inits[n.input[1]]))
            if n.op_type == "Conv":
                x_dq, w_dq, b_dq = (producer[i] for i in n.input)
                for dq in (x_dq, w_dq, b_dq):
                    self.assertEqual(dq.op_type, "DequantizeLinear", f"{n.name} input {dq.name}")
                w = inits[w_dq.input[0]]
                self.assertEqual(w.dtype, np.int8, n.name)
                self.assertTrue(np.all(inits[w_dq.input[2]] == 0), f"{n.name}: weights symmetric")
                self.assertEqual(inits[b_dq.input[0]].dtype, np.int32, n.name)
                s_x = float(inits[x_dq.input[1]])
                np.testing.assert_allclose(inits[b_dq.input[1]], s_x * inits[w_dq.input[1]],
                                           rtol=1e-6, err_msg=n.name)
                if power_of_two:
                    scales += list(np.ravel(inits[w_dq.input[1]]))
        self.assertGreater(len(scales), 100)
        if power_of_two:
            exponents = np.log2(np.asarray(scales, dtype=np.float64))
            np.testing.assert_array_equal(exponents, np.round(exponents))

    def test_xint8(self):
        self.check("xint8", onnx.TensorProto.UINT8, power_of_two=True)

    def test_a8w8(self):
        self.check("a8w8", onnx.TensorProto.UINT8, power_of_two=False)

    def test_a16w8(self):
        self.check("a16w8", onnx.TensorProto.UINT16, power_of_two=False)


@needs(VIGIL, "the vigil binary")
@needs(SHIPPED, "the shipped quantized model")
class ShippedModelTest(unittest.TestCase):
    def copy(self):
        d = os.path.join(tempfile.mkdtemp(), "m")
        self.addCleanup(shutil.rmtree, os.path.dirname(d))
        shutil.copytree(SHIPPED, d)
        return d

    def detect(self, model_dir, backend="cpu-ort"):
        image = os.path.join(tempfile.mkdtemp(), "grey.png")
        self.addCleanup(shutil.rmtree, os.path.dirname(image))
        cv2.imwrite(image, np.full((240, 320, 3), 128, np.uint8))
        return subprocess.run([VIGIL, "detect", "--model", model_dir, "--backend", backend,
                               image], capture_output=True, text=True)

    def test_a_tampered_quantized_file_is_refused(self):
        d = self.copy()
        path = os.path.join(d, "npu.onnx")
        data = bytearray(open(path, "rb").read())
        data[len(data) // 2] ^= 0x01
        with open(path, "wb") as f:
            f.write(data)
        result = self.detect(d)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("is not listed in", result.stderr + result.stdout)
        self.assertIn("refusing to run an unverified model", result.stderr + result.stdout)

    def test_the_opencv_backend_says_it_cannot_run_a_qdq_model(self):
        result = self.detect(SHIPPED, backend="cpu")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("cannot run yolox-nano-npu-a16w8 (a16w8 quantized, QDQ); use --backend "
                      "cpu-ort", result.stderr + result.stdout)


if __name__ == "__main__":
    unittest.main()
