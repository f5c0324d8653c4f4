"""keras.StatelessScope / SymbolicScope and the stateless_* calls (keras/stateless.py): a JAX-style loop against
fit's own steps, against Keras 3.15's numbers (tensorflow backend, TF 2.21), and the objects left untouched."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf

keras = tf.keras

# Keras 3.15 / TF 2.21 (KERAS_BACKEND=tensorflow): Sequential(Input(3), Dense(4, relu), BatchNormalization(),
# Dense(1)) with these weights, SGD(0.1, momentum=0.9), MSE, 3 steps of stateless_call under a GradientTape (the TF backend
# refuses stateless_apply, so its update there came from opt.apply: the same SGD step) and
# MeanAbsoluteError.stateless_update_state on each step's predictions.
INIT = [[[2.27, -1.45, 0.05, -0.19], [1.53, 1.47, 0.15, 0.38], [-0.89, -1.98, -0.35, 0.16]],
        [1.23, 1.2, -0.39, -0.3], [-1.05, -1.42, -1.71, 1.95], [-0.51, -0.44, -1.25, 0.78],
        [0.32, 0.41, 0.06, 0.69], [1.57, 1.27, 1.52, 1.09], [[0.07], [0.3], [-0.63], [-0.36]], [-0.67]]
X = [[1.764052391052246, 0.40015721321105957, 0.978738009929657],
     [2.2408931255340576, 1.8675580024719238, -0.9772778749465942],
     [0.9500884413719177, -0.15135720372200012, -0.10321885347366333],
     [0.4105985164642334, 0.14404356479644775, 1.4542734622955322],
     [0.7610377073287964, 0.12167501449584961, 0.44386324286460876],
     [0.3336743414402008, 1.4940791130065918, -0.2051582634449005]]
Y = [[0.3130677044391632], [-0.8540957570075989], [-2.5529897212982178], [0.653618574142456],
     [0.8644362092018127], [-0.7421650290489197]]
KERAS_TRAINABLE = [
    [[2.274172067642212, -1.3223909139633179, -0.18144023418426514, -0.3194652497768402],
     [1.5092790126800537, 1.5144479274749756, -0.04288202151656151, -0.19970084726810455],
     [-0.9147966504096985, -2.032615900039673, -0.24906642735004425, 0.23960115015506744]],
    [1.2300000190734863, 1.2136198282241821, -0.4932803511619568, -0.6879987716674805],
    [-1.046481966972351, -1.3675940036773682, -1.3470585346221924, 1.7764081954956055],
    [-0.4657372534275055, -0.4142378270626068, -1.2542811632156372, 0.8066192865371704],
    [[0.3909482955932617], [-0.03887423872947693], [0.2027774453163147], [0.6765346527099609]],
    [-0.5475636124610901]]
KERAS_NON_TRAINABLE = [[0.44191473722457886, 0.4283354878425598, 0.058780230581760406, 0.6697865128517151],
                       [1.7571203708648682, 1.2958556413650513, 1.4750158786773682, 1.0576659440994263]]
KERAS_METRIC = ([21.600051879882812, 18.0], 1.200002908706665)


def _model() -> keras.Model:
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"),
                              keras.layers.BatchNormalization(), keras.layers.Dense(1)])
    model.set_weights([np.asarray(w, dtype="float32") for w in INIT])
    return model


def _values(variables) -> list:
    return [torch.Tensor.detach(v).clone() for v in variables]


def _jax_style_steps(model, optimizer, metric, x, y, steps: int) -> tuple:
    """Keras's JAX training-loop guide on torch: stateless_call + autograd + stateless_apply + stateless metric."""
    loss_fn = keras.losses.MeanSquaredError()
    trainable, non_trainable = _values(model.trainable_variables), _values(model.non_trainable_variables)
    optimizer_vars, metric_vars = _values(optimizer.variables), _values(metric.variables)
    for _ in range(steps):
        trainable = [t.detach().requires_grad_() for t in trainable]
        y_pred, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        grads = torch.autograd.grad(loss_fn(y, y_pred), trainable)
        trainable, optimizer_vars = optimizer.stateless_apply(optimizer_vars, grads, trainable)
        metric_vars = metric.stateless_update_state(metric_vars, y, y_pred.detach())
    return trainable, non_trainable, optimizer_vars, metric_vars


def test_jax_style_loop_matches_keras_numbers_and_leaves_every_object_untouched():
    model, metric = _model(), keras.metrics.MeanAbsoluteError()
    optimizer = keras.optimizers.SGD(0.1, momentum=0.9)  # (Adam would magnify the first bias's ~1e-8 gradient)
    optimizer.build(model.trainable_variables)
    weights_before = [w.numpy() for w in model.weights]
    optimizer_before = _values(optimizer.variables)
    x, y = torch.tensor(X), torch.tensor(Y)
    trainable, non_trainable, optimizer_vars, metric_vars = _jax_style_steps(model, optimizer, metric, x, y, 3)
    for ours, theirs in zip(trainable + non_trainable, KERAS_TRAINABLE + KERAS_NON_TRAINABLE):
        np.testing.assert_allclose(ours.detach().numpy(), np.asarray(theirs, dtype="float32"), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose([float(v) for v in metric_vars], KERAS_METRIC[0], rtol=1e-5)
    assert float(metric.stateless_result(metric_vars)) == pytest.approx(KERAS_METRIC[1], rel=1e-5)
    assert int(optimizer_vars[0]) == 3  # iterations
    # the stateless calls changed nothing held by the model, the optimizer or the metric
    for before, weight in zip(weights_before, model.weights):
        np.testing.assert_array_equal(weight.numpy(), before)
    for before, variable in zip(optimizer_before, optimizer.variables):
        assert torch.equal(variable, before)
    assert int(optimizer.iterations) == 0
    assert [float(v) for v in metric.variables] == [0.0, 0.0]
    assert all(w.grad is None for w in model.trainable_variables)


def test_jax_style_loop_equals_train_on_batch_on_a_copy():
    rng = np.random.RandomState(3)
    x, y = rng.randn(16, 3).astype("float32"), rng.randn(16, 1).astype("float32")
    model, twin = _model(), _model()
    optimizer = keras.optimizers.Adam(0.01)
    optimizer.build(model.trainable_variables)
    metric = keras.metrics.MeanAbsoluteError()
    trainable, non_trainable, optimizer_vars, _ = _jax_style_steps(model, optimizer, metric, torch.tensor(x),
                                                                   torch.tensor(y), 3)
    twin.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    for _ in range(3):
        twin.train_on_batch(x, y)
    for ours, theirs in zip(trainable + non_trainable, twin.trainable_variables + twin.non_trainable_variables):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)
    for ours, theirs in zip(optimizer_vars, twin.optimizer.variables):
        np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-6)
    assert np.array_equal(model.get_weights()[0], np.asarray(INIT[0], dtype="float32"))


def test_stateless_call_gives_outputs_of_the_given_weights_and_returns_losses():
    model = _model()
    model.layers[0].activity_regularizer = keras.regularizers.L2(0.5)
    doubled = [2 * torch.Tensor.detach(v) for v in model.trainable_variables]
    non_trainable = _values(model.non_trainable_variables)
    x = torch.tensor(X)
    outputs, new_non_trainable, losses = model.stateless_call(doubled, non_trainable, x, return_losses=True)
    twin = _model()
    twin.layers[0].activity_regularizer = keras.regularizers.L2(0.5)
    twin.set_weights([w * 2 if i not in (4, 5) else w for i, w in enumerate(twin.get_weights())])
    np.testing.assert_allclose(np.asarray(outputs), np.asarray(twin(x)), rtol=1e-6)
    assert len(losses) == 1 and float(losses[0].detach()) == pytest.approx(float(twin.losses[0].detach()), rel=1e-6)
    # inference: BatchNormalization's statistics come back unchanged
    for new, old in zip(new_non_trainable, non_trainable):
        assert torch.equal(new, old)


def test_stateless_call_counts_are_checked_naming_both():
    model = _model()
    with pytest.raises(ValueError, match=r"Received list with length 2, but expected 6 variables"):
        model.stateless_call(_values(model.trainable_variables)[:2], _values(model.non_trainable_variables), X)
    with pytest.raises(ValueError, match=r"non_trainable_variables.*length 0, but expected 2"):
        model.stateless_call(_values(model.trainable_variables), [], X)
    unbuilt = keras.layers.Dense(2)
    with pytest.raises(ValueError, match="must be built"):
        unbuilt.stateless_call([], [], X)


def test_stateless_apply_and_metric_misuse():
    optimizer = keras.optimizers.SGD(0.1)
    with pytest.raises(ValueError, match=r"optimizer.build\(trainable_variables\)"):
        optimizer.stateless_apply([], [], [])
    model = _model()
    optimizer.build(model.trainable_variables)
    with pytest.raises(ValueError, match=r"optimizer_variables.*length 0, but expected 1"):
        optimizer.stateless_apply([], [], _values(model.trainable_variables))
    with pytest.raises(ValueError, match="3 gradients for 6 trainable variables"):
        optimizer.stateless_apply(_values(optimizer.variables), [torch.zeros(1)] * 3, _values(model.trainable_variables))
    metric = keras.metrics.Mean()
    with pytest.raises(ValueError, match=r"metric_variables.*length 1, but expected 2"):
        metric.stateless_update_state([torch.tensor(0.0)], [1.0])


def test_metric_stateless_reset_and_result_leave_the_metric_alone():
    metric = keras.metrics.Mean()
    metric.update_state([1.0, 3.0])
    assert [float(v) for v in metric.stateless_reset_state()] == [0.0, 0.0]
    assert float(metric.result()) == 2.0
    assert float(metric.stateless_result([torch.tensor(9.0), torch.tensor(3.0)])) == 3.0
    assert float(metric.result()) == 2.0


def test_stateless_compute_loss_returns_new_metric_states():
    model = _model()
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    model.train_on_batch(np.asarray(X, "float32"), np.asarray(Y, "float32"))  # builds the metrics
    metric_before = _values(model.metrics_variables)
    loss, (trainable, non_trainable, metrics_vars) = model.stateless_compute_loss(
        _values(model.trainable_variables), _values(model.non_trainable_variables), metric_before,
        x=torch.tensor(X), y=torch.tensor(Y), y_pred=torch.zeros(6, 1))
    assert float(loss) == pytest.approx(float(np.mean(np.square(Y))), rel=1e-6)
    assert len(metrics_vars) == len(metric_before) and len(trainable) == 6 and len(non_trainable) == 2
    for before, variable in zip(metric_before, model.metrics_variables):
        assert torch.equal(before, variable)


def test_stateless_scope_reads_mapped_values_and_records_assigns():
    layer = keras.layers.Dense(2, kernel_initializer="ones")
    layer.build((None, 2))
    kernel = layer.kernel
    counter = keras.layers.BatchNormalization()
    counter.build((None, 2))
    with keras.StatelessScope(state_mapping=[(kernel, 3 * torch.ones(2, 2))]) as scope:
        np.testing.assert_allclose(np.asarray(layer(torch.ones(1, 2))), [[6.0, 6.0]])
        counter.moving_mean.assign([5.0, 7.0])
        assert counter.moving_mean.numpy().tolist() == [5.0, 7.0]  # read inside: the scope's value
        assert torch.equal(scope.get_current_value(kernel), 3 * torch.ones(2, 2))
    assert counter.moving_mean.numpy().tolist() == [0.0, 0.0]  # the variable itself never changed
    assert scope.get_current_value(counter.moving_mean).tolist() == [5.0, 7.0]
    assert torch.equal(layer.kernel, torch.ones(2, 2)) and scope.get_current_value(layer.bias) is None
    with pytest.raises(ValueError, match="shape that matches"):
        keras.StatelessScope(state_mapping=[(kernel, torch.ones(3))])
    with pytest.raises(ValueError, match="must be Variable instances"):
        keras.StatelessScope(state_mapping=[("kernel", torch.ones(3))])


def test_symbolic_scope_and_keras_tensor_constructor():
    from torchstrategy.keras import stateless

    assert not stateless.in_symbolic_scope()
    with keras.SymbolicScope():
        assert stateless.in_symbolic_scope()
    assert not stateless.in_symbolic_scope()
    tensor = keras.KerasTensor((None, 3), dtype="float16", name="t")
    assert tensor.shape == (None, 3) and tensor.dtype == torch.float16 and tensor.name == "t"
    assert tensor.sparse is False and tensor.ragged is False
    seen = []

    class Probe(keras.layers.Layer):
        def call(self, x):
            seen.append(stateless.in_symbolic_scope())
            return x

    inputs = keras.Input((3,))
    Probe()(inputs)
    Probe()(torch.ones(1, 3))
    assert seen[0] is True and seen[-1] is False  # traced on KerasTensors inside a SymbolicScope, then eagerly
    outputs = keras.layers.Dense(2).symbolic_call(inputs)
    assert isinstance(outputs, keras.KerasTensor) and outputs.shape == (None, 2)
    assert issubclass(keras.layers.Dense, keras.Layer) and keras.Operation.__name__ == "Operation"


def test_keras_operation_subclass_runs_eagerly_and_in_a_functional_graph():
    class Scale(keras.Operation):
        def call(self, x):
            return x * 3.0

    op = Scale()
    assert op.name.startswith("scale") and op.get_config() == {"name": op.name}
    np.testing.assert_allclose(np.asarray(op(torch.ones(2))), [3.0, 3.0])
    inputs = keras.Input((2,))
    model = keras.Model(inputs, op(keras.layers.Dense(2, kernel_initializer="ones")(inputs)))
    np.testing.assert_allclose(np.asarray(model(torch.ones(1, 2))), [[6.0, 6.0]])
    assert model.layers[-1].name != op.name  # an Operation is a graph step, not one of model.layers
    with pytest.raises(NotImplementedError, match="must implement call"):
        keras.Operation()(torch.ones(1))


def test_loss_scale_optimizer_stateless_apply_unscales_and_skips_non_finite_steps():
    # Keras 3: stateless_apply takes gradients of the scaled loss, divides them by the scale it is given, and on a
    # non-finite gradient leaves the weights, halves the scale and zeroes the step counter
    model = _model()
    optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=4.0)
    optimizer.build(model.trainable_variables)
    trainable, optimizer_vars = _values(model.trainable_variables), _values(optimizer.variables)
    scale_at = [i for i, v in enumerate(optimizer.variables) if v is optimizer._scale][0]
    optimizer_vars[scale_at] = torch.tensor(8.0)
    grads = [torch.full_like(t, 8.0) for t in trainable]
    new_trainable, new_vars = optimizer.stateless_apply(optimizer_vars, grads, trainable)
    for new, old in zip(new_trainable, trainable):
        torch.testing.assert_close(new, old - 0.1 * 8.0 / 8.0)
    assert float(new_vars[scale_at]) == 8.0 and float(optimizer._scale) == 4.0
    skipped, after_inf = optimizer.stateless_apply(optimizer_vars, [g * float("inf") for g in grads], trainable)
    assert all(torch.equal(new, old) for new, old in zip(skipped, trainable))
    assert float(after_inf[scale_at]) == 4.0
    assert int(optimizer.inner_optimizer.iterations) == 0 and np.array_equal(model.get_weights()[0], np.asarray(INIT[0], "float32"))


def test_stateless_scope_puts_every_variable_back_after_an_error_and_nests():
    layer = keras.layers.Dense(1, kernel_initializer="ones", bias_initializer="zeros")
    layer.build((None, 1))
    kernel, bias = layer.kernel, layer.bias
    with pytest.raises(RuntimeError, match="boom"):
        with keras.StatelessScope(state_mapping=[(kernel, torch.full((1, 1), 5.0))]):
            bias.assign([2.0])
            raise RuntimeError("boom")
    assert float(kernel.detach()) == 1.0 and float(bias.detach()) == 0.0
    with keras.StatelessScope(state_mapping=[(kernel, torch.full((1, 1), 2.0))]) as outer:
        with keras.StatelessScope(state_mapping=[(kernel, torch.full((1, 1), 3.0))]) as inner:
            assert float(np.asarray(layer(torch.ones(1, 1))).item()) == 3.0
            kernel.assign([[4.0]])
        assert float(np.asarray(layer(torch.ones(1, 1))).item()) == 2.0  # the inner scope's write stayed in it
    assert float(inner.get_current_value(kernel)) == 4.0 and float(outer.get_current_value(kernel)) == 2.0
    assert float(kernel.detach()) == 1.0


def test_a_written_substitute_reads_as_the_written_value():
    layer = keras.layers.Dense(1, kernel_initializer="ones", use_bias=False)
    layer.build((None, 1))
    layer.kernel_path = layer.kernel.path
    value = torch.full((1, 1), 3.0, requires_grad=True)
    with keras.StatelessScope(state_mapping=[(layer.kernel, value)]) as scope:
        out = layer(torch.ones(1, 1))
        assert torch.autograd.grad(out.sum(), value)[0].item() == 1.0  # reads reach the mapped value
        assert scope.get_current_value(layer.kernel) is value and layer.kernel.path == layer.kernel_path
        mapped = layer.kernel  # what the layer reads: the mapped value, with the weight's API
        mapped.assign([[7.0]])
        assert float(np.asarray(layer(torch.ones(1, 1))).item()) == 7.0
        assert float(scope.get_current_value(mapped)) == 7.0  # inside too
    assert float(scope.get_current_value(layer.kernel)) == 7.0 and float(layer.kernel.detach()) == 1.0
    assert float(value.detach()) == 3.0
