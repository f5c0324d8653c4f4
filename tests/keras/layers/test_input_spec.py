"""keras.InputSpec: Keras 3.15's constructor (dtype, shape, ndim, max_ndim, min_ndim, axes,
allow_last_axis_squeeze, name, optional), its argument checks and config, and a layer refusing inputs by it."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from torchstrategy.keras.layers.input_spec import InputSpec


class Identity(tf.keras.layers.Layer):
    def __init__(self, spec, **kwargs):
        super().__init__(**kwargs)
        self.input_spec = spec

    def call(self, inputs):
        return inputs


def test_shape_sets_ndim_and_config_is_keras():
    # Keras 3.15: InputSpec(shape=(None, 4), dtype='float32').get_config() ==
    # {'dtype': 'float32', 'shape': (None, 4), 'ndim': 2, 'max_ndim': None, 'min_ndim': None, 'axes': {}, 'optional': False}
    spec = tf.keras.InputSpec(dtype=torch.float32, shape=[None, 4])
    assert spec.get_config() == {"dtype": "float32", "shape": (None, 4), "ndim": 2, "max_ndim": None,
                                 "min_ndim": None, "axes": {}, "optional": False}
    assert InputSpec.from_config(spec.get_config()) == spec
    assert repr(InputSpec(ndim=4, axes={-1: 3})) == "InputSpec(ndim=4, axes={-1: 3})"


def test_bad_axes_are_refused_as_keras():
    with pytest.raises(TypeError, match="Argument `axes` must be a dict with integer keys"):
        InputSpec(axes={"x": 2})
    with pytest.raises(ValueError, match="Axis 3 is greater than the maximum allowed value: 2"):
        InputSpec(ndim=3, axes={3: 5})
    with pytest.raises(ValueError, match="Axis 2 is greater than the maximum allowed value: 1"):
        InputSpec(max_ndim=2, axes={2: 5})


@pytest.mark.parametrize("spec, shape, dtype, message", [
    (InputSpec(max_ndim=2), (2, 3, 4), torch.float32, "expected max_ndim=2, found ndim=3"),
    (InputSpec(min_ndim=3), (2, 3), torch.float32, "expected min_ndim=3, found ndim=2"),
    (InputSpec(ndim=2), (2, 3, 4), torch.float32, "expected ndim=2, found ndim=3"),
    (InputSpec(dtype="float64"), (2, 3), torch.float32, "expected dtype=float64, found dtype=float32"),
    (InputSpec(axes={-1: 4}), (2, 3), torch.float32, "expected axis -1 of input shape to have value 4"),
    (InputSpec(shape=(None, 5)), (2, 3), torch.float32, r"expected shape=\(None, 5\), found shape="),
])
def test_a_layer_refuses_inputs_its_spec_excludes(spec, shape, dtype, message):
    layer = Identity(spec, dtype=dtype)
    with pytest.raises(ValueError, match=message):
        layer(torch.zeros(shape, dtype=dtype))


def test_last_axis_squeeze_accepts_a_trailing_one_either_way():
    layer = Identity(InputSpec(shape=(None, 28, 28, 1), allow_last_axis_squeeze=True))
    assert layer(torch.zeros(2, 28, 28)).shape == (2, 28, 28)
    assert layer(torch.zeros(2, 28, 28, 1)).shape == (2, 28, 28, 1)
    with pytest.raises(ValueError, match="expected shape"):
        layer(torch.zeros(2, 28, 27))
