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
from torchstrategy.keras.ops._more_elementwise import (  # noqa: F401
    allclose, angle, arccosh, arcsinh, arctan2, arctanh, bartlett, bitwise_and, bitwise_invert, bitwise_left_shift,
    bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor, blackman, cbrt, conj, conjugate, deg2rad, erfc,
    erfinv, exp2, fabs, fmax, fmin, fmod, gcd, hamming, hanning, heaviside, hypot, i0, imag, isin, isneginf,
    isposinf, isreal, kaiser, lcm, ldexp, left_shift, logaddexp, logaddexp2, nextafter, rad2deg, real, right_shift,
    saturate_cast, signbit, sinc, view, view_as_complex, view_as_real,
)
from torchstrategy.keras.ops._more_numpy import (  # noqa: F401
    argpartition, array_split, bincount, corrcoef, correlate, diagflat, diff, digitize, dsplit, dstack, empty,
    empty_like, fliplr, flipud, geomspace, histogram, hsplit, inner, kron, logspace, meshgrid, nanargmax, nanargmin,
    nancumprod, nancumsum, nanmax, nanmean, nanmedian, nanmin, nanpercentile, nanprod, nanquantile, nanstd, nansum,
    nanvar, percentile, ptp, rot90, searchsorted, select, trapezoid, unravel_index, vander, vsplit,
)
from torchstrategy.keras.ops._more_numpy import cdist, rearrange  # noqa: F401
from torchstrategy.keras.ops._more_nn import (  # noqa: F401
    adaptive_average_pool, adaptive_max_pool, average_pool, batch_normalization, celu, conv, conv_transpose,
    ctc_decode, ctc_loss, depth_to_space, depthwise_conv, dot_product_attention, fold, glu, hard_shrink, hard_tanh,
    layer_normalization, max_pool, polar, psnr, rms_normalization, separable_conv, soft_shrink, space_to_depth,
    sparse_plus, sparse_sigmoid, sparsemax, squareplus, tanh_shrink, threshold, unfold,
)
from torchstrategy.keras.ops._more_linalg import (  # noqa: F401
    cholesky, cholesky_inverse, det, eig, eigh, inv, logdet, lstsq, lu_factor, matrix_rank, pinv, qr, slogdet, solve,
    solve_triangular, svd,
)
from torchstrategy.keras.ops._more_math import (  # noqa: F401
    extract_sequences, fft, fft2, get_item, ifft2, irfft, istft, rfft, scatter, scatter_update, segment_max,
    segment_min, segment_prod, segment_sum, slice_update, stft,
)
from torchstrategy.keras.ops._control import (  # noqa: F401
    associative_scan, cond, custom_gradient, fori_loop, jvp, map, scan, switch, vectorize, vectorized_map,
    while_loop,
)
from torchstrategy.keras.ops._symbolic import wrap_namespace as _wrap_namespace  # noqa: E402

_wrap_namespace(globals())  # on KerasTensors every op records a graph step (keras/operation.py), as in Keras 3

from torchstrategy.keras.ops import image  # noqa: F401,E402  (keras.ops.image)

_wrap_namespace(vars(image), "image.")
from torchstrategy.keras.ops import linalg, nn, numpy  # noqa: F401,E402  (keras.ops.linalg / nn / numpy)
