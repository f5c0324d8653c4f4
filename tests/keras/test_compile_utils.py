"""CompiledState's per-step fast paths for a single-output model (decided once when the compiled losses and metrics
are built): the same loss and metric values as the general per-output path, which every other case keeps."""
import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.keras import compile_utils


def _model(**compile_kwargs):
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,), kernel_regularizer="l2")])
    model.compile(optimizer="sgd", **compile_kwargs)
    return model


def _general(compiled, y, y_pred, sample_weight, regularization):
    """The general path: the same state with the single-output plan switched off."""
    single, compiled._single = compiled._single, None
    try:
        return compiled.compute_loss(y, y_pred, sample_weight, regularization)
    finally:
        compiled._single = single


def test_the_plan_is_made_when_the_losses_and_metrics_are_built():
    model = _model(loss="mse", metrics=["mae", "mse"], weighted_metrics=["mae"])
    compiled = model._compiled
    assert compiled._single is None  # not built yet
    x, y = np.random.rand(8, 4).astype("float32"), np.random.rand(8, 3).astype("float32")
    model.fit(x, y, verbose=0)
    loss, metrics = compiled._single
    assert loss is compiled._losses[0]
    assert [(m.name, weighted) for m, weighted in metrics] == [("mae", False), ("mse", False), ("mae", True)]


@pytest.mark.parametrize("sample_weight", [None, torch.tensor([1.0, 0.0, 2.0, 1.0, 0.5, 1.0])])
def test_the_single_output_loss_equals_the_general_path(sample_weight):
    model = _model(loss="mse")
    x, y = torch.rand(6, 4), torch.rand(6, 3)
    y_pred = model(x)
    model._compiled.build(y, y_pred)
    fast = model._compiled.compute_loss(y, y_pred, sample_weight, model.losses)
    torch.testing.assert_close(fast, _general(model._compiled, y, y_pred, sample_weight, model.losses))
    assert len(model.losses) == 1  # the kernel's L2 penalty is part of both


def test_loss_weights_keep_the_general_path():
    model = _model(loss="mse", loss_weights=0.5)
    x, y = torch.rand(6, 4), torch.rand(6, 3)
    y_pred = model(x)
    model._compiled.build(y, y_pred)
    assert model._compiled._single[0] is None
    plain = tf.keras.losses.MeanSquaredError()(y, y_pred)
    torch.testing.assert_close(model._compiled.compute_loss(y, y_pred, None, []), 0.5 * plain)


def test_metrics_of_the_fast_path_equal_the_general_paths():
    x, y = np.random.rand(16, 4).astype("float32"), np.random.rand(16, 3).astype("float32")
    weights = np.linspace(0.0, 2.0, 16).astype("float32")
    logs = {}
    for single in (True, False):
        model = _model(loss="mae", metrics=["mse"], weighted_metrics=["mae"])
        model._compiled.build(torch.from_numpy(y), model(torch.from_numpy(x)))
        if not single:
            model._compiled._single = None
        logs[single] = model.fit(x, y, sample_weight=weights, batch_size=4, shuffle=False, verbose=0).history
        assert sorted(logs[single]) == ["loss", "mae", "mse"], logs[single]
    for key in ("loss", "mse", "mae"):
        np.testing.assert_allclose(logs[True][key], logs[False][key], rtol=1e-6)


def test_half_precision_outputs_keep_the_general_path():
    y_pred = torch.rand(4, 3).to(torch.bfloat16)
    assert not compile_utils._plain_output(y_pred)
    assert compile_utils._plain_output(torch.rand(4, 3)) and not compile_utils._plain_output([torch.rand(4, 3)])


@pytest.mark.parametrize("weights", [[0.5], (0.5,)])
def test_a_one_element_list_of_loss_weights_weighs_a_single_output(weights):
    # Keras 3.15 (TF 2.21) takes compile(loss_weights=[w]) for a one-output model as loss_weights=w
    model = _model(loss="mse", loss_weights=weights)
    x, y = torch.rand(6, 4), torch.rand(6, 3)
    y_pred = model(x)
    model._compiled.build(y, y_pred)
    plain = tf.keras.losses.MeanSquaredError()(y, y_pred)
    torch.testing.assert_close(model._compiled.compute_loss(y, y_pred, None, []), 0.5 * plain)


def test_more_loss_weights_than_outputs_are_refused_with_keras_message():
    model = _model(loss="mse", loss_weights=[0.5, 0.3])
    with pytest.raises(ValueError, match="got 1 losses and 2 weights"):
        model.fit(np.ones((4, 4), "float32"), np.zeros((4, 3), "float32"), verbose=0)
