"""tf.dtypes additions: the quantized and narrow dtypes torch shares with TF 2.21, and tf.dtypes.cast / complex /
saturate_cast reaching the ops (TF's float8_e4m3b11fnuz, float4_e2m1fn, qint16 have no torch dtype)."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf


def test_narrow_and_quantized_dtypes_are_torchs():
    assert tf.dtypes.experimental.float8_e4m3fn is torch.float8_e4m3fn
    assert tf.dtypes.experimental.float8_e5m2fnuz is torch.float8_e5m2fnuz
    assert tf.dtypes.experimental.int4 is torch.int4 and tf.dtypes.experimental.uint2 is torch.uint2
    assert tf.dtypes.qint8 is torch.qint8 and tf.dtypes.QUANTIZED_DTYPES == {torch.qint8, torch.quint8, torch.qint32}
    assert torch.ones(2).to(tf.dtypes.experimental.float8_e5m2).dtype == torch.float8_e5m2


def test_cast_complex_and_saturate_cast_live_under_dtypes():
    assert tf.dtypes.cast([1.7, -2.2], tf.int32).tolist() == [1, -2]
    assert tf.dtypes.complex(torch.tensor([1.0]), torch.tensor([2.0])).tolist() == [1 + 2j]
    assert tf.dtypes.saturate_cast(torch.tensor([300.0, -5.0]), tf.uint8).tolist() == [255, 0]
    assert "cast" in dir(tf.dtypes) and "float32" in dir(tf.dtypes)
    with pytest.raises(AttributeError, match="float8_e4m3b11fnuz"):
        tf.dtypes.experimental.float8_e4m3b11fnuz  # noqa: B018
