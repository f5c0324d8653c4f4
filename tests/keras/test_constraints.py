"""keras.constraints: the projections' math against numbers frozen from TF 2.21 (Keras 3) and tf_keras 2.21,
names/config/serialization, and their application after every optimizer update (fit and custom loops)."""
import warnings

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.keras import constraints

# Fixed weight with a zero column: Keras's epsilon (1e-7) keeps its projection finite (and zero).
W = np.array([[0.5, -1.5, 0.0], [2.0, 0.25, 0.0], [0.2, -0.3, 0.0], [-1.0, 2.5, 0.0]], dtype=np.float32)

# keras.constraints.X(...)(W) in TF 2.21 / Keras 3.15 (float32), frozen.
KERAS_OUTPUTS = {
    "max_norm": (constraints.MaxNorm(2.0), [
        [0.43478262424468994, -1.0198832750320435, 0.0], [1.7391304969787598, 0.16998054087162018, 0.0],
        [0.17391304671764374, -0.20397666096687317, 0.0], [-0.8695652484893799, 1.6998053789138794, 0.0]]),
    "max_norm_axis1": (constraints.MaxNorm(1.5, axis=1), [
        [0.47434160113334656, -1.4230247735977173, 0.0], [1.4884167909622192, 0.1860520988702774, 0.0],
        [0.19999995827674866, -0.2999999523162842, 0.0], [-0.5570860505104065, 1.3927150964736938, 0.0]]),
    "max_norm_both_axes": (constraints.MaxNorm(1.0, axis=[0, 1]), [
        [0.13390588760375977, -0.4017176628112793, 0.0], [0.5356235504150391, 0.06695294380187988, 0.0],
        [0.05356235429644585, -0.08034353703260422, 0.0], [-0.26781177520751953, 0.6695294380187988, 0.0]]),
    "unit_norm": (constraints.UnitNorm(), [
        [0.21739131212234497, -0.509941577911377, 0.0], [0.8695652484893799, 0.08499027043581009, 0.0],
        [0.08695652335882187, -0.10198832303285599, 0.0], [-0.43478262424468994, 0.8499026894569397, 0.0]]),
    "unit_norm_axis1": (constraints.UnitNorm(axis=1), [
        [0.3162277340888977, -0.9486832022666931, 0.0], [0.9922778606414795, 0.12403473258018494, 0.0],
        [0.5547000169754028, -0.832050085067749, 0.0], [-0.3713906705379486, 0.9284766912460327, 0.0]]),
    "min_max_norm": (constraints.MinMaxNorm(0.5, 1.0, rate=0.7), [
        [0.302173912525177, -0.8069591522216797, 0.0], [1.208695650100708, 0.13449318706989288, 0.0],
        [0.12086956948041916, -0.16139182448387146, 0.0], [-0.604347825050354, 1.3449318408966064, 0.0]]),
    "min_max_norm_defaults": (constraints.MinMaxNorm(), [
        [0.21739131212234497, -0.5099416375160217, 0.0], [0.8695652484893799, 0.08499027043581009, 0.0],
        [0.08695652335882187, -0.10198833048343658, 0.0], [-0.43478262424468994, 0.8499026894569397, 0.0]]),
    "non_neg": (constraints.NonNeg(), [[0.5, 0.0, 0.0], [2.0, 0.25, 0.0], [0.2, 0.0, 0.0], [0.0, 2.5, 0.0]]),
}


@pytest.mark.parametrize("case", sorted(KERAS_OUTPUTS))
def test_projection_matches_keras(case):
    constraint, expected = KERAS_OUTPUTS[case]
    out = constraint(torch.tensor(W))
    assert out.dtype == torch.float32 and out.shape == W.shape
    np.testing.assert_allclose(out.numpy(), np.array(expected, np.float32), rtol=1e-6, atol=1e-7)


def test_epsilon_sits_outside_the_square_root():
    # norm 5 -> 5 / (1e-7 + 5), not 5 / sqrt(25 + 1e-7): the difference is visible in float64
    w = torch.tensor([[3.0], [4.0]], dtype=torch.float64)
    np.testing.assert_allclose(constraints.UnitNorm()(w).numpy().ravel(), [3 / (5 + 1e-7), 4 / (5 + 1e-7)], rtol=1e-15)
    untouched = constraints.MaxNorm(10.0)(w)  # below the bound: scaled by n / (eps + n), a hair under 1
    assert torch.all(untouched < w) and torch.allclose(untouched, w, rtol=1e-7)


def _kernel(size):
    # entries -1, -0.5, 0, ...: channel 0 of a (size, size, 2, 1) kernel, as in the tf_keras reference run
    return torch.arange(size * size * 2, dtype=torch.float32).reshape(size, size, 2, 1) * 0.5 - 1.0


def test_radial_constraint_matches_tf_keras_2():
    # tf_keras 2.21 RadialConstraint()(kernel)[..., 0, 0] and [..., 1, 0] for the kernels of _kernel(size)
    expected = {
        2: [[-1.0, -1.0], [-1.0, -1.0]],
        3: [[3.0, 3.0, 3.0], [3.0, -1.0, 3.0], [3.0, 3.0, 3.0]],
        4: [[14.0, 14.0, 14.0, 14.0], [14.0, 4.0, 4.0, 14.0], [14.0, 4.0, 4.0, 14.0], [14.0, 14.0, 14.0, 14.0]],
        5: [[17.0] * 5, [17.0, 11.0, 11.0, 11.0, 17.0], [17.0, 11.0, 5.0, 11.0, 17.0],
            [17.0, 11.0, 11.0, 11.0, 17.0], [17.0] * 5],
    }
    for size, channel0 in expected.items():
        out = constraints.RadialConstraint()(_kernel(size))
        assert out.shape == (size, size, 2, 1)
        np.testing.assert_array_equal(out[..., 0, 0].numpy(), channel0)
        # channel 1 uses its own diagonal entries (each 0.5 above channel 0's), in the same rings
        np.testing.assert_array_equal(out[..., 1, 0].numpy(), np.array(channel0) + 0.5)
    with pytest.raises(ValueError, match="rank-4"):
        constraints.RadialConstraint()(torch.zeros(3, 3))
    with pytest.raises(ValueError, match="square"):
        constraints.RadialConstraint()(torch.zeros(3, 2, 1, 1))


def test_names_get_serialize_deserialize_and_config():
    assert tf.keras.constraints.MaxNorm is constraints.MaxNorm
    for name, cls in [("max_norm", constraints.MaxNorm), ("MaxNorm", constraints.MaxNorm),
                      ("non_neg", constraints.NonNeg), ("unit_norm", constraints.UnitNorm),
                      ("min_max_norm", constraints.MinMaxNorm), ("radial_constraint", constraints.RadialConstraint)]:
        assert type(constraints.get(name)) is cls
    assert constraints.max_norm is constraints.MaxNorm and constraints.non_neg is constraints.NonNeg
    # Keras 3's defaults and serialized layout (TF 2.21)
    assert constraints.get("max_norm").get_config() == {"max_value": 2, "axis": 0}
    assert constraints.MinMaxNorm().get_config() == {"min_value": 0.0, "max_value": 1.0, "rate": 1.0, "axis": 0}
    assert constraints.UnitNorm().get_config() == {"axis": 0} and constraints.NonNeg().get_config() == {}
    assert constraints.serialize(constraints.MaxNorm(3)) == {
        "module": "keras.constraints", "class_name": "MaxNorm", "config": {"max_value": 3, "axis": 0},
        "registered_name": None}
    back = constraints.deserialize(constraints.serialize(constraints.MinMaxNorm(0.2, 0.9, rate=0.5, axis=[0, 1])))
    assert type(back) is constraints.MinMaxNorm and back.get_config()["axis"] == [0, 1] and back.rate == 0.5
    assert type(constraints.get(constraints.UnitNorm)) is constraints.UnitNorm  # a class: default instance
    custom = lambda w: w.clamp(-1, 1)
    assert constraints.get(custom) is custom and constraints.get(None) is None
    with pytest.raises(ValueError, match="Unknown constraint: 'max_nrom'"):
        constraints.get("max_nrom")
    with pytest.raises(ValueError, match="Could not interpret constraint identifier"):
        constraints.get(3)
    with pytest.raises(ValueError, match="min_value <= max_value"):
        constraints.MinMaxNorm(2.0, 1.0)


def test_layer_weights_carry_their_constraint():
    layer = tf.keras.layers.Dense(3, kernel_constraint="max_norm", bias_constraint=constraints.NonNeg())
    layer.build((None, 4))
    assert type(layer.kernel.constraint) is constraints.MaxNorm and type(layer.bias.constraint) is constraints.NonNeg
    plain = tf.keras.layers.Dense(3)
    plain.build((None, 4))
    assert plain.kernel.constraint is None  # as Keras's variable.constraint


X = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
Y = np.stack([X.sum(1) * 2.0, X[:, 0] - 3 * X[:, 2]], 1).astype(np.float32)
K0 = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], np.float32)
B0 = np.array([0.05, -0.05], np.float32)


class _ColumnNorms(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.norms = []

    def on_train_batch_end(self, batch, logs=None):
        self.norms.append(np.linalg.norm(self.model.layers[0].kernel.detach().numpy(), axis=0))


def test_fit_keeps_kernel_column_norms_within_max_norm_after_every_step():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, kernel_constraint=constraints.MaxNorm(1))])
    model.set_weights([K0 * 4.0, B0])  # start well outside the bound
    model.compile(tf.keras.optimizers.SGD(0.5), "mse")
    norms = _ColumnNorms()
    model.fit(X * 3, Y * 3, batch_size=2, epochs=2, shuffle=False, verbose=0, callbacks=[norms])
    assert len(norms.norms) == 8
    assert max(float(n.max()) for n in norms.norms) <= 1.0 + 1e-6
    assert min(float(n.max()) for n in norms.norms) > 0.99  # the bound is active, not trivially met


def test_fit_with_constraints_matches_keras():
    # TF 2.21: Dense(2, kernel_constraint=MaxNorm(0.5), bias_constraint="non_neg"), SGD(0.1), mse,
    # batch_size=2, epochs=2, shuffle=False from weights (K0, B0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(
        2, kernel_constraint=constraints.MaxNorm(0.5), bias_constraint="non_neg")])
    model.set_weights([K0, B0])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    model.fit(X, Y, batch_size=2, epochs=2, shuffle=False, verbose=0)
    kernel, bias = model.get_weights()
    np.testing.assert_allclose(kernel, [[0.2815566658973694, -0.46226751804351807],
                                        [0.30057987570762634, -0.1697256863117218],
                                        [0.2835092842578888, -0.08661320060491562]], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bias, [0.5242786407470703, 0.0], rtol=1e-5, atol=1e-6)


def test_non_neg_in_a_custom_loop_projects_only_updated_variables():
    layer = tf.keras.layers.Dense(2, kernel_constraint="non_neg", bias_constraint="non_neg", kernel_initializer="zeros")
    layer.build((None, 3))
    with torch.no_grad():
        layer.bias.copy_(torch.tensor([-1.0, 2.0]))  # negative, but it gets no gradient below
    opt = tf.keras.optimizers.SGD(0.1)
    rng = np.random.default_rng(0)
    expected = np.zeros((3, 2), np.float32)
    for _ in range(4):
        grad = torch.tensor(rng.normal(size=(3, 2)).astype(np.float32))
        with warnings.catch_warnings():  # "Gradients do not exist for variables [...]": expected here
            warnings.simplefilter("ignore")
            opt.apply_gradients([(grad, layer.kernel), (None, layer.bias)])
        expected = np.maximum(expected - 0.1 * grad.numpy(), 0.0)
        np.testing.assert_allclose(layer.kernel.detach().numpy(), expected, rtol=1e-6)
    assert (expected > 0).any() and (expected == 0).any()
    # Keras projects the variables it updated; the bias had no gradient, so it is left as it was
    np.testing.assert_array_equal(layer.bias.detach().numpy(), [-1.0, 2.0])


def test_constraint_returning_the_wrong_shape_is_a_clear_error():
    weight = torch.nn.Parameter(torch.ones(3, 2))
    weight.constraint = lambda w: w.sum(0)
    opt = tf.keras.optimizers.SGD(0.1)
    with pytest.raises(ValueError, match=r"must return a tensor of its variable's shape \(3, 2\)"):
        opt.apply_gradients([(torch.ones(3, 2), weight)])
