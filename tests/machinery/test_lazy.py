"""The lazy namespace tables: submodules load on first use, reached modules learn which TF path they
stand for, and a missing name raises the manifest-aware AttributeError (never touching other libraries)."""
from __future__ import annotations

import sys
import types

import pytest

import torchstrategy as tf
from torchstrategy._machinery import lazy


def test_reached_namespaces_know_their_tf_paths():
    assert lazy.api_paths(tf) == ("tf",)
    assert "tf.nn" in lazy.api_paths(tf.nn)
    assert "keras.layers" in lazy.api_paths(tf.keras.layers)
    assert isinstance(tf.nn, lazy.ApiModule)


def test_a_module_of_another_library_is_never_marked():
    module = types.ModuleType("not_ours")
    lazy.mark_namespace(module, ("tf.whatever",))
    assert type(module) is types.ModuleType and not hasattr(module, "__tf_api__")


def test_lazy_table_imports_on_first_use_and_errors_otherwise():
    name = "torchstrategy._lazy_probe"
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        module.__getattr__, module.__dir__ = lazy.lazy_namespace(name, {"sqrt_fn": "math:sqrt"})
        module.__tf_api__ = ("tf.math",)
        assert module.sqrt_fn(9.0) == 3.0
        assert module.__dir__() == ["sqrt_fn"]
        with pytest.raises(AttributeError, match="tf.math.bessel_i0 is TensorFlow API"):
            module.__getattr__("bessel_i0")
        with pytest.raises(AttributeError, match="^module 'torchstrategy._lazy_probe' has no attribute 'nope'$"):
            module.__getattr__("nope")
    finally:
        del sys.modules[name]


def test_namespace_modules_pickle_by_name_inside_closures():
    """A closure sent to a parameter-server worker refers to `tf` and `tf.keras` (ApiModule instances)."""
    import pickle

    import cloudpickle

    import torchstrategy as tf

    def dataset_fn(context):
        return tf.keras, tf.data

    restored = cloudpickle.loads(cloudpickle.dumps(dataset_fn))
    assert restored(None) == (tf.keras, tf.data)
    assert pickle.loads(pickle.dumps(tf)) is tf and pickle.loads(pickle.dumps(tf.keras)) is tf.keras
