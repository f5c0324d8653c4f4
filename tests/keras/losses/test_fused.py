"""The fused forms of MSE, MAE and sparse/categorical cross-entropy: a built-in loss called without weights or a
mask gives the Keras formula's value and gradients up to float rounding, and every other case keeps the formula."""
import pytest
import torch

from torchstrategy.keras import losses
from torchstrategy.keras.losses import fused
from torchstrategy.keras.losses.base import compute_weighted_loss

RTOL = 1e-6


def _inputs(kind, shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    classes = shape[-1]
    if kind == "regression":
        return torch.randn(shape, generator=g, dtype=dtype) * 3, torch.randn(shape, generator=g, dtype=dtype)
    if kind == "sparse":
        return torch.randint(0, classes, shape[:-1], generator=g), torch.randn(shape, generator=g, dtype=dtype) * 4
    if kind == "sparse_probs":
        return torch.randint(0, classes, shape[:-1], generator=g), torch.rand(shape, generator=g, dtype=dtype).softmax(-1)
    if kind == "sparse_column":  # labels of shape (batch, 1)
        return torch.randint(0, classes, shape[:-1] + (1,), generator=g), torch.randn(shape, generator=g, dtype=dtype)
    if kind == "soft":  # soft (not one-hot) targets
        return torch.rand(shape, generator=g, dtype=dtype).softmax(-1), torch.randn(shape, generator=g, dtype=dtype) * 4
    raise AssertionError(kind)


CASES = [  # (id, loss, inputs kind, shape)
    ("mse_2d", lambda: losses.MeanSquaredError(), "regression", (32, 10)),
    ("mse_3d", lambda: losses.MeanSquaredError(), "regression", (4, 7, 5)),
    ("mse_1d", lambda: losses.MeanSquaredError(), "regression", (9,)),
    ("mse_name", lambda: losses.get("mse"), "regression", (16, 3)),
    ("mse_auto", lambda: losses.MeanSquaredError(reduction="auto"), "regression", (16, 3)),
    ("mae_2d", lambda: losses.MeanAbsoluteError(), "regression", (32, 10)),
    ("mae_name", lambda: losses.get("mae"), "regression", (5, 6, 2)),
    ("scce_logits", lambda: losses.SparseCategoricalCrossentropy(from_logits=True), "sparse", (32, 10)),
    ("scce_probs", lambda: losses.SparseCategoricalCrossentropy(), "sparse_probs", (32, 10)),
    ("scce_column", lambda: losses.SparseCategoricalCrossentropy(from_logits=True), "sparse_column", (12, 4)),
    ("scce_3d", lambda: losses.SparseCategoricalCrossentropy(from_logits=True), "sparse", (3, 5, 6)),
    ("scce_name", lambda: losses.get("sparse_categorical_crossentropy"), "sparse_probs", (8, 3)),
    ("cce_logits", lambda: losses.CategoricalCrossentropy(from_logits=True), "soft", (32, 10)),
    ("cce_3d", lambda: losses.CategoricalCrossentropy(from_logits=True), "soft", (3, 5, 6)),
]


def _formula(loss, y_true, y_pred):
    """The Keras path: the per-sample losses (and which count), then the 'sum_over_batch_size' reduction."""
    per_sample, valid = loss._losses_and_mask(y_true, y_pred)
    return compute_weighted_loss(per_sample, valid_mask=valid)


def _value_and_grad(fn, y_true, y_pred):
    y_pred = y_pred.detach().clone().requires_grad_(True)
    value = fn(y_true, y_pred)
    (grad,) = torch.autograd.grad(value, y_pred)
    return value.detach(), grad


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name,make,kind,shape", CASES, ids=[c[0] for c in CASES])
def test_fused_value_and_gradients_match_the_keras_formula(name, make, kind, shape, dtype):
    loss = make()
    y_true, y_pred = _inputs(kind, shape, dtype)
    assert fused.batch_mean(loss.fn, loss._fn_kwargs, y_true, y_pred) is not None  # the fused op runs
    value, grad = _value_and_grad(loss, y_true, y_pred)
    reference, reference_grad = _value_and_grad(lambda t, p: _formula(loss, t, p), y_true, y_pred)
    assert value.dtype == reference.dtype == dtype and value.shape == reference.shape == ()
    torch.testing.assert_close(value, reference, rtol=RTOL, atol=0)
    torch.testing.assert_close(grad, reference_grad, rtol=RTOL, atol=RTOL * float(reference_grad.abs().max()))


def test_softmax_outputs_use_their_logits_as_the_formula_does():
    y_true, logits = _inputs("sparse", (16, 5))
    probs = logits.softmax(-1)
    probs._keras_logits = logits
    for loss in (losses.SparseCategoricalCrossentropy(), losses.CategoricalCrossentropy()):
        target = y_true if loss.fn is losses.sparse_categorical_crossentropy else torch.nn.functional.one_hot(y_true, 5).float()
        assert fused.batch_mean(loss.fn, loss._fn_kwargs, target, probs) is not None
        torch.testing.assert_close(loss(target, probs), _formula(loss, target, probs), rtol=RTOL, atol=0)


KEPT = [  # inputs or settings the fused ops leave to the Keras formula: (id, loss, y_true, y_pred)
    ("broadcast", losses.MeanSquaredError(), torch.ones(4, 1), torch.zeros(4, 3)),
    ("rank_aligned", losses.MeanSquaredError(), torch.ones(4), torch.zeros(4, 1)),
    ("numpy_targets", losses.MeanSquaredError(), torch.ones(4, 3).numpy(), torch.zeros(4, 3)),
    ("half", losses.MeanAbsoluteError(), torch.ones(4, 3), torch.zeros(4, 3, dtype=torch.bfloat16)),
    ("empty", losses.MeanSquaredError(), torch.ones(0, 3), torch.zeros(0, 3)),
    ("ignore_class", losses.SparseCategoricalCrossentropy(ignore_class=0), torch.tensor([0, 1, 2]), torch.rand(3, 3)),
    ("float_labels", losses.SparseCategoricalCrossentropy(), torch.tensor([0.0, 1.0]), torch.rand(2, 3)),
    ("smoothing", losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1), torch.eye(3), torch.rand(3, 3)),
    ("probabilities", losses.CategoricalCrossentropy(), torch.eye(3), torch.rand(3, 3)),
    ("huber", losses.Huber(), torch.ones(4, 3), torch.zeros(4, 3)),
    # tensor subclasses (a DTensor has no sharding rule for mse_loss or l1_loss) keep the formula's ops
    ("subclass", losses.MeanSquaredError(), torch.ones(4, 3), torch.nn.Parameter(torch.zeros(4, 3))),
]


@pytest.mark.parametrize("name,loss,y_true,y_pred", KEPT, ids=[c[0] for c in KEPT])
def test_other_inputs_keep_the_keras_formula(name, loss, y_true, y_pred):
    assert fused.batch_mean(loss.fn, loss._fn_kwargs, y_true, y_pred) is None
    torch.testing.assert_close(loss(y_true, y_pred).float(), _formula(loss, y_true, y_pred).float())


def test_weights_masks_and_other_reductions_keep_the_keras_formula():
    y_true, y_pred = _inputs("regression", (6, 4))
    weights = torch.tensor([1.0, 0.0, 2.0, 1.0, 0.5, 3.0])
    per_sample = losses.mean_squared_error(y_true, y_pred)
    torch.testing.assert_close(losses.MeanSquaredError()(y_true, y_pred, sample_weight=weights),
                               (per_sample * weights).sum() / 6)
    torch.testing.assert_close(losses.MeanSquaredError(reduction="sum")(y_true, y_pred), per_sample.sum())
    masked = y_pred.clone()
    masked._keras_mask = torch.tensor([True, False, True, True, False, True])
    torch.testing.assert_close(losses.MeanSquaredError()(y_true, masked), per_sample[masked._keras_mask].mean())


def test_a_subclass_that_overrides_call_is_never_fused():
    class Doubled(losses.MeanSquaredError):
        def call(self, y_true, y_pred):
            return 2 * super().call(y_true, y_pred)

    y_true, y_pred = _inputs("regression", (8, 3))
    torch.testing.assert_close(Doubled()(y_true, y_pred), 2 * losses.MeanSquaredError()(y_true, y_pred))


def test_bad_sparse_labels_raise_the_keras_paths_errors():
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    with pytest.raises(ValueError, match=r"outside \[0, 3\)"):
        loss(torch.tensor([0, 3]), torch.rand(2, 3))
    with pytest.raises(ValueError, match="look like one-hot labels"):
        loss(torch.eye(3, dtype=torch.int64), torch.rand(3, 3))
    with pytest.raises(ValueError, match="batch size 4"):
        loss(torch.tensor([0, 1, 2, 0]), torch.rand(3, 3))


def test_loss_dtype_still_applies():
    y_true, y_pred = _inputs("regression", (8, 3))
    value = losses.MeanSquaredError(dtype="float64")(y_true, y_pred)
    assert value.dtype == torch.float64
    torch.testing.assert_close(value, _formula(losses.MeanSquaredError(), y_true, y_pred).double())
