"""`tf.keras.ops` (Keras 3's backend-neutral ops): NumPy-style math, shape and neural-net functions with
Keras 3's names, argument names and dtype rules, eager on torch tensors (NumPy arrays and numbers accepted).

Laid out as Keras's own keras.ops namespaces: _core (conversion, keras.ops.core), _creation, _elementwise,
_reductions and _shapes (keras.ops.numpy), _linalg (products and norms), _math (keras.ops.math) and _nn
(keras.ops.nn); this module only re-exports them."""
from __future__ import annotations

from torchstrategy.keras.ops._core import (  # noqa: F401
    cast, convert_to_numpy, convert_to_tensor, dtype, is_tensor, ndim, shape, size, slice, stop_gradient,
)
from torchstrategy.keras.ops._creation import (  # noqa: F401
    arange, array, copy, eye, full, full_like, identity, linspace, ones, ones_like, tri, zeros, zeros_like,
)
from torchstrategy.keras.ops._elementwise import (  # noqa: F401
    abs, absolute, add, arccos, arcsin, arctan, ceil, clip, cos, cosh, divide, divide_no_nan, equal, erf, exp,
    expm1, floor, floor_divide, greater, greater_equal, hard_silu, hard_swish, isclose, isfinite, isinf, isnan,
    less, less_equal, log, log10, log1p, log2, log_sigmoid, logical_and, logical_not, logical_or, logical_xor,
    maximum, minimum, mod, multiply, nan_to_num, negative, not_equal, power, reciprocal, relu6, round, rsqrt, selu,
    sigmoid, sign, silu, sin, sinh, softplus, softsign, sqrt, square, subtract, swish, tan, tanh, true_divide,
    trunc, where,
)
from torchstrategy.keras.ops._reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, average, count_nonzero, cumprod, cumsum, max, mean, median, min, prod,
    quantile, std, sum, var,
)
from torchstrategy.keras.ops._shapes import (  # noqa: F401
    append, argsort, broadcast_to, concatenate, diag, diagonal, expand_dims, flip, hstack, moveaxis, nonzero, pad,
    ravel, repeat, reshape, roll, sort, split, squeeze, stack, swapaxes, take, take_along_axis, tile, trace,
    transpose, tril, triu, unique, unstack, vstack,
)
from torchstrategy.keras.ops._linalg import (  # noqa: F401
    cross, dot, einsum, matmul, norm, outer, tensordot, vdot,
)
from torchstrategy.keras.ops._math import (  # noqa: F401
    in_top_k, logsumexp, top_k,
)
from torchstrategy.keras.ops._nn import (  # noqa: F401
    binary_crossentropy, categorical_crossentropy, elu, gelu, hard_sigmoid, leaky_relu, log_softmax, moments,
    multi_hot, normalize, one_hot, relu, softmax, sparse_categorical_crossentropy,
)
