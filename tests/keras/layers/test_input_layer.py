"""keras.Input / keras.layers.InputLayer take Keras 3.15's arguments: shape or batch_shape (not both), the Keras 2
spellings input_shape / batch_input_shape, and refuse the options torchstrategy cannot honour."""
from __future__ import annotations

import pytest

import torchstrategy as tf

keras = tf.keras


def test_input_shape_and_batch_shape_spellings_agree():
    assert keras.Input(shape=(3,), batch_size=4).shape == (4, 3)
    assert keras.Input(batch_shape=(4, 3)).shape == (4, 3)
    assert keras.Input((None, 2), None, "int32").dtype == keras.Input(shape=(None, 2), dtype="int32").dtype
    layer = keras.layers.InputLayer(input_shape=(5,))  # Keras 2 spelling, still taken by Keras 3
    assert layer.output.shape == (None, 5)
    assert keras.layers.InputLayer(batch_input_shape=(2, 5)).output.shape == (2, 5)
    assert keras.layers.InputLayer(shape=(5,), sparse=False, ragged=False, optional=False).output.shape == (None, 5)


def test_conflicting_or_missing_shapes_are_clear_errors():
    with pytest.raises(ValueError, match="both shape"):
        keras.Input(shape=(3,), batch_shape=(2, 3))
    with pytest.raises(ValueError, match="both batch_size"):
        keras.Input(batch_size=2, batch_shape=(2, 3))
    with pytest.raises(ValueError, match="needs `shape`"):
        keras.Input()


@pytest.mark.parametrize("kwargs, match", [({"sparse": True}, "sparse"), ({"ragged": True}, "ragged"),
                                           ({"optional": True}, "optional")])
def test_unsupported_input_options_raise_not_implemented(kwargs, match):
    with pytest.raises(NotImplementedError, match=match):
        keras.Input(shape=(3,), **kwargs)


def test_wrapping_an_existing_tensor_is_refused():
    with pytest.raises(NotImplementedError, match="tensor"):
        keras.Input(shape=(3,), tensor=keras.Input(shape=(3,)))
