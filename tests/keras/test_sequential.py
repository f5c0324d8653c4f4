"""keras.Sequential's call: its InputLayer's call is skipped only when it would hand the input back untouched (a
plain tensor of its dtype, no mask, no hook); every other input still goes through it."""
from __future__ import annotations

import warnings

import pytest
import torch

import torchstrategy as tf

keras = tf.keras


def _model(dtype: str = "float32") -> keras.Sequential:
    tf.random.set_seed(3)
    return keras.Sequential([keras.Input(shape=(4,), dtype=dtype), keras.layers.Dense(2)])


def _reference(model: keras.Sequential, x: torch.Tensor) -> torch.Tensor:
    dense = model.layers[0]
    return x.float() @ dense.kernel.detach() + dense.bias.detach()


def test_a_plain_input_of_the_input_layers_dtype_gives_the_same_outputs():
    model = _model()
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    model(x)  # the input layer's first call goes through it
    input_layer = model._input_layer
    assert input_layer.passes_through(x)
    torch.testing.assert_close(model(x).detach(), _reference(model, x), rtol=0, atol=0)


def test_an_input_of_another_dtype_is_cast_by_the_input_layer():
    model = _model("float64")
    x = torch.ones(2, 4)
    assert not model._input_layer.passes_through(x)
    seen = []
    model._input_layer.register_forward_hook(lambda module, args, out: seen.append(out.dtype))
    model(x)
    assert seen == [torch.float64]


def test_hooks_on_the_input_layer_still_run():
    model = _model()
    x = torch.ones(2, 4)
    model(x)
    calls = []
    handle = model._input_layer.register_forward_pre_hook(lambda module, args: calls.append(args[0].shape))
    model(x)
    assert calls == [torch.Size([2, 4])]
    handle.remove()
    model(x)
    assert len(calls) == 1
    handle = torch.nn.modules.module.register_module_forward_hook(lambda module, args, out: calls.append(module))
    try:
        model(x)
    finally:
        handle.remove()
    assert model._input_layer in calls


def test_a_masked_input_still_meets_the_input_layer():
    model = _model()
    x = torch.ones(2, 4)
    model(x)
    x._keras_mask = torch.ones(2, dtype=torch.bool)
    assert not model._input_layer.passes_through(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model(x)
    assert any("does not support masking" in str(w.message) for w in caught)


@pytest.mark.parametrize("training", [True, False])
def test_fit_steps_match_with_and_without_the_skip(training):
    x = torch.rand(8, 4)
    outputs = []
    for skip in (True, False):
        model = _model()
        model(x)
        if not skip:
            model._input_layer.register_forward_hook(lambda module, args, out: None)  # a hook: the call runs
        outputs.append(model(x, training=training).detach())
    torch.testing.assert_close(outputs[0], outputs[1], rtol=0, atol=0)
