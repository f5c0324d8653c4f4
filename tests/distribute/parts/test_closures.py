"""Closures packed for parameter-server workers, in this process: the variables a closure uses travel as
references (each registered once, however deep its layer), everything else by value, and unbuilt models refuse."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from torchstrategy.distribute.parts.closures import ClosurePickler
from torchstrategy.distribute.parts.variable_registry import VariableRegistry
from torchstrategy.distribute.parts.variable_store import VariableClient


def _pickler():
    registry = VariableRegistry(VariableClient(None), ["ps:0", "ps:1"])  # placing needs no ps task
    strategy = object()
    return registry, strategy, ClosurePickler(registry, strategy)


def test_a_closure_over_a_model_references_each_variable_once_and_carries_the_rest_by_value():
    registry, strategy, pickler = _pickler()
    inner = tf.keras.Sequential([tf.keras.Input((512,)), tf.keras.layers.Dense(256), tf.keras.layers.Dense(2)])
    model = tf.keras.Sequential([tf.keras.Input((512,)), inner, tf.keras.layers.Dense(1)])
    settings = {"scale": 2.5, "names": ["a", "b"], "dtype": torch.float32}
    first_dense = inner.layers[0]

    def fn(x):  # the model, one of its nested layers again, the strategy and plain values
        return model(x) * settings["scale"], first_dense.kernel, strategy

    payload, specs = pickler.dumps((fn, (torch.ones(2, 512),), {}))
    weights = model.trainable_variables
    assert len(weights) == 6
    # the model travels with its layers, so every weight goes as a reference (none by value), the nested one too
    assert sorted(specs) == sorted(registry.spec_of(w).key for w in weights)
    assert registry.spec_of(first_dense.kernel).key in specs
    places = [registry.spec_of(w).shards[0].task for w in weights]
    assert places == ["ps:0", "ps:1"] * 3  # round robin in creation order, each registered once
    keys = {registry.spec_of(w).key for w in weights}
    assert len(keys) == 6
    again, specs_again = pickler.dumps((fn, (torch.ones(2, 512),), {}))
    assert specs_again == specs and len({registry.spec_of(w).key for w in weights}) == 6  # no new registration
    assert b"names" in payload and len(again) == len(payload)
    assert len(payload) < 100_000  # by reference: the 131,000 kernel numbers (512 KB) are not in it


def test_an_unbuilt_layer_inside_a_model_is_refused_when_packed():
    _, _, pickler = _pickler()
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])  # no input shape: nothing built yet
    with pytest.raises(ValueError, match="is not built"):
        pickler.dumps((lambda: model, (), {}))


def test_a_keras_metric_reaches_a_worker_with_its_states_as_keras_variables_held_by_the_worker():
    """A metric's states travel as references, and the worker's copies are Keras variables like the coordinator's
    (a custom metric calls `assign_add` on them), whose writes move the version counters the worker reads to
    send the changes to the ps tasks."""
    from torchstrategy.distribute.parts.closures import WorkerService, _ClosureUnpickler

    class Seen(tf.keras.metrics.Metric):
        def __init__(self):
            super().__init__(name="seen")
            self.rows = self.add_variable((), "zeros", name="rows")
            self.last = self.add_variable((2,), "zeros", name="last", aggregation="only_first_replica")

        def update_state(self, values):
            self.rows.assign_add(float(values.shape[0]))
            self.last.assign(values[-1])

        def result(self):
            return self.rows

    registry, strategy, pickler = _pickler()
    metric = Seen()
    payload, specs = pickler.dumps((lambda m: m, (metric,), {}))
    assert sorted(specs) == sorted(registry.spec_of(v).key for v in metric.variables)
    service = WorkerService(strategy, None, "worker:0")
    held = dict((spec.key, local) for spec, local in service._hold(specs))
    fn, args, _ = _ClosureUnpickler(payload, service).load()
    remote = fn(*args)
    rows, last = (held[registry.spec_of(v).key] for v in metric.variables)
    assert remote.rows is rows and remote.last is last and all(a is b for a, b in zip(remote.variables, [rows, last]))
    assert (rows.name, rows.path, last.aggregation) == ("rows", "seen/rows", "only_first_replica")
    with torch.no_grad():
        rows.zero_(), last.zero_()
    versions = rows._version, last._version
    remote.update_state(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert float(remote.result()) == 2.0 and last.tolist() == [3.0, 4.0]
    assert rows._version > versions[0] and last._version > versions[1]
