"""tf.debugging: TF 2.21's error types and message parts (noted from /work/tf-venv), numerics checking and
device-placement logging."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.errors import InvalidArgumentError


def test_value_assertions_pass_return_none_and_fail_with_tf_messages():
    assert tf.debugging.assert_equal(torch.tensor([1, 2]), [1, 2]) is None
    with pytest.raises(InvalidArgumentError) as error:
        tf.debugging.assert_equal([1, 2], [1, 3], message="msg")
    # TF 2.21: "msg\nCondition x == y did not hold.\nIndices of first 1 different values:\n[[1]]..."
    assert str(error.value).startswith(
        "msg\nCondition x == y did not hold.\nIndices of first 1 different values:\n[[1]]")
    with pytest.raises(InvalidArgumentError, match="Condition x < y did not hold"):
        tf.debugging.assert_less([1, 5], 3)
    tf.debugging.assert_less_equal([1, 3], 3)
    tf.debugging.assert_greater(np.array([4, 5]), 3)
    with pytest.raises(InvalidArgumentError, match="Condition x >= y"):
        tf.debugging.assert_greater_equal([1, 5], 3)
    with pytest.raises(InvalidArgumentError, match="Condition x != y"):
        tf.debugging.assert_none_equal([1, 2], [3, 2])
    with pytest.raises(InvalidArgumentError, match="Condition x > 0 did not hold element-wise"):
        tf.debugging.assert_positive([1, 0])
    tf.debugging.assert_non_negative([0, 1])
    tf.debugging.assert_negative([-1.0])
    tf.debugging.assert_non_positive([0, -1])
    with pytest.raises(InvalidArgumentError, match="Incompatible shapes"):
        tf.debugging.assert_equal([1, 2], [1, 2, 3])


def test_assert_near_uses_ten_eps_of_the_dtype():
    tf.debugging.assert_near(torch.tensor([1.0]), torch.tensor([1.0 + 1e-6]))  # within 1.19e-6 (float32)
    with pytest.raises(InvalidArgumentError, match="rtol = 1.1920928955078125e-06"):
        tf.debugging.assert_near([np.float32(1.0)], [np.float32(1.1)])
    with pytest.raises(InvalidArgumentError):
        tf.debugging.assert_near(np.array([1.0]), np.array([1.0 + 1e-6]))  # float64: 2.2e-15
    tf.debugging.assert_near([1.0], [1.05], atol=0.1)


def test_rank_shape_and_type_assertions():
    with pytest.raises(ValueError, match="must have rank 3.  Received rank 2, shape \\(2, 3\\)"):
        tf.debugging.assert_rank(np.zeros((2, 3)), 3)
    tf.debugging.assert_rank_at_least(np.zeros((2, 3)), 2)
    with pytest.raises(ValueError, match="rank in \\(0, 2\\)"):
        tf.debugging.assert_rank_in(np.zeros(2), [0, 2])
    with pytest.raises(ValueError, match="Expected scalar shape, saw shape: \\(1,\\)"):
        tf.debugging.assert_scalar(torch.tensor([1.0]))
    with pytest.raises(TypeError, match="tensor must be of type torch.float32; got torch.int64"):
        tf.debugging.assert_type(torch.tensor([1]), tf.float32)
    with pytest.raises(TypeError, match='Expected "x" to be integer type'):
        tf.debugging.assert_integer(torch.tensor([1.0]))
    tf.debugging.assert_shapes([(np.zeros((2, 3)), ("N", "Q")), (np.zeros((5, 2)), (5, "N")),
                                (np.zeros((7, 2, 3)), ("*", "N", 3)), (1.0, ())])
    with pytest.raises(ValueError, match="dimension 0 must have size 2.  Received size 3"):
        tf.debugging.assert_shapes([(np.zeros((2, 3)), ("N", "Q")), (np.zeros((3,)), ("N",))])
    assert tf.debugging.assert_same_float_dtype(None, None) == torch.float32
    with pytest.raises(ValueError, match="must be of the same type"):
        tf.debugging.assert_same_float_dtype([torch.tensor(1.0), torch.tensor(1.0, dtype=torch.float64)])
    with pytest.raises(TypeError, match='"proper" iterable'):
        tf.debugging.assert_proper_iterable("abc")
    assert tf.debugging.is_numeric_tensor(torch.tensor(1.0)) and not tf.debugging.is_numeric_tensor(torch.tensor(True))


def test_check_numerics_and_assert():
    values = torch.tensor([1.0, 2.0])
    assert tf.debugging.check_numerics(values, "ok") is values
    with pytest.raises(InvalidArgumentError, match="bad values : Tensor had NaN values"):
        tf.debugging.check_numerics(torch.tensor([1.0, float("nan")]), "bad values")
    with pytest.raises(InvalidArgumentError, match="bad values : Tensor had Inf values"):
        tf.debugging.assert_all_finite(torch.tensor([1.0, float("inf")]), "bad values")
    with pytest.raises(InvalidArgumentError, match="Expected 'False' to be true. Summarized data: 1, 2\nb'text'"):
        tf.debugging.Assert(False, [torch.tensor([1, 2]), "text"])
    tf.debugging.Assert(torch.tensor(True), ["never shown"])


def test_enable_check_numerics_catches_the_op_that_makes_nan():
    tf.debugging.enable_check_numerics()
    try:
        torch.log(torch.tensor([1.0, 2.0]))  # finite: fine
        with pytest.raises(InvalidArgumentError, match='eagerly-executing op "log"') as error:
            torch.log(torch.tensor([0.0, -1.0]))
        assert "# of -Inf elements: 1" in str(error.value) and "# of NaN elements: 1" in str(error.value)
    finally:
        tf.debugging.disable_check_numerics()
    assert torch.isnan(torch.log(torch.tensor(-1.0)))  # off again


def test_log_device_placement_prints_each_op(capfd):
    assert tf.debugging.get_log_device_placement() is False
    tf.debugging.set_log_device_placement(True)
    try:
        torch.ones(2) + 1
    finally:
        tf.debugging.set_log_device_placement(False)
    assert "Executing op add in device cpu" in capfd.readouterr().err
    assert tf.debugging.get_log_device_placement() is False
    assert tf.debugging.is_traceback_filtering_enabled() is True
    tf.debugging.disable_traceback_filtering()
    assert tf.debugging.is_traceback_filtering_enabled() is False
    tf.debugging.enable_traceback_filtering()
