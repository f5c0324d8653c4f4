"""torchstrategy: tf.distribute.Strategy and the Keras model API on PyTorch.
`import torchstrategy as tf` gives the tf-shaped namespace; submodules load on first use."""
from __future__ import annotations

from torchstrategy._lazy import lazy_namespace

__version__ = "0.1.0"

_OPS = ["constant", "convert_to_tensor", "cast", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
        "argmax", "reshape", "shape", "zeros", "ones", "stack", "concat", "equal", "expand_dims", "squeeze",
        "one_hot", "range", "print", "Tensor", "newaxis"]
_DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool",
           "as_dtype"]

__getattr__, __dir__ = lazy_namespace(__name__, {
    "keras": "torchstrategy.keras",
    "data": "torchstrategy.data",
    "distribute": "torchstrategy.distribute",
    "config": "torchstrategy.config",
    "tpu": "torchstrategy.tpu",
    "train": "torchstrategy.train",
    "io": "torchstrategy.io",
    "nn": "torchstrategy.nn",
    "random": "torchstrategy.random",
    "nest": "torchstrategy.nest",
    "profiler": "torchstrategy.profiler",
    "GradientTape": "torchstrategy.tape:GradientTape",
    "function": "torchstrategy.tape:function",
    "recompute_grad": "torchstrategy.recompute:recompute_grad",
    "TensorSpec": "torchstrategy.data:TensorSpec",
    "TensorShape": "torchstrategy.data:TensorShape",
    "dtypes": "torchstrategy.dtypes",
    "Variable": "torchstrategy.variables:Variable",
    **{name: f"torchstrategy.ops:{name}" for name in _OPS},
    **{name: f"torchstrategy.dtypes:{name}" for name in _DTYPES},
})
