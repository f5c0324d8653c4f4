"""tf.errors: TF's classes and codes, and the places torchstrategy raises them as TF does."""
from __future__ import annotations

import pickle

import pytest


def test_classes_codes_and_fields_follow_tensorflow():
    import torchstrategy as tf

    # TF 2.21: NotFoundError(None, None, 'msg') -> str 'msg', .message 'msg', .error_code 5, .op None
    error = tf.errors.NotFoundError(None, None, "msg")
    assert (str(error), error.message, error.error_code, error.op, error.node_def) == ("msg", "msg", 5, None, None)
    assert isinstance(error, tf.errors.OpError)
    codes = {name: getattr(tf.errors, name) for name in ("OK", "CANCELLED", "INVALID_ARGUMENT", "NOT_FOUND",
                                                         "OUT_OF_RANGE", "UNAVAILABLE", "DATA_LOSS")}
    assert codes == {"OK": 0, "CANCELLED": 1, "INVALID_ARGUMENT": 3, "NOT_FOUND": 5, "OUT_OF_RANGE": 11,
                     "UNAVAILABLE": 14, "DATA_LOSS": 15}
    assert tf.errors.OutOfRangeError(None, None, "end").error_code == tf.errors.OUT_OF_RANGE
    again = pickle.loads(pickle.dumps(tf.errors.InvalidArgumentError(None, "op", "bad")))
    assert (type(again), again.message, again.op) == (tf.errors.InvalidArgumentError, "bad", "op")
    assert tf.io.DataLossError is tf.errors.DataLossError and tf.io.InvalidArgumentError is tf.errors.InvalidArgumentError


def test_iterators_raise_out_of_range_past_the_end():
    import torchstrategy as tf

    # TF 2.21: iterator.get_next() past the end raises OutOfRangeError; next(iterator) raises StopIteration
    iterator = iter(tf.data.Dataset.range(1))
    assert int(iterator.get_next()) == 0
    with pytest.raises(tf.errors.OutOfRangeError):
        iterator.get_next()
    with pytest.raises(StopIteration):
        next(iter(tf.data.Dataset.range(0)))
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    distributed = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.range(2).batch(2)))
    distributed.get_next()
    with pytest.raises(tf.errors.OutOfRangeError):
        distributed.get_next()


def test_constructors_take_tfs_arguments():
    import torchstrategy as tf

    # TF 2.21: OpError(node_def, op, message, error_code, *args); XError(node_def, op, message, *args)
    error = tf.errors.OpError(None, "MatMul", "shapes differ", tf.errors.INVALID_ARGUMENT)
    assert (error.op, error.message, error.error_code) == ("MatMul", "shapes differ", 3)
    with_payloads = tf.errors.AbortedError(None, None, "retry", {"key": b"value"})
    assert with_payloads.experimental_payloads == {"key": b"value"} and with_payloads.error_code == tf.errors.ABORTED
    again = pickle.loads(pickle.dumps(with_payloads))
    assert (type(again), again.message, again.experimental_payloads) == (tf.errors.AbortedError, "retry",
                                                                          {"key": b"value"})
    with pytest.raises(TypeError):
        tf.errors.NotFoundError("only a message")  # TF needs node_def, op and message
    with pytest.raises(TypeError, match="dict of payloads"):
        tf.errors.NotFoundError(None, None, "m", "not a dict")
    assert isinstance(tf.errors.NotFoundError(None, None, "m"), FileNotFoundError)  # plain `except OSError` works
