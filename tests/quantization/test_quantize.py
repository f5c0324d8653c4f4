"""quantization/_quantize.py: quantize / dequantize in TF's three modes, quantize_and_dequantize(_v2) and
quantized_concat equal TF 2.21's numbers exactly (quantization_reference.json); TF's errors for bad modes/ranges."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from tests.quantization._reference import MATRIX, REF, X, exactly

q = tf.quantization


def _as_lists(result):
    return [result.output.to(torch.int64).tolist(), float(result.output_min), float(result.output_max)]


@pytest.mark.parametrize("T", ["quint8", "qint8", "qint16", "quint16"])
@pytest.mark.parametrize("mode", ["MIN_COMBINED", "MIN_FIRST", "SCALED"])
def test_quantize_in_every_mode_and_type(T, mode):
    result = q.quantize(X, -3.0, 6.5, T, mode=mode)
    assert _as_lists(result) == REF[f"quantize_{T}_{mode}"]
    assert result.output.dtype == {"quint8": torch.uint8, "qint8": torch.int8, "qint16": torch.int16,
                                   "quint16": torch.uint16}[T]


def test_quantize_rounding_narrow_range_tiny_ranges_and_axis():
    assert _as_lists(q.quantize(X, -3.0, 6.5, "qint8", mode="SCALED", round_mode="HALF_TO_EVEN",
                                narrow_range=True)) == REF["quantize_qint8_SCALED_even_narrow"]
    # a range narrower than ensure_minimum_range is widened (and made to include 0)
    assert _as_lists(q.quantize(X, 0.5, 0.5001, "quint8")) == REF["quantize_tiny_range"]
    result = q.quantize(MATRIX, [-1.0, -0.5, 0.2], [1.0, 6.0, 3.0], "qint8", mode="SCALED", axis=1)
    assert [result.output.to(torch.int64).tolist(), result.output_min.tolist(), result.output_max.tolist()] == \
        REF["quantize_axis"]


@pytest.mark.parametrize("mode", ["MIN_COMBINED", "MIN_FIRST", "SCALED"])
def test_dequantize_in_every_mode(mode):
    unsigned = torch.tensor([0, 1, 17, 128, 200, 255], dtype=torch.uint8)
    signed = torch.tensor([-128, -127, -5, 0, 60, 127], dtype=torch.int8)
    exactly(q.dequantize(unsigned, -3.0, 6.5, mode=mode), f"deq_quint8_{mode}")
    exactly(q.dequantize(signed, -3.0, 6.5, mode=mode), f"deq_qint8_{mode}")
    if mode == "SCALED":
        exactly(q.dequantize(signed, -3.0, 6.5, mode=mode, narrow_range=True), "deq_qint8_SCALED_narrow")
    assert q.dequantize(signed, -3.0, 6.5, mode=mode, dtype="bfloat16").dtype == torch.bfloat16


def test_quantize_and_dequantize_with_given_or_measured_ranges():
    exactly(q.quantize_and_dequantize_v2(X, 0.0, 0.0), "qdq_v2_auto")  # the input's own min and max
    exactly(q.quantize_and_dequantize_v2(X, -2.0, 4.0, range_given=True, num_bits=4), "qdq_v2_given")
    exactly(q.quantize_and_dequantize_v2(abs(X), 0.0, 0.0, signed_input=False, num_bits=3, round_mode="HALF_UP"),
            "qdq_v2_unsigned_halfup")
    exactly(q.quantize_and_dequantize_v2(X, -2.0, 4.0, range_given=True, narrow_range=True), "qdq_v2_narrow")
    exactly(q.quantize_and_dequantize(X, -2.0, 4.0, range_given=True, num_bits=5), "qdq_v1")
    exactly(q.quantize_and_dequantize_v2(MATRIX, [0.0] * 3, [0.0] * 3, axis=1, num_bits=4), "qdq_axis")


def test_quantize_and_dequantize_passes_no_gradient_as_in_tf():
    assert REF["qdq_grad"] is None and REF["qdq_v1_grad"] is None and REF["qdq_var_grad"] is None  # TF 2.21
    x = tf.Variable(X)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(q.quantize_and_dequantize_v2(x, -2.0, 4.0, range_given=True))
    assert tape.gradient(loss, x) is None


def test_quantized_concat_requantizes_to_the_joint_range():
    a, b = torch.tensor([0, 10, 255], dtype=torch.uint8), torch.tensor([5, 128, 250], dtype=torch.uint8)
    assert _as_lists(q.quantized_concat(0, [a, b], [-1.0, 0.0], [1.0, 3.0])) == REF["qconcat"]
    same = torch.tensor([[0, 1], [5, 255]], dtype=torch.uint8)
    assert _as_lists(q.quantized_concat(1, [same, same], [-1.0, -1.0], [1.0, 1.0])) == REF["qconcat_same"]
    wide = torch.tensor([-2000000000, 0, 7, 2000000000], dtype=torch.int32)  # signed: a symmetric joint range
    assert _as_lists(q.quantized_concat(0, [wide, wide], [-1.0, -2.0], [1.0, 0.5])) == REF["qconcat_32"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="one entry per input"):
        q.quantized_concat(0, [a, b], [0.0], [1.0, 1.0])


def test_bad_modes_and_ranges_raise_tfs_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Mode string must be"):
        q.quantize(X, -1.0, 1.0, "quint8", mode="BAD")
    assert "only supported for mode 'SCALED'" in REF["err_quant_even"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="only supported for mode 'SCALED'"):
        q.quantize(X, -1.0, 1.0, "quint8", round_mode="HALF_TO_EVEN")
    assert "input_max_range must be larger than input_min_range." in REF["err_quant_range"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="input_max_range must be larger than input_min_range"):
        q.quantize(X, 1.0, -1.0, "quint8")
    assert "Invalid range: input_min 4 > input_max -2" in REF["err_qdq_range"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid range: input_min 4 > input_max -2"):
        q.quantize_and_dequantize_v2(X, 4.0, -2.0, range_given=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="T must be one of"):
        q.quantize(X, -1.0, 1.0, "float32")
    with pytest.raises(tf.errors.UnimplementedError, match="MIN_FIRST"):
        q.quantize(MATRIX, [-1.0] * 3, [1.0] * 3, "qint8", mode="MIN_FIRST", axis=1)
