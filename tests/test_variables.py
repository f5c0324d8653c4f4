"""tf.Variable: a real torch tensor with TF's assign*/numpy/read_value/name/trainable, plain-tensor
arithmetic results, gradients for trainable floats, copies and pickling, and bad input; its sparse updates
(scatter_* with tf.IndexedSlices, scatter_nd_*, sparse_read, gather_nd, count_up_to, ref) against TF 2.21."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.errors import InvalidArgumentError, OutOfRangeError


def test_defaults_follow_tf():
    v = tf.Variable(1.0)
    assert isinstance(v, torch.Tensor) and v.dtype == torch.float32 and v.shape == ()
    assert v.name == "Variable:0" and v.trainable and v.requires_grad
    counter = tf.Variable(0, trainable=False, name="step")
    assert counter.dtype == torch.int32 and counter.name == "step:0" and not counter.trainable
    assert tf.Variable(np.arange(3.0)).dtype == torch.float64  # NumPy keeps its dtype, as tf.constant does
    assert tf.Variable([1, 2], dtype="int64").dtype == torch.int64
    assert tf.Variable(lambda: torch.ones(2, 3)).shape == (2, 3)  # callable initial values


def test_assign_ops_work_in_place_and_return_the_variable():
    v = tf.Variable([1.0, 2.0, 3.0])
    storage = v.data_ptr()
    assert v.assign([4.0, 5.0, 6.0]) is v
    assert v.assign_add(torch.ones(3)) is v
    assert v.assign_sub(np.array([0.5, 0.5, 0.5])) is v
    assert v.data_ptr() == storage
    np.testing.assert_allclose(v.numpy(), np.array([4.0, 5.0, 6.0]) + 1 - 0.5)
    assert v.assign([0.0, 0.0, 0.0], read_value=False) is None
    step = tf.Variable(0)
    for _ in range(3):
        step.assign_add(1)
    assert int(step) == 3 and step.dtype == torch.int32


def test_arithmetic_gives_plain_tensors_and_numbers_format():
    v = tf.Variable([1.0, 2.0])
    for result in (v + 1, v * v, torch.exp(v), v.sum(), v[0], torch.stack([v, v]), v.read_value(), v.value()):
        assert isinstance(result, torch.Tensor) and not isinstance(result, tf.Variable)
        np.asarray(result)  # converts as TF's eager tensors do, though autograd recorded it
    np.testing.assert_allclose((v * 3 + 1).numpy(), [4.0, 7.0])
    np.testing.assert_allclose(np.array([1.0, 1.0]) - v, [0.0, -1.0])
    scalar = tf.Variable(2.5)
    assert float(scalar) == 2.5 and f"{scalar:.3f}" == "2.500" and int(tf.Variable(7)) == 7
    assert f"{tf.Variable(7):04d}" == "0007"
    assert "numpy=2.5" in repr(scalar) and "'Variable:0'" in repr(scalar)


def test_numpy_is_a_snapshot_and_read_value_is_differentiable():
    v = tf.Variable([1.0, 2.0])
    before = v.numpy()
    v.assign_add([1.0, 1.0])
    np.testing.assert_array_equal(before, [1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = (v.read_value() ** 2).sum()
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), 2 * np.array([2.0, 3.0]))


def test_trainable_variables_train_with_torch_optimizers_and_modules_register_them():
    w = tf.Variable([3.0])
    frozen = tf.Variable([3.0], trainable=False)
    assert not frozen.requires_grad
    optimizer = torch.optim.SGD([w], lr=0.25)
    loss = (w ** 2).sum()  # d/dw = 2w = 6, so w becomes 3 - 0.25 * 6
    loss.backward()
    optimizer.step()
    np.testing.assert_allclose(w.detach().numpy(), [3.0 - 0.25 * 6.0])
    assert isinstance(w, tf.Variable) and w.assign([1.0]) is w
    module = torch.nn.Module()
    module.scale = w
    assert dict(module.named_parameters())["scale"] is w


def test_copies_and_pickles_stay_variables():
    v = tf.Variable([1.0, 2.0], name="kernel", trainable=False)
    for clone in (copy.deepcopy(v), pickle.loads(pickle.dumps(v))):
        assert isinstance(clone, tf.Variable) and clone.name == "kernel:0" and not clone.trainable
        assert torch.equal(clone, v)
        clone.assign([9.0, 9.0])
        assert v.tolist() == [1.0, 2.0]


def test_constraint_is_applied_after_each_assignment():
    v = tf.Variable([0.5, -1.0], constraint=lambda t: t.clamp(min=0.0))
    v.assign_sub([1.0, 1.0])
    assert v.tolist() == [0.0, 0.0]


def test_bad_input_is_refused_with_clear_errors():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match=r"shape \(3,\).*shape \(2,\).*must be equal"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"Cannot assign_add a value of shape \(\)"):
        v.assign_add(1.0)  # TF does not broadcast in assign_add either
    with pytest.raises(ValueError, match="needs an initial_value"):
        tf.Variable()
    with pytest.raises(ValueError, match=r"shape \(2,\), but shape=\(3,\)"):
        tf.Variable([1.0, 2.0], shape=(3,))
    with pytest.raises(TypeError, match="unexpected keyword"):
        tf.Variable(1.0, learning_rate=3)


def test_synchronization_and_aggregation_enums_follow_tf():
    assert [m.value for m in tf.VariableSynchronization] == [0, 1, 2, 3]  # TF 2.21: AUTO NONE ON_WRITE ON_READ
    assert [m.name for m in tf.VariableAggregation] == ["NONE", "SUM", "MEAN", "ONLY_FIRST_REPLICA"]
    v = tf.Variable(1.0)
    assert v.synchronization is tf.VariableSynchronization.AUTO and v.aggregation is tf.VariableAggregation.NONE
    on_read = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ)
    assert not on_read.trainable and not on_read.requires_grad  # ON_READ defaults to non-trainable, as TF
    with pytest.raises(ValueError, match="non-trainable"):
        tf.Variable(0.0, trainable=True, synchronization=tf.VariableSynchronization.ON_READ)
    with pytest.raises(ValueError, match="VariableAggregation"):
        tf.Variable(0.0, aggregation="sum")


def test_on_read_variable_under_thread_replicas():
    from tests._local_replicas import ThreadReplicaStrategy
    from torchstrategy.distribute.values import PerReplica

    strategy = ThreadReplicaStrategy(2)
    with strategy.scope():
        made = {agg: tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ, aggregation=agg)
                for agg in (tf.VariableAggregation.SUM, tf.VariableAggregation.MEAN,
                            tf.VariableAggregation.ONLY_FIRST_REPLICA)}

        def step(value):
            for variable in made.values():
                variable.assign_add(value)
            return made[tf.VariableAggregation.SUM].read_value()

        local = strategy.run(step, args=(PerReplica([torch.tensor(3.0), torch.tensor(5.0)]),))
    assert [float(v) for v in local.values] == [3.0, 5.0]  # each replica read its own copy
    assert float(made[tf.VariableAggregation.SUM]) == 8.0
    assert float(made[tf.VariableAggregation.MEAN].read_value()) == 4.0
    assert made[tf.VariableAggregation.ONLY_FIRST_REPLICA].numpy() == 3.0
    made[tf.VariableAggregation.SUM].assign(0.0)  # outside strategy.run: resets every copy
    assert float(made[tf.VariableAggregation.SUM]) == 0.0
    with pytest.raises(ValueError, match="SUM aggregation outside"):
        made[tf.VariableAggregation.SUM].assign_add(1.0)


# ----- sparse updates -------------------------------------------------------------------------------
START = [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]
# TF 2.21: Variable(START).<method>(IndexedSlices([[10, 20], [30, 40]], [3, 1]))
EXPECTED = {
    "scatter_add": [[1.0, 1.0], [32.0, 42.0], [3.0, 3.0], [14.0, 24.0]],
    "scatter_sub": [[1.0, 1.0], [-28.0, -38.0], [3.0, 3.0], [-6.0, -16.0]],
    "scatter_update": [[1.0, 1.0], [30.0, 40.0], [3.0, 3.0], [10.0, 20.0]],
    "scatter_mul": [[1.0, 1.0], [60.0, 80.0], [3.0, 3.0], [40.0, 80.0]],
    "scatter_div": [[1.0, 1.0], [0.06666667014360428, 0.05000000074505806], [3.0, 3.0],
                    [0.4000000059604645, 0.20000000298023224]],
    "scatter_max": [[1.0, 1.0], [30.0, 40.0], [3.0, 3.0], [10.0, 20.0]],
    "scatter_min": [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]],
}


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_scatter_with_indexed_slices(method: str) -> None:
    v = tf.Variable(START)
    out = getattr(v, method)(tf.IndexedSlices(tf.constant([[10.0, 20.0], [30.0, 40.0]]), tf.constant([3, 1])))
    assert out is v and v.numpy().tolist() == EXPECTED[method]


def test_repeated_indices() -> None:
    dup = tf.IndexedSlices(tf.constant([[10.0, 20.0], [30.0, 40.0]]), tf.constant([1, 1]))
    v = tf.Variable(START)
    assert v.scatter_add(dup).numpy().tolist()[1] == [42.0, 62.0]  # TF 2.21: both rows added
    v.assign(START)
    assert v.scatter_update(dup).numpy().tolist()[1] == [30.0, 40.0]  # TF 2.21 (CPU): the last write wins
    ints = tf.Variable([7, 9])
    assert ints.scatter_div(tf.IndexedSlices(tf.constant([2]), tf.constant([1]))).numpy().tolist() == [7, 4]


def test_scatter_keeps_training_working() -> None:
    v = tf.Variable([1.0, 2.0, 3.0])
    v.scatter_add(tf.IndexedSlices(tf.constant([5.0, 6.0]), tf.constant([0, 2])))
    assert v.numpy().tolist() == [6.0, 2.0, 9.0]  # TF 2.21
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * v)
    assert tape.gradient(loss, v).tolist() == [12.0, 4.0, 18.0]
    assert v.requires_grad


def test_nd_and_reads() -> None:
    w = tf.Variable([1.0, 2.0, 3.0, 4.0])
    assert w.scatter_nd_add([[1], [3]], [10.0, 20.0]).numpy().tolist() == [1.0, 12.0, 3.0, 24.0]  # TF 2.21
    assert w.scatter_nd_sub([[1]], [1.0]).numpy().tolist() == [1.0, 11.0, 3.0, 24.0]
    assert w.scatter_nd_update([[0]], [7.0]).numpy().tolist() == [7.0, 11.0, 3.0, 24.0]
    v = tf.Variable(START)
    assert v.sparse_read([2, 0]).tolist() == [[3.0, 3.0], [1.0, 1.0]]
    assert v.gather_nd([[1, 0], [2, 1]]).tolist() == [2.0, 3.0]
    b = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    b.batch_scatter_update(tf.IndexedSlices(tf.constant([[9.0], [8.0]]), tf.constant([[1], [0]])))
    assert b.numpy().tolist() == [[1.0, 9.0], [8.0, 4.0]]  # TF 2.21


def test_count_up_to_ref_and_shape() -> None:
    c = tf.Variable(0)
    assert int(c.count_up_to(2)) == 0 and int(c.count_up_to(2)) == 1
    with pytest.raises(OutOfRangeError, match="Reached limit of 2"):
        c.count_up_to(2)
    v = tf.Variable(START)
    assert v.ref() == v.ref() and v.ref().deref() is v and v.experimental_ref() == v.ref()
    assert {v.ref(): 1}[v.ref()] == 1
    v.set_shape([4, None])
    with pytest.raises(ValueError, match="not compatible"):
        v.set_shape([3, 2])
    v.load([[0.0, 0.0]] * 4)
    assert v.numpy().sum() == 0.0 and v.initializer is None


def test_torch_style_scatter_add_still_works() -> None:
    v = tf.Variable(START)
    out = v.scatter_add(0, torch.tensor([[0, 0]]), torch.tensor([[5.0, 5.0]]))  # torch.Tensor.scatter_add
    assert out.tolist()[0] == [6.0, 6.0] and v.numpy().tolist() == START


def test_bad_input_is_refused_clearly() -> None:
    v = tf.Variable(START)
    with pytest.raises(TypeError, match="must be a `tf.IndexedSlices`"):
        v.scatter_add(tf.constant([1.0]))
    with pytest.raises(InvalidArgumentError, match=r"= 7 is not in \[0, 4\)"):
        v.scatter_add(tf.IndexedSlices(tf.constant([[1.0, 1.0]]), tf.constant([7])))
    with pytest.raises(ValueError, match="dtype"):
        tf.Variable([1.0, 2.0]).scatter_add(tf.IndexedSlices(tf.constant([5]), tf.constant([0])))
    with pytest.raises(ValueError, match="need updates of shape"):
        v.scatter_add(tf.IndexedSlices(tf.constant([[1.0, 1.0, 1.0]]), tf.constant([1])))
    assert v.numpy().tolist() == START  # nothing was written


def test_graph_only_members_fail_as_in_tf_eager() -> None:
    v = tf.Variable([1.0])
    for member in ("op", "graph"):
        with pytest.raises(AttributeError, match="eager execution"):
            getattr(v, member)
    with pytest.raises(RuntimeError, match="eager execution"):
        v.initial_value  # noqa: B018
    with pytest.raises(RuntimeError, match="eager execution"):
        v.eval()
    with pytest.raises(NotImplementedError, match="read_value"):
        v.initialized_value()
    with pytest.raises(RuntimeError, match="Checkpoint"):
        v.to_proto()
