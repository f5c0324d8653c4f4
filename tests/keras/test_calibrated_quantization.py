"""keras.quantizers.GPTQConfig / AWQConfig keep Keras 3.15's signatures and raise NotImplementedError naming the
missing calibration pass and what to use instead."""
from __future__ import annotations

import inspect

import pytest

import torchstrategy as tf

Q = tf.keras.quantizers


@pytest.mark.parametrize("name,extra", [("GPTQConfig", {"hessian_damping": 0.02}),
                                        ("AWQConfig", {"num_grid_points": 10})])
def test_calibration_configs_raise_not_implemented(name, extra):
    cls = getattr(Q, name)
    assert issubclass(cls, Q.QuantizationConfig)
    params = inspect.signature(cls).parameters
    assert list(params)[:2] == ["dataset", "tokenizer"] and params["weight_bits"].kind is inspect.Parameter.KEYWORD_ONLY
    with pytest.raises(NotImplementedError, match=f"{name}.*calibration.*AbsMaxQuantizer"):
        cls(["some text"], lambda text: [1, 2], weight_bits=4, **extra)
