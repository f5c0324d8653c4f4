"""The Metric base (keras/metrics/base.py): Keras 3's `add_variable` state variables (assign / assign_add /
assign_sub, initializer, reset to zero, aggregation over replicas), against Keras 3.15 numbers frozen by
tools/tf_reference/keras_functional_reference.py ("metric_variables")."""
from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests import _multiprocess as mp
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
    metric.reset_state()  # zero, whatever the initializer (Keras 3)
    assert float(metric.result()) == pytest.approx(REF["after_reset"])


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
    assert metric.hits.name == "hit_count" and metric.hits.path == hits.path


def test_aggregations_over_processes():
    """Two processes' states: 'sum' adds, 'mean' averages, 'only_first_replica' keeps process 0's."""

    class Three(tf.keras.metrics.Metric):
        def __init__(self):
            super().__init__()
            self.total = self.add_variable((), "zeros", name="total")
            self.average = self.add_variable((), "zeros", aggregation="mean", name="average")
            self.first = self.add_variable((), "zeros", aggregation="only_first_replica", name="first")

    per_process = []
    for rank, value in ((0, 2.0), (1, 6.0)):
        metric = Three()
        for variable in metric.variables:
            variable.assign(value)
        per_process.append(metric._state_contributions(rank))
    summed = [a + b for a, b in zip(*per_process)]
    metric = Three()
    metric._load_state_tensors(summed, processes=2)
    assert [float(v) for v in metric.variables] == [8.0, 4.0, 2.0]


def test_variables_pickle_and_bad_aggregation_is_refused():
    metric = pickle.loads(pickle.dumps(Tally()))
    assert [v.name for v in metric.variables] == ["hit_count", "spread"] and metric.hits is metric.variables[0]
    with pytest.raises(ValueError, match="aggregation='none'"):
        Tally().add_variable((), "zeros", aggregation="none")


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


HITS = r'''
import numpy as np
import torchstrategy as tf
from torchstrategy.keras import ops


class Hits(tf.keras.metrics.Metric):
    """Accuracy kept in two add_variable states held under other attribute names than the variables'."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.correct = self.add_variable(shape=(), initializer="zeros", name="hit_count")
        self.seen = self.add_variable(shape=(), initializer="zeros", name="seen_count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        right = ops.cast(ops.equal(ops.cast(y_pred > 0.5, "float32"), y_true), "float32")
        self.correct.assign_add(ops.sum(right))
        self.seen.assign_add(ops.cast(ops.size(right), "float32"))

    def result(self):
        return self.correct / self.seen


def train(strategy):
    rng = np.random.default_rng(0)
    x = rng.random((32, 3)).astype("float32")
    y = (x.sum(axis=1, keepdims=True) > 1.5).astype("float32")
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1, activation="sigmoid",
                                                                                 kernel_initializer="ones")])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", metrics=[Hits(name="hits")])
    return model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history["hits"]
'''
JOB = HITS + r'''
import json, os, sys

out, replicas = sys.argv[1], int(sys.argv[2])
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
hits = train(strategy)
with open(os.path.join(out, f"report_{strategy.process_rank}.json"), "w") as f:
    json.dump({"hits": hits}, f)
'''


@pytest.mark.slow
def test_add_variable_states_reduce_over_two_processes_as_one(tmp_path):
    reports = mp.run_replica_reports(tmp_path, JOB, replicas=2)
    namespace: dict = {}
    exec(compile(HITS, "hits", "exec"), namespace)  # the same training in this process: the reference
    single = namespace["train"](tf.distribute.get_strategy())
    for report in reports:
        np.testing.assert_allclose(report["hits"], single, rtol=1e-6)
    assert 0.0 < single[0] <= 1.0
