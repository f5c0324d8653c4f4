"""`tf.math`: element-wise arithmetic, comparisons, reductions, segment sums and friends with TF 2.21's
eager dtype rules (no promotion, int-only/float-only ops refuse the others), on torch tensors.

By concern: _elementwise (arithmetic, unary functions, clipping), _compare (comparisons, logic,
NaN/inf tests), _reduce (reductions, arg-extremes, scans, top_k), _segment (segment sums, bincount),
_segment_more (segment max/min/mean/prod), _special (erf/gamma/Bessel families, softmax, xlogy, complex
parts) and _misc (polyval, confusion_matrix, in_top_k, approx_*_k ...); this module re-exports them
(tf.math is this module)."""
from __future__ import annotations

from torchstrategy.math._elementwise import (  # noqa: F401
    abs, add, add_n, ceil, clip_by_value, cos, divide, divide_no_nan, exp, floor, floordiv, floormod, l2_normalize,
    log, log1p, maximum, minimum, mod, multiply, negative, pow, reciprocal, round, rsqrt, sigmoid, sign, sin,
    softplus, sqrt, square, squared_difference, subtract, tanh, truediv,
)
from torchstrategy.math._compare import (  # noqa: F401
    equal, greater, greater_equal, is_finite, is_inf, is_nan, less, less_equal, logical_and, logical_not,
    logical_or, logical_xor, not_equal,
)
from torchstrategy.math._reduce import (  # noqa: F401
    TopKV2, argmax, argmin, count_nonzero, cumprod, cumsum, reduce_all, reduce_any, reduce_logsumexp, reduce_max,
    reduce_mean, reduce_min, reduce_prod, reduce_std, reduce_sum, reduce_variance, top_k,
)
from torchstrategy.math._segment import (  # noqa: F401
    bincount, segment_sum, unsorted_segment_sum,
)
from torchstrategy.math._trig import (  # noqa: F401
    acos, acosh, asin, asinh, atan, atan2, atanh, complex, cosh, realdiv, saturate_cast, scalar_mul, sinh, tan,
    truncatediv, truncatemod,
)
from torchstrategy.math import special  # noqa: F401,E402  (tf.math.special)
from torchstrategy.math._special import *  # noqa: F401,F403,E402
from torchstrategy.math._special import __all__ as _special_names  # noqa: E402
from torchstrategy.math._segment_more import *  # noqa: F401,F403,E402
from torchstrategy.math._segment_more import __all__ as _segment_names  # noqa: E402
from torchstrategy.math._misc import *  # noqa: F401,F403,E402
from torchstrategy.math._misc import __all__ as _misc_names  # noqa: E402
from torchstrategy.ragged import elementwise as _ragged_elementwise  # noqa: E402

# The element-wise ops take RaggedTensors too (applied to their flat_values), as TF dispatches them.
for _name in ("add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "mod", "pow", "negative",
              "abs", "sign", "square", "squared_difference", "sqrt", "rsqrt", "exp", "log", "log1p", "sigmoid",
              "tanh", "softplus", "reciprocal", "sin", "cos", "floor", "ceil", "round", "maximum", "minimum",
              "clip_by_value", "divide_no_nan", "equal", "not_equal", "greater", "greater_equal", "less",
              "less_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "is_nan", "is_inf",
              "is_finite"):
    globals()[_name] = _ragged_elementwise(globals()[_name])

__all__ = [
    "add", "subtract", "multiply", "divide", "truediv", "floordiv", "mod", "floormod", "pow", "negative", "abs",
    "sign", "sqrt", "rsqrt", "square", "exp", "log", "log1p", "sigmoid", "tanh", "softplus", "maximum", "minimum",
    "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and", "logical_or",
    "logical_not", "logical_xor", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
    "reduce_any", "reduce_all", "reduce_logsumexp", "reduce_std", "reduce_variance", "argmax", "argmin", "cumsum",
    "cumprod", "top_k", "TopKV2", "round", "floor", "ceil", "clip_by_value", "divide_no_nan", "l2_normalize",
    "add_n", "count_nonzero", "is_nan", "is_inf", "is_finite", "segment_sum", "unsorted_segment_sum", "bincount",
    "reciprocal", "squared_difference", "sin", "cos",
]
__all__ += ["tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "realdiv",
            "truncatediv", "truncatemod", "complex", "scalar_mul", "saturate_cast"]
__all__ += list(_special_names) + list(_segment_names) + list(_misc_names)
