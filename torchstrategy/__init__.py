"""torchstrategy: tf.distribute.Strategy and the Keras model API on PyTorch.
`import torchstrategy as tf` gives the tf-shaped namespace; submodules load on first use."""
from __future__ import annotations

from torchstrategy import _context
from torchstrategy._machinery.lazy import lazy_namespace
from torchstrategy.version import TORCHSTRATEGY_VERSION as __version__


def _make_default_strategy() -> object:
    from torchstrategy.distribute.default import DefaultStrategy

    return DefaultStrategy()


_context.set_default_strategy_factory(_make_default_strategy)  # tf.distribute.get_strategy() outside any scope

_OPS = ["constant", "convert_to_tensor", "cast", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
        "argmax", "reshape", "shape", "zeros", "ones", "stack", "concat", "equal", "expand_dims", "squeeze",
        "one_hot", "range", "print", "Tensor", "newaxis"]
_MATH = ["add", "subtract", "multiply", "divide", "truediv", "pow", "negative", "abs", "sign", "sqrt", "square",
         "exp", "sigmoid", "tanh", "maximum", "minimum", "greater", "greater_equal", "less", "less_equal",
         "not_equal", "logical_and", "logical_or", "logical_not", "reduce_prod", "reduce_any", "reduce_all",
         "reduce_logsumexp", "argmin", "cumsum", "round", "floor", "clip_by_value", "add_n", "sin", "cos"]
_ARRAY = ["where", "fill", "zeros_like", "ones_like", "tile", "gather", "gather_nd", "transpose", "matmul",
          "einsum", "split", "unstack", "boolean_mask", "pad", "sort", "argsort", "size", "rank", "identity",
          "stop_gradient", "linspace", "eye", "reverse", "broadcast_to", "tensor_scatter_nd_update"]
_DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool",
           "as_dtype", "string"]

__getattr__, __dir__ = lazy_namespace(__name__, {
    "keras": "torchstrategy.keras",
    "data": "torchstrategy.data",
    "distribute": "torchstrategy.distribute",
    "config": "torchstrategy.config",
    "tpu": "torchstrategy.tpu",
    "train": "torchstrategy.train",
    "io": "torchstrategy.io",
    "image": "torchstrategy.image",
    "experimental": "torchstrategy._experimental",
    "nn": "torchstrategy.nn",
    "random": "torchstrategy.random",
    "nest": "torchstrategy.nest",
    "profiler": "torchstrategy.profiler",
    "saved_model": "torchstrategy.saved_model",
    "errors": "torchstrategy.errors",
    "GradientTape": "torchstrategy.tape:GradientTape",
    "function": "torchstrategy.tape:function",
    "recompute_grad": "torchstrategy.recompute:recompute_grad",
    "TensorSpec": "torchstrategy.data:TensorSpec",
    "TensorShape": "torchstrategy.data:TensorShape",
    "dtypes": "torchstrategy.dtypes",
    "Variable": "torchstrategy.variables:Variable",
    "math": "torchstrategy.math",
    "linalg": "torchstrategy.linalg",
    "norm": "torchstrategy.linalg:norm",
    "strings": "torchstrategy.strings",
    "sparse": "torchstrategy.sparse",
    "SparseTensor": "torchstrategy.sparse:SparseTensor",
    "ragged": "torchstrategy.ragged",
    "RaggedTensor": "torchstrategy.ragged:RaggedTensor",
    "RaggedTensorSpec": "torchstrategy.ragged:RaggedTensorSpec",
    "version": "torchstrategy.version",
    "py_function": "torchstrategy.py_func:py_function",
    "numpy_function": "torchstrategy.py_func:numpy_function",
    "metrics": "torchstrategy.keras.metrics",
    "losses": "torchstrategy.keras.losses",
    "optimizers": "torchstrategy.keras.optimizers",
    **{name: f"torchstrategy.math:{name}" for name in _MATH},
    **{name: f"torchstrategy.array_ops:{name}" for name in _ARRAY},
    **{name: f"torchstrategy.ops:{name}" for name in _OPS},
    **{name: f"torchstrategy.dtypes:{name}" for name in _DTYPES},
})
