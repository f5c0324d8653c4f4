"""The Metric base (keras/metrics/base.py, replica_states.py): Keras 3's `add_variable` state variables (assign /
assign_add / assign_sub, initializer, reset to zero, aggregation over replicas) against Keras 3.15 numbers frozen
by tools/tf_reference/keras_functional_reference.py ("metric_variables"), in fit and evaluate, and over replica
threads and processes (fit under every strategy: tests/distribute/conformance, test_keras_3_metric_variables_...)."""
from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.keras import ops

REF = json.load(open(os.path.join(os.path.dirname(os.path.dirname(__file__)),
                                  "keras_functional_reference.json")))["metric_variables"]


class Tally(tf.keras.metrics.Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hits = self.add_variable(shape=(), initializer="ones", name="hit_count")
        self.spread = self.add_variable(shape=(2,), initializer="zeros", name="spread", aggregation="mean")

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.hits.assign_add(ops.sum(ops.cast(ops.equal(y_true, ops.round(y_pred)), "float32")))
        self.hits.assign(self.hits * 2.0)
        self.spread.assign_sub(ops.stack([ops.max(y_pred), ops.min(y_pred)]))

    def result(self):
        return self.hits + ops.sum(self.spread)


def test_add_variable_gives_keras_variables_with_keras_numbers():
    metric = Tally(name="tally")
    assert float(metric.result()) == pytest.approx(REF["start"])
    metric.update_state(np.array([1.0, 0.0, 1.0]), np.array([0.9, 0.4, 0.2]))
    assert float(metric.result()) == pytest.approx(REF["after_update"], rel=1e-6)
    assert [v.path for v in metric.variables] == REF["paths"]
    assert [v.name for v in metric.variables] == REF["names"]
    assert [v.aggregation for v in metric.variables] == ["sum", "mean"]
    assert metric.spread.shape == (2,) and metric.spread.dtype == torch.float32 and not metric.spread.trainable
    np.testing.assert_allclose(metric.spread.numpy(), [-0.9, -0.2], rtol=1e-6)
    assert float(metric.hits.value) == 6.0 and float(metric.hits / 3.0) == 2.0
    metric.reset_state()  # zero, whatever the initializer (Keras 3)
    assert float(metric.result()) == pytest.approx(REF["after_reset"])


def test_result_returning_a_state_gives_its_value_then_not_the_variable():
    class Count(tf.keras.metrics.Metric):
        def __init__(self):
            super().__init__()
            self.seen = self.add_variable((), "zeros", name="seen")

        def update_state(self, values):
            self.seen.assign_add(float(np.size(values)))

        def result(self):
            return self.seen

    metric = Count()
    metric.update_state([1, 2, 3])
    logged = metric.result()
    metric.reset_state()
    assert float(logged) == 3.0 and float(metric.result()) == 0.0


def test_every_write_to_a_state_moves_its_version_counter():
    """ParameterServerStrategy's coordinator sends a variable to the ps tasks when its version counter moved
    (variable_registry.flush): a reset that zeroes `state.data` leaves the counter be, so the ps copy kept the
    last epoch's totals and the next epoch's results were off (the reverted first try at these variables)."""
    metric = Tally()
    for write in (metric.reset_state, lambda: metric._load_state_tensors([torch.tensor(3.0), torch.ones(2)]),
                  lambda: metric.hits.assign(5.0), lambda: metric.update_state(np.ones(2), np.ones(2))):
        before = [v._version for v in metric.variables]
        write()
        after = [v._version for v in metric.variables]
        assert after[0] > before[0]


def test_state_variables_stay_the_same_objects_when_states_are_replaced():
    """Cross-replica sums, restored training states and device moves write into the variables the metric
    holds under its own attribute names, so `result()` reads them."""
    metric = Tally()
    hits, spread = metric.hits, metric.spread
    metric._load_state_tensors([torch.tensor(7.0), torch.tensor([1.0, 2.0])])
    assert metric.hits is hits and metric.spread is spread
    assert float(metric.result()) == pytest.approx(10.0)
    metric._follow_device(torch.device("meta"))  # a kind torch cannot swap in place: a new variable, rebound
    assert metric.hits.device.type == "meta" and metric.hits is metric.variables[0]
    assert metric.hits.name == "hit_count" and metric.hits.path == hits.path and metric.spread.aggregation == "mean"


class Three(tf.keras.metrics.Metric):
    """One state of each aggregation, each set with `assign` (not added to)."""

    def __init__(self):
        super().__init__()
        self.total = self.add_variable((), "zeros", name="total")
        self.average = self.add_variable((), "zeros", aggregation="mean", name="average")
        self.first = self.add_variable((), "zeros", aggregation="only_first_replica", name="first")

    def update_state(self, value):
        for variable in self.variables:
            variable.assign(value)

    def result(self):
        return ops.stack([self.total, self.average, self.first])


def test_aggregations_over_processes():
    """Two processes' states: 'sum' adds, 'mean' averages, 'only_first_replica' keeps process 0's."""
    per_process = []
    for rank, value in ((0, 2.0), (1, 6.0)):
        metric = Three()
        metric.update_state(value)
        per_process.append(metric._state_contributions(rank, 2))
    summed = [a + b for a, b in zip(*per_process)]
    metric = Three()
    metric._load_state_tensors(summed, processes=2)
    assert [float(v) for v in metric.variables] == [8.0, 4.0, 2.0]


def test_assigned_states_of_replica_threads_combine_as_their_aggregation_says():
    """Two replica threads (CentralStorageStrategy) each `assign` their own value: TF keeps a copy per replica
    (sync-on-read variables) and reads 'sum' as 2 + 6, 'mean' as 4, 'only_first_replica' as replica 0's 2 (TF
    2.21 / Keras 3.15 under MirroredStrategy over two logical CPUs read the same). Added states keep adding."""
    strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
    metric, counter = Three(), tf.keras.metrics.Sum()

    def step(base):
        replica = tf.distribute.get_replica_context().replica_id_in_sync_group
        metric.update_state(base + 4.0 * replica)
        counter.update_state(1.0)

    strategy.run(step, args=(2.0,))
    assert metric.result().tolist() == [8.0, 4.0, 2.0] and float(counter.result()) == 2.0
    strategy.run(step, args=(10.0,))
    assert metric.result().tolist() == [24.0, 12.0, 10.0] and float(counter.result()) == 4.0
    metric.reset_state()  # a write between steps: every replica's copy starts again from it
    assert metric.result().tolist() == [0.0, 0.0, 0.0]
    strategy.run(step, args=(1.0,))
    assert metric.result().tolist() == [6.0, 3.0, 1.0]


def test_aggregation_none_is_kept_for_one_replica_and_refused_when_replicas_must_combine():
    class Kept(tf.keras.metrics.Metric):
        def __init__(self):
            super().__init__()
            self.last = self.add_variable((), "zeros", aggregation=None, name="last")

        def update_state(self, value):
            self.last.assign(value)

        def result(self):
            return self.last

    metric = Kept()
    metric.update_state(3.0)
    assert metric.last.aggregation == "none" and float(metric.result()) == 3.0
    with pytest.raises(ValueError, match="aggregation='none'.*2 replicas"):
        metric._state_contributions(0, 2)
    strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
    with pytest.raises(ValueError, match="aggregation='none'"):
        strategy.run(lambda: metric.update_state(1.0))


def test_variables_pickle_and_bad_arguments_are_refused():
    metric = pickle.loads(pickle.dumps(Tally()))
    assert [v.name for v in metric.variables] == ["hit_count", "spread"] and metric.hits is metric.variables[0]
    assert metric.spread.aggregation == "mean"
    with pytest.raises(ValueError, match="aggregation='max'.*'only_first_replica'"):
        Tally().add_variable((), "zeros", aggregation="max")
    with pytest.raises(ValueError, match="without '/'"):
        Tally().add_variable((), "zeros", name="a/b")


def test_a_name_taken_by_a_method_is_not_overwritten():
    class Named(tf.keras.metrics.Metric):
        def __init__(self):
            super().__init__()
            self.state = self.add_variable((), "zeros", name="result")

        def update_state(self, values):
            self.state.assign_add(float(np.sum(values)))

        def result(self):
            return self.state

    metric = Named()
    metric.update_state([1.0, 2.0])
    assert float(metric.result()) == 3.0


class MeanGap(tf.keras.metrics.Metric):
    """Mean absolute gap between label and prediction, Keras 3 style: `assign` for one state, `assign_add` for
    the other, `self.total / self.seen` read in result()."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.seen = self.add_variable(shape=(), initializer="zeros", name="seen")

    def update_state(self, y_true, y_pred, sample_weight=None):
        gap = ops.abs(ops.cast(y_true, "float32") - ops.cast(y_pred, "float32"))
        self.total.assign(self.total + ops.sum(gap))
        self.seen.assign_add(ops.cast(ops.size(gap), "float32"))

    def result(self):
        return self.total / self.seen


def test_a_custom_metric_in_fit_and_evaluate_matches_a_hand_computation():
    """With a learning rate of 0 the predictions stay put, so every epoch's metric (reset between epochs) and
    evaluate's are the mean gap over the rows computed here from predict()."""
    rng = np.random.default_rng(0)
    x = rng.random((40, 3)).astype("float32")
    y = rng.random((40, 1)).astype("float32")
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    gap = MeanGap(name="gap")
    model.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss="mse", metrics=[gap])
    history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history["gap"]
    by_hand = float(np.mean(np.abs(y - model.predict(x, verbose=0))))
    np.testing.assert_allclose(history, [by_hand, by_hand], rtol=1e-5)
    evaluated = model.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)["gap"]
    assert evaluated == pytest.approx(by_hand, rel=1e-5)
    assert [v.name for v in gap.variables] == ["total", "seen"]


def test_metric_states_are_not_written_to_weights_files_as_in_keras(tmp_path):
    """Keras 3.15's Metric has no save_own_variables: a fitted model compiled with an add_variable metric writes
    the same .weights.h5 groups as without it (what TF 2.21 / Keras 3.15 wrote for this model, listed by h5py)."""
    import h5py

    x = np.random.default_rng(0).random((16, 3)).astype("float32")
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse", metrics=[MeanGap(name="gap"), "mae"])
    model.fit(x, x[:, :1], epochs=1, verbose=0)
    path = str(tmp_path / "m.weights.h5")
    model.save_weights(path)
    names: list = []
    with h5py.File(path, "r") as handle:
        handle.visit(names.append)
    assert sorted(names) == sorted(["layers", "layers/dense", "layers/dense/vars", "layers/dense/vars/0",
                                    "layers/dense/vars/1", "optimizer", "optimizer/vars", "optimizer/vars/0",
                                    "optimizer/vars/1", "vars"])


def test_a_metric_reads_only_the_values_of_its_inputs_not_what_rides_on_them():
    """A prediction that needs no gradient reaches the metric's function without a new tensor per update, yet as
    before without its Python attributes: softmax logits riding on it do not switch crossentropy to them."""
    y_true = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    probs = torch.tensor([[0.3, 0.7], [0.6, 0.4]])
    plain = tf.keras.metrics.CategoricalCrossentropy()
    plain.update_state(y_true, probs)
    carried = probs.clone()
    carried._keras_logits = torch.tensor([[9.0, -9.0], [-9.0, 9.0]])  # would give a very different loss
    carried._keras_mask = torch.tensor([True, False])
    riding = tf.keras.metrics.CategoricalCrossentropy()
    with torch.no_grad():
        riding.update_state(y_true, carried)
    torch.testing.assert_close(riding.result(), plain.result(), rtol=0, atol=0)
    total = tf.keras.metrics.Mean()
    values = torch.tensor([1.0, 3.0])
    total.update_state(values)
    values.add_(10.0)  # the state holds sums, not the caller's tensor
    torch.testing.assert_close(total.result(), torch.tensor(2.0))


@pytest.mark.parametrize("name,kwargs,kind", [
    ("MeanAbsoluteError", {}, "regression"), ("MeanSquaredError", {}, "regression"),
    ("CategoricalCrossentropy", {"from_logits": True}, "soft")])
def test_an_unweighted_update_adds_the_fused_batch_mean_times_its_count(name, kwargs, kind):
    # the fused update (mean x count) against the per-sample values summed, as a weighted update adds them
    g = torch.Generator().manual_seed(0)
    fused, summed = getattr(tf.keras.metrics, name)(**kwargs), getattr(tf.keras.metrics, name)(**kwargs)
    for shape in ((32, 10), (4, 6, 3)):
        y_true = torch.rand(shape, generator=g).softmax(-1) if kind == "soft" else torch.randn(shape, generator=g)
        y_pred = torch.randn(shape, generator=g) * 3
        fused.update_state(y_true, y_pred)
        summed.update_state(y_true, y_pred, sample_weight=torch.ones(shape[:-1]))
    for state, reference in zip(fused.variables, summed.variables):
        torch.testing.assert_close(state, reference, rtol=1e-6, atol=0)
    assert float(fused.count) == 32 + 4 * 6


def test_a_metric_subclass_never_inherits_the_fused_update():
    class Doubled(tf.keras.metrics.MeanAbsoluteError):
        def __init__(self):
            super().__init__()
            self._fn = lambda y_true, y_pred: 2 * tf.keras.losses.mean_absolute_error(y_true, y_pred)

    metric = Doubled()
    metric.update_state(torch.zeros(4, 2), torch.ones(4, 2))
    assert float(metric.result()) == 2.0
