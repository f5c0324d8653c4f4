"""keras.Input / InputLayer: Keras 3.15's arguments by position and name, the Keras 2 spellings InputLayer still
takes, and a clear refusal of the sparse / ragged / wrapped-tensor / optional inputs torchstrategy lacks."""
from __future__ import annotations

import pytest

from torchstrategy import keras


def test_arguments_bind_in_keras_order():
    x = keras.Input((4, 5), None, "int32")  # Keras 3.15: Input(shape, batch_size, dtype, ...)
    assert x.shape == (None, 4, 5) and str(x.dtype).endswith("int32")
    y = keras.Input(batch_shape=(2, 3), name="features")
    assert y.shape == (2, 3) and y.name == "features"
    layer = keras.layers.InputLayer((6,), 8, "float32")
    assert layer.output.shape == (8, 6)


def test_input_layer_takes_the_keras_2_spellings():
    assert keras.layers.InputLayer(input_shape=(3,)).output.shape == (None, 3)
    assert keras.layers.InputLayer(batch_input_shape=(5, 3)).output.shape == (5, 3)
    model = keras.Sequential([keras.layers.InputLayer(input_shape=(3,)), keras.layers.Dense(2)])
    assert model.output_shape == (None, 2)


@pytest.mark.parametrize("argument", [{"sparse": True}, {"ragged": True}, {"optional": True}])
def test_unsupported_input_kinds_are_refused_by_name(argument):
    (name, _), = argument.items()
    with pytest.raises(NotImplementedError, match=f"`{name}=True` is not supported"):
        keras.Input((3,), **argument)
    with pytest.raises(NotImplementedError, match=f"`{name}=True` is not supported"):
        keras.layers.InputLayer((3,), **argument)
    keras.Input((3,), **{name: None if name != "optional" else False})  # the defaults are fine


def test_wrapping_an_existing_tensor_is_refused():
    with pytest.raises(NotImplementedError, match="`tensor=.*` is not supported"):
        keras.Input((3,), tensor=keras.Input((3,)))
