"""keras.ops on KerasTensors (keras/operation.py): every op records a graph step, written and read as Keras 3.15
writes it (frozen by tools/tf_reference/keras_functional_reference.py into keras_functional_reference.json)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

from torchstrategy import keras
from torchstrategy.keras import layers, ops
from torchstrategy.keras import operation
from torchstrategy.keras.operation import Operation

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_functional_reference.json")))["ops_graph"]
X_A = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], "float32")
X_B = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "float32")


def _ops_model() -> keras.Model:
    """The model the reference script builds (Keras 3.15), op for op."""
    keras.backend.clear_session()
    a = keras.Input((3,), name="a")
    b = keras.Input((3,), name="b")
    x = ops.exp(a + b) * 2
    outs = [ops.sum(x, axis=1, keepdims=True), ops.reshape(x, (-1, 3, 1)), ops.concatenate([x, a], axis=-1),
            x[:, 1:], ops.nn.softmax(x, axis=-1), 1.0 - a, -a, ops.where(a > 0.2, a, b), ops.mean(a * b, axis=-1),
            ops.cast(a, "int32"), ops.expand_dims(a, 1), ops.matmul(a[:, :, None], b[:, None, :]), a[..., 0],
            ops.clip(a, 0.1, 0.3), abs(a - 0.5), a ** 2, a // 0.2, ops.pad(a, [[0, 0], [1, 2]], constant_values=7.0),
            ops.einsum("ij,ij->i", a, b), ops.nn.relu(a - 0.3), ops.image.resize(ops.reshape(a, (-1, 1, 3, 1)), (2, 6)),
            ops.linalg.norm(a, axis=-1)]
    return keras.Model({"a": a, "b": b}, outs)


def _check_outputs(results: list) -> None:
    assert len(results) == len(REF["outputs"])
    for index, (got, want, dtype) in enumerate(zip(results, REF["outputs"], REF["dtypes"])):
        got = np.asarray(got)
        assert str(got.dtype) == dtype, index
        np.testing.assert_allclose(got, np.asarray(want, dtype), rtol=1e-5, atol=1e-6, err_msg=f"output {index}")


def test_ops_on_keras_tensors_build_the_graph_keras_writes():
    model = _ops_model()
    assert json.loads(model.to_json())["config"] == REF["config"]
    assert [layer.name for layer in model.layers] == REF["layer_names"]  # operations are graph steps, not layers
    _check_outputs(model.predict({"a": X_A, "b": X_B}, verbose=0))


def test_a_graph_keras_wrote_runs_with_keras_numbers():
    keras.backend.clear_session()
    model = keras.Model.from_config(REF["config"])
    _check_outputs(model.predict({"a": X_A, "b": X_B}, verbose=0))
    again = keras.models.model_from_json(model.to_json())
    assert json.loads(again.to_json())["config"]["layers"] == REF["config"]["layers"]
    _check_outputs(again.predict({"a": X_A, "b": X_B}, verbose=0))


def test_ops_record_shapes_with_unknown_sizes_and_train_through_a_layer():
    inputs = keras.Input((None, 4))
    pooled = ops.mean(ops.square(inputs), axis=1)
    assert pooled.shape == (None, 4)
    outputs = layers.Dense(1)(ops.log1p(pooled))
    model = keras.Model(inputs, outputs)
    model.compile("sgd", "mse")
    history = model.fit(np.random.rand(8, 5, 4).astype("float32"), np.zeros((8, 1), "float32"), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert model.predict(np.ones((2, 7, 4), "float32"), verbose=0).shape == (2, 1)


def test_facts_about_a_keras_tensor_are_answered_not_recorded():
    x = keras.Input((3, 4))
    assert ops.shape(x) == (None, 3, 4)
    assert ops.dtype(x) == "float32"
    assert ops.is_tensor(x) is False
    with pytest.raises(ValueError, match="symbolic"):
        ops.convert_to_numpy(x)


def test_keras_tensor_operators_follow_keras():
    x = keras.Input((3,))
    with pytest.raises(TypeError, match="cannot be used as a boolean"):
        bool(x)
    with pytest.raises(ValueError, match="symbolic"):
        float(x)
    assert (x != 0).node.layer.class_name == "NotEqual"
    assert (x == x) is True  # `==` stays identity, as in Keras
    assert (~(x > 0)).node.layer.class_name == "LogicalNot"
    assert round(x).node.layer.get_config() == {"name": "round", "decimals": 0}
    assert x.reshape((3, 1)).shape == (3, 1)


def test_operations_are_named_like_keras_layers_and_keep_no_weights():
    keras.backend.clear_session()
    x = keras.Input((3,))
    first, second = ops.add(x, 1.0), x + 2.0
    layer_add = layers.Add()([x, x])
    assert [first.node.layer.name, second.node.layer.name, layer_add.node.layer.name] == ["add", "add_1", "add_2"]
    assert isinstance(first.node.layer, Operation) and first.node.layer.weights == []


def test_an_old_torchstrategy_config_of_an_operator_still_loads():
    """Configs written before operations followed Keras held class 'TensorOperation' with `op`."""
    inputs = {"module": "keras.layers", "class_name": "InputLayer", "name": "x", "registered_name": None,
              "config": {"batch_shape": [None, 2], "dtype": "float32", "name": "x"}, "inbound_nodes": []}
    tensor = {"class_name": "__keras_tensor__", "config": {"shape": [None, 2], "dtype": "float32",
                                                            "keras_history": ["x", 0, 0]}}
    old = {"module": "torchstrategy.keras.layers.input_layer", "class_name": "TensorOperation",
           "name": "add_operation_0", "registered_name": None,
           "config": {"name": "add_operation_0", "trainable": True, "dtype": "float32", "op": "subtract"},
           "inbound_nodes": [{"args": [[tensor, 3.0]], "kwargs": {}}]}
    config = {"name": "old", "layers": [inputs, old], "input_layers": [["x", 0, 0]],
              "output_layers": ["add_operation_0", 0, 0]}
    model = keras.Model.from_config(config)
    np.testing.assert_allclose(model.predict(np.array([[1.0, 5.0]], "float32"), verbose=0), [[-2.0, 2.0]])


def test_an_op_class_the_table_lacks_runs_the_function_named_after_it():
    """A config from another Keras version may name a class keras_op_classes.json lacks ('Abs' here; Keras 3.15
    records ops.abs as 'Absolute'): the keras.ops function of that snake-case name runs, config by keyword."""
    op = operation.from_keras_entry("Abs", "keras.src.ops.numpy", {"name": "abs_op"})
    x = keras.Input((2,))
    y = op(x)
    assert op.name == "abs_op" and op.get_config() == {"name": "abs_op"}
    model = keras.Model(x, y)
    np.testing.assert_allclose(model.predict(np.array([[-1.0, 2.0]], "float32"), verbose=0), [[1.0, 2.0]])
    with pytest.raises(NotImplementedError, match="keras.ops.no_such_op"):
        operation.from_keras_entry("NoSuchOp", "keras.src.ops.numpy", {"name": "x"})


def test_an_op_copies_through_its_own_class_and_pickles():
    import pickle

    x = keras.Input((3,))
    y = ops.sum(x, axis=1, keepdims=True)
    op = y.node.layer
    assert type(op).__name__ == "Sum" and op.get_config() == {"name": op.name, "axis": 1, "keepdims": True}
    copy = type(op).from_config(op.get_config())  # what clone_model's default clone function does
    assert type(copy) is type(op) and copy.get_config() == op.get_config()
    assert torch.equal(copy(torch.ones(2, 3)), torch.full((2, 1), 3.0))
    again = pickle.loads(pickle.dumps(op))
    assert again.get_config() == op.get_config() and torch.equal(again(torch.ones(1, 3)), torch.full((1, 1), 3.0))


def test_ops_on_real_tensors_are_unchanged():
    assert torch.equal(ops.add(torch.ones(2), 1.0), torch.full((2,), 2.0))
    assert ops.sum.__wrapped__ is not ops.sum  # the public function is the symbolic-aware form
