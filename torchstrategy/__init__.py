"""torchstrategy: tf.distribute.Strategy and the Keras model API on PyTorch.
`import torchstrategy as tf` gives the tf-shaped namespace; submodules load on first use."""
from __future__ import annotations

from torchstrategy import _context
from torchstrategy._machinery.lazy import lazy_namespace
from torchstrategy.version import VERSION as __version__  # TF's: scripts compare tf.__version__ with '2.x'


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

_FRAMEWORK = ["device", "name_scope", "init_scope", "get_current_name_scope", "executing_eagerly", "inside_function",
              "get_logger", "no_op", "group", "tuple", "control_dependencies", "timestamp", "is_tensor",
              "is_symbolic_tensor", "get_static_value"]
_CONTROL_FLOW = ["cond", "case", "switch_case", "while_loop", "map_fn", "vectorized_map", "scan", "foldl", "foldr"]
_SCATTER = ["tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max",
            "scatter_nd", "dynamic_partition", "dynamic_stitch", "unique", "unique_with_counts", "searchsorted",
            "histogram_fixed_width", "histogram_fixed_width_bins", "sequence_mask"]
_MANIP = ["repeat", "roll", "meshgrid", "tensordot", "ensure_shape", "broadcast_static_shape", "broadcast_dynamic_shape",
          "bitcast", "slice", "reverse_sequence", "unravel_index", "identity_n", "shape_n", "parallel_stack",
          "guarantee_const"]
_INIT = ["random_normal_initializer", "random_uniform_initializer", "zeros_initializer", "ones_initializer",
         "constant_initializer"]
_MATH_MORE = ["tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "realdiv",
              "truncatediv", "truncatemod", "complex", "scalar_mul", "saturate_cast"]
_GRAPH_COMPAT = ["Assert", "gradients", "hessians", "no_gradient", "UnconnectedGradients", "AggregationMethod"]
_DTYPES_MORE = ["uint16", "uint32", "uint64", "complex64", "complex128", "half", "double", "DType"]
_SLICING = ["strided_slice", "space_to_batch_nd", "space_to_batch", "batch_to_space", "required_space_to_batch_paddings"]

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
    "quantization": "torchstrategy.quantization",
    "autodiff": "torchstrategy.autodiff",
    "types": "torchstrategy.tf_types",
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
    "IndexedSlices": "torchstrategy.indexed_slices:IndexedSlices",
    "sets": "torchstrategy.sets",
    "lookup": "torchstrategy.lookup",
    "IndexedSlicesSpec": "torchstrategy.indexed_slices:IndexedSlicesSpec",
    "ragged": "torchstrategy.ragged",
    "RaggedTensor": "torchstrategy.ragged:RaggedTensor",
    "RaggedTensorSpec": "torchstrategy.ragged:RaggedTensorSpec",
    "version": "torchstrategy.version",
    "py_function": "torchstrategy.py_func:py_function",
    "numpy_function": "torchstrategy.py_func:numpy_function",
    "metrics": "torchstrategy.keras.metrics",
    "losses": "torchstrategy.keras.losses",
    "optimizers": "torchstrategy.keras.optimizers",
    "initializers": "torchstrategy.keras.initializers",
    "summary": "torchstrategy.summary",
    "audio": "torchstrategy.audio",
    "signal": "torchstrategy.signal",
    "debugging": "torchstrategy.debugging",
    "test": "torchstrategy.test",
    "compat": "torchstrategy.compat",
    **{name: f"torchstrategy.math:{name}" for name in _MATH},
    **{name: f"torchstrategy.array_ops:{name}" for name in _ARRAY},
    **{name: f"torchstrategy.ops:{name}" for name in _OPS},
    **{name: f"torchstrategy.dtypes:{name}" for name in _DTYPES},
    "VariableSynchronization": "torchstrategy.variables:VariableSynchronization",
    "VariableAggregation": "torchstrategy.variables:VariableAggregation",
    "Module": "torchstrategy.module:Module",
    "TensorArray": "torchstrategy.tensor_array:TensorArray",
    "autograph": "torchstrategy.autograph",
    "custom_gradient": "torchstrategy.custom_gradient:custom_gradient",
    "grad_pass_through": "torchstrategy.custom_gradient:grad_pass_through",
    "clip_by_norm": "torchstrategy.clip_ops:clip_by_norm",
    "clip_by_global_norm": "torchstrategy.clip_ops:clip_by_global_norm",
    **{name: f"torchstrategy.framework:{name}" for name in _FRAMEWORK},
    **{name: f"torchstrategy.control_flow:{name}" for name in _CONTROL_FLOW},
    **{name: f"torchstrategy.scatter_ops:{name}" for name in _SCATTER},
    **{name: f"torchstrategy.manip_ops:{name}" for name in _MANIP},
    **{name: f"torchstrategy.init_ops:{name}" for name in _INIT},
    **{name: f"torchstrategy.math:{name}" for name in _MATH_MORE},
    **{name: f"torchstrategy.graph_compat:{name}" for name in _GRAPH_COMPAT},
    "make_tensor_proto": "torchstrategy.io.tensor_proto_message:make_tensor_proto",
    "make_ndarray": "torchstrategy.io.tensor_proto_message:make_ndarray",
    "bitwise": "torchstrategy.bitwise",
    **{name: f"torchstrategy.slicing_ops:{name}" for name in _SLICING},
    "fingerprint": "torchstrategy.hash_ops:fingerprint",
    "DeviceSpec": "torchstrategy.framework:DeviceSpec",
    "approx_top_k": "torchstrategy.manip_ops:approx_top_k",
    "eig": "torchstrategy.linalg:eig",
    "eigvals": "torchstrategy.linalg:eigvals",
    "matrix_square_root": "torchstrategy.linalg:sqrtm",
    **{name: f"torchstrategy.dtypes:{name}" for name in _DTYPES_MORE},
    "as_string": "torchstrategy.strings:as_string",
    **{name: f"torchstrategy.dtypes:{name}" for name in ("qint8", "quint8", "qint32")},
    **{name: f"torchstrategy.debugging:{name}" for name in ("assert_equal", "assert_greater", "assert_less",
                                                           "assert_rank")},
    **{name: f"torchstrategy.fft_ops:{name}" for name in ("fftnd", "ifftnd", "rfftnd", "irfftnd")},
    "edit_distance": "torchstrategy.edit_distance:edit_distance",
    "extract_volume_patches": "torchstrategy.image.geometry:extract_volume_patches",
    **{name: f"torchstrategy.conv_ops:{name}" for name in ("conv", "conv2d_backprop_filter_v2",
                                                           "conv2d_backprop_input_v2")},
})
