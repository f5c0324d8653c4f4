"""Keras's overridable steps: custom `train_step`/`test_step`/`predict_step` (also on a subclass built
from a functional graph), Keras 2's compiled_loss/compiled_metrics, steps_per_execution and compile's
argument checks."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.keras import runtime


def _data(n: int = 96, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    return x, (x @ rng.normal(size=(6, 1))).astype(np.float32)


class GuideModel(tf.keras.Model):
    """The train_step of Keras's "Customizing what happens in fit()" guide."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


class Keras2Model(tf.keras.Model):
    """The Keras 2 spelling: compiled_loss and compiled_metrics."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables), self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def _functional(cls=tf.keras.Model, seed: int = 3):
    tf.random.set_seed(seed)
    inputs = tf.keras.Input(shape=(6,))
    hidden = tf.keras.layers.Dense(8, activation="relu")(inputs)
    model = cls(inputs, tf.keras.layers.Dense(1)(hidden))
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return model


@pytest.mark.parametrize("cls", [GuideModel, Keras2Model])
def test_custom_train_step_on_a_functional_subclass_equals_the_built_in_step(cls):
    x, y = _data()
    reference = _functional()
    expected = reference.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0).history
    model = _functional(cls)
    assert isinstance(model, cls) and model.built
    got = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0).history
    for ours, theirs in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(ours, theirs, atol=1e-6)
    assert set(got) == set(expected)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-6)


def test_custom_test_and_predict_steps_are_what_evaluate_and_predict_run():
    class Shifted(tf.keras.Model):
        def test_step(self, data):
            x, y = data
            return {"gap": torch.mean(self(x, training=False) - y)}

        def predict_step(self, data):
            return self(data[0] if isinstance(data, tuple) else data, training=False) + 100.0

    x, y = _data(32)
    model = _functional(Shifted)
    plain = _functional()
    assert model.evaluate(x, y, batch_size=32, verbose=0, return_dict=True) == pytest.approx(
        {"gap": float(np.mean(plain.predict(x, verbose=0) - y))}, rel=1e-5)
    np.testing.assert_allclose(model.predict(x, batch_size=8, verbose=0), plain.predict(x, verbose=0) + 100.0,
                               atol=1e-5)
    np.testing.assert_allclose(model.predict_on_batch(x[:4]), plain.predict(x[:4], verbose=0) + 100.0, atol=1e-5)


class BatchCalls(tf.keras.callbacks.Callback):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list = []

    def on_train_batch_begin(self, batch, logs=None):
        self.calls.append(("begin", batch))

    def on_train_batch_end(self, batch, logs=None):
        self.calls.append(("end", batch))


def test_steps_per_execution_gives_the_same_weights_and_calls_batch_callbacks_once_per_execution():
    x, y = _data(160)  # 10 batches of 16: executions of 4, 4 and 2 steps
    reference = _functional()
    reference.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    model = _functional()
    model.compile(optimizer="adam", loss="mse", metrics=["mae"], steps_per_execution=4)
    assert model.steps_per_execution == 4
    calls = BatchCalls()
    model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0, callbacks=[calls])
    for ours, theirs in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(ours, theirs, atol=1e-6)
    # TF 2.21 on the same shape (10 batches, steps_per_execution=4) reports exactly these calls
    one_epoch = [("begin", 0), ("end", 3), ("begin", 4), ("end", 7), ("begin", 8), ("end", 11)]
    assert calls.calls == one_epoch * 2
    assert int(model.optimizer.iterations) == 20


def test_compile_refuses_what_it_cannot_honour():
    model = _functional()
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="steps_per_execution must be a positive integer"):
            model.compile(optimizer="adam", loss="mse", steps_per_execution=bad)
    with pytest.raises(ValueError, match="jit_compile must be True, False or 'auto'"):
        model.compile(optimizer="adam", loss="mse", jit_compile="xla")
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        model.compile(optimizer="adam", loss="mse", experimental_run_tf_function=False)
    with pytest.warns(UserWarning, match="run_eagerly=True turns jit_compile off"):
        model.compile(optimizer="adam", loss="mse", run_eagerly=True, jit_compile=True)
    assert model.run_eagerly is True and model._compiled.jit_compile is False
    model.compile(optimizer="adam", loss="mse", jit_compile="auto")
    assert model._compiled.jit_compile is False  # 'auto' runs eagerly here


def test_compute_loss_is_scaled_for_distribution_like_keras():
    # TF 2.21 (Keras 3), MirroredStrategy over 2 logical CPUs: for a batch whose mse is 9.0, both
    # model.compute_loss and model.compiled_loss return 4.5 on each replica inside strategy.run.
    from tests._local_replicas import ThreadReplicaStrategy

    strategy = ThreadReplicaStrategy(2)
    try:
        x, y = _data(8)
        with strategy.scope():
            model = _functional()
        full = model._compiled.compute_loss(torch.from_numpy(y), model(torch.from_numpy(x)), None, [])
        runtime.forget(model)
        shares = strategy.run(lambda: model.compute_loss(y=torch.from_numpy(y), y_pred=model(torch.from_numpy(x))))
        for share in strategy.experimental_local_results(shares):
            assert float(share) == pytest.approx(float(full) / 2, rel=1e-6)
        compiled = strategy.run(lambda: model.compiled_loss(torch.from_numpy(y), model(torch.from_numpy(x))))
        for share in strategy.experimental_local_results(compiled):
            assert float(share) == pytest.approx(float(full) / 2, rel=1e-6)
    finally:
        strategy.teardown()


class ForgotReturn(tf.keras.Model):
    """A custom step without its `return` (the logs would be None)."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(y=y, y_pred=self(x, training=True))
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables), self.trainable_variables))

    def test_step(self, data):
        self.compute_loss(y=data[1], y_pred=self(data[0]))


@pytest.mark.parametrize("call", ["fit", "evaluate", "train_on_batch", "test_on_batch"])
def test_a_custom_step_that_returns_none_is_refused_instead_of_logging_a_made_up_loss(call):
    x, y = _data(32)
    inputs = tf.keras.Input((6,))
    model = ForgotReturn(inputs, tf.keras.layers.Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse")
    step = "train_step" if call in ("fit", "train_on_batch") else "test_step"
    with pytest.raises(ValueError, match=rf"ForgotReturn\.{step}\(\) returned None.*must return its logs"):
        if call in ("fit", "evaluate"):
            getattr(model, call)(x, y, batch_size=16, verbose=0)
        else:
            getattr(model, call)(x[:16], y[:16])


def test_model_loss_is_compiles_argument_and_the_deprecated_methods_compute_the_loss():
    # Keras 3.15 (TF 2.21): model.loss is None before compile and then compile's `loss` argument, over the
    # deprecated Model.loss(y, y_pred, sample_weight) method; compiled_loss(y, y_pred) is a method too.
    # mse of these is 3.5, and 0.25 with sample_weight [1, 0] (Keras's numbers).
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    assert model.loss is None
    model.compile(optimizer="sgd", loss="mse")
    assert model.loss == "mse"
    y = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    y_pred = torch.tensor([[0.0, 2.0], [1.0, 1.0]])
    with pytest.warns(UserWarning, match=r"`model.loss\(\)` is deprecated"):
        assert float(type(model).loss(model, y, y_pred)) == pytest.approx(3.5)
    with pytest.warns(UserWarning, match=r"`model.compiled_loss\(\)` is deprecated"):
        assert float(model.compiled_loss(y, y_pred)) == pytest.approx(3.5)
        assert float(model.compiled_loss(y, y_pred, sample_weight=torch.tensor([1.0, 0.0]))) == pytest.approx(0.25)


def test_compiled_loss_adds_the_models_own_regularization_losses():
    # Keras 3.15: compiled_loss is compute_loss(None, y, y_pred, sample_weight): self.losses always count,
    # whatever regularization_losses says.
    model = tf.keras.Sequential([tf.keras.Input((3,)),
                                 tf.keras.layers.Dense(2, kernel_regularizer=tf.keras.regularizers.L2(1.0))])
    model.compile(optimizer="sgd", loss="mse")
    y, y_pred = torch.ones(2, 2), torch.zeros(2, 2)
    penalty = float(sum(model.losses))
    assert penalty > 0
    with pytest.warns(UserWarning):
        assert float(model.compiled_loss(y, y_pred)) == pytest.approx(1.0 + penalty, rel=1e-6)
        assert float(model.compiled_loss(y, y_pred, regularization_losses=[])) == pytest.approx(1.0 + penalty, rel=1e-6)
