"""tf.autograph and tf.autograph.experimental: accepted as in TF; functions run as written."""
from __future__ import annotations

import pytest

import torchstrategy as tf


def test_do_not_convert_both_spellings():
    @tf.autograph.experimental.do_not_convert
    def f(x):
        return x + 1

    @tf.autograph.experimental.do_not_convert()
    def g(x):
        return x * 2

    assert f(1) == 2 and g(3) == 6 and f.__name__ == "f"
    with pytest.raises(TypeError, match="decorates a function"):
        tf.autograph.experimental.do_not_convert(3)


def test_namespace_basics():
    def h(x):
        return x - 1

    assert tf.autograph.to_graph(h) is h and "return x - 1" in tf.autograph.to_code(h)
    tf.autograph.set_verbosity(0)
    tf.autograph.experimental.set_loop_options(maximum_iterations=3)
    assert tf.autograph.experimental.Feature.ALL.value == "ALL"
    with pytest.raises(ValueError, match="non-negative"):
        tf.autograph.set_verbosity(-1)
