"""The legacy `tf.keras.backend` functions (`K.mean`, `K.set_value`, `K.int_shape`, `K.binary_crossentropy`...)
that custom losses, metrics and callbacks call, with TF 2.21 / Keras 3.15 semantics, on torch tensors.

By concern: settings (floatx, epsilon, image data format, keras.config, keras.version), variables (values,
variables, static shapes), tensor_math (element-wise, reductions, dot), nn (activations, cross-entropies),
shapes (layout, switch), random, ctc, promotion (result_type) and recurrence (rnn, gradients); this module
re-exports them, and keras.backend re-exports `__all__`."""
from __future__ import annotations

from torchstrategy.keras._legacy_backend.settings import (  # noqa: F401
    backend, config, image_data_format, is_float_dtype, is_int_dtype, set_epsilon, set_floatx,
    set_image_data_format, standardize_dtype, version,
)
from torchstrategy.keras._legacy_backend.variables import (  # noqa: F401
    batch_get_value, batch_set_value, cast, cast_to_floatx, constant, count_params, dtype, eval, eye, get_value,
    int_shape, is_keras_tensor, is_sparse, moving_average_update, ndim, ones, ones_like, set_value, shape,
    stop_gradient, to_dense, update, update_add, update_sub, variable, zeros, zeros_like,
)
from torchstrategy.keras._legacy_backend.tensor_math import (  # noqa: F401
    abs, all, any, argmax, argmin, batch_dot, clip, cos, cumprod, cumsum, dot, equal, exp, greater, greater_equal,
    l2_normalize, less, less_equal, log, max, maximum, mean, min, minimum, not_equal, pow, prod, round, sign, sin,
    softplus, sqrt, square, std, sum, tanh, var,
)
from torchstrategy.keras._legacy_backend.nn import (  # noqa: F401
    bias_add, binary_crossentropy, binary_focal_crossentropy, categorical_crossentropy,
    categorical_focal_crossentropy, elu, hard_sigmoid, in_top_k, relu, sigmoid, softmax,
    softsign, sparse_categorical_crossentropy,
)
from torchstrategy.keras._legacy_backend.shapes import (  # noqa: F401
    arange, batch_flatten, concatenate, expand_dims, flatten, gather, one_hot, permute_dimensions, repeat,
    repeat_elements, reshape, reverse, squeeze, stack, switch, tile, transpose,
)
from torchstrategy.keras._legacy_backend.random import (  # noqa: F401
    dropout, random_bernoulli, random_normal, random_uniform, truncated_normal,
)
from torchstrategy.keras._legacy_backend.convolution import (  # noqa: F401
    batch_normalization, conv1d, conv2d, conv2d_transpose, conv3d, depthwise_conv2d, pool2d, pool3d,
    separable_conv2d,
)
from torchstrategy.keras._legacy_backend.graph import (  # noqa: F401
    foldl, foldr, get_uid, map_fn, name_scope, random_normal_variable, random_uniform_variable, resize_images,
    resize_volumes, spatial_2d_padding, spatial_3d_padding, temporal_padding,
)
from torchstrategy.keras._legacy_backend.ctc import (  # noqa: F401
    ctc_batch_cost, ctc_decode, ctc_label_dense_to_sparse,
)
from torchstrategy.keras._legacy_backend.promotion import result_type  # noqa: F401
from torchstrategy.keras._legacy_backend.recurrence import gradients, rnn  # noqa: F401

__all__ = [
    "abs", "all", "any", "arange", "argmax", "argmin", "batch_dot", "batch_flatten", "batch_get_value",
    "batch_set_value", "bias_add", "binary_crossentropy", "cast", "cast_to_floatx", "categorical_crossentropy",
    "clip", "concatenate", "constant", "cos", "count_params", "cumprod", "cumsum", "dot", "dropout", "dtype",
    "elu", "equal", "eval", "exp", "expand_dims", "eye", "flatten", "gather", "get_value", "greater",
    "greater_equal", "hard_sigmoid", "image_data_format", "in_top_k", "int_shape", "is_float_dtype",
    "is_int_dtype", "is_keras_tensor", "is_sparse", "l2_normalize", "less", "less_equal", "log", "max",
    "maximum", "mean", "min", "minimum", "moving_average_update", "ndim", "not_equal", "one_hot", "ones",
    "ones_like", "permute_dimensions", "pow", "prod", "random_bernoulli", "random_normal", "random_uniform",
    "relu", "repeat", "repeat_elements", "reshape", "reverse", "round", "set_epsilon", "set_floatx",
    "set_image_data_format", "set_value", "shape", "sigmoid", "sign", "sin", "softmax", "softplus", "softsign",
    "sparse_categorical_crossentropy", "sqrt", "square", "squeeze", "stack", "standardize_dtype", "std",
    "stop_gradient", "sum", "switch", "tanh", "tile", "to_dense", "transpose", "truncated_normal", "update",
    "update_add", "update_sub", "var", "variable", "zeros", "zeros_like", "backend", "foldl", "foldr", "get_uid",
    "map_fn", "name_scope", "random_normal_variable", "random_uniform_variable", "resize_images", "resize_volumes",
    "spatial_2d_padding", "spatial_3d_padding", "temporal_padding", "batch_normalization", "conv1d", "conv2d",
    "conv2d_transpose", "conv3d", "depthwise_conv2d", "pool2d", "pool3d", "separable_conv2d",
    "binary_focal_crossentropy", "categorical_focal_crossentropy", "ctc_batch_cost", "ctc_decode",
    "ctc_label_dense_to_sparse", "gradients", "result_type", "rnn",
]
