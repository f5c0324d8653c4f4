"""`tf.nn` normalisation and statistics on torch tensors: moments, weighted_moments, sufficient_statistics,
normalize_moments, batch_normalization, l2_normalize and local_response_normalization (lrn)."""
from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy._tensor_convert import to_tensor


def _axes(axes: Any, x: torch.Tensor, op: str) -> list:
    if axes is None:
        return list(range(x.dim()))
    values = [int(a) for a in (axes.tolist() if isinstance(axes, torch.Tensor) else
                               ([axes] if isinstance(axes, int) else axes))]
    for a in values:
        if not -x.dim() <= a < x.dim():
            raise ValueError(f"{op}: axis {a} is out of range for an input of rank {x.dim()}.")
    return values


def _floating(value: Any, op: str) -> torch.Tensor:
    x = to_tensor(value, op=op)
    if not x.is_floating_point():
        raise TypeError(f"{op}: needs a floating-point input, got {x.dtype}.")
    return x


def moments(x: Any, axes: Any, shift: Any = None, keepdims: bool = False,
            name: Optional[str] = None) -> tuple:
    """(mean, variance) over `axes`; float16/bfloat16 inputs are reduced in float32 (`shift` is unused, as in
    TF 2)."""
    t = _floating(x, "tf.nn.moments")
    dims = _axes(axes, t, "tf.nn.moments")
    y = t.float() if t.dtype in (torch.float16, torch.bfloat16) else t
    mean = y.mean(dim=dims, keepdim=True)
    variance = (y - mean.detach()).square().mean(dim=dims, keepdim=True)
    if not keepdims:
        mean, variance = mean.squeeze(dims), variance.squeeze(dims)
    return mean.to(t.dtype), variance.to(t.dtype)


def weighted_moments(x: Any, axes: Any, frequency_weights: Any, keepdims: bool = False,
                     name: Optional[str] = None) -> tuple:
    """(mean, variance) over `axes` with each element counted `frequency_weights` times (broadcast to x)."""
    t = _floating(x, "tf.nn.weighted_moments")
    dims = _axes(axes, t, "tf.nn.weighted_moments")
    w = to_tensor(frequency_weights, hint=t.dtype, op="tf.nn.weighted_moments").to(t.dtype)
    total = (w * t).sum(dim=dims, keepdim=True)
    weight_sum = torch.broadcast_to(w, torch.broadcast_shapes(w.shape, t.shape)).sum(dim=dims, keepdim=True)
    divisor = weight_sum.reciprocal()
    mean = total * divisor
    variance = (w * (t - mean).square()).sum(dim=dims, keepdim=True) * divisor
    if not keepdims:
        mean, variance = mean.squeeze(dims), variance.squeeze(dims)
    return mean, variance


def sufficient_statistics(x: Any, axes: Any, shift: Any = None, keepdims: bool = False,
                          name: Optional[str] = None) -> tuple:
    """(count, sum of x - shift, sum of (x - shift)^2, shift) over `axes`; shift is None when not given."""
    t = _floating(x, "tf.nn.sufficient_statistics")
    dims = _axes(axes, t, "tf.nn.sufficient_statistics")
    count = 1
    for d in dims:
        count *= t.shape[d]
    counts = torch.tensor(float(count), dtype=t.dtype, device=t.device)
    if shift is not None:
        shift = to_tensor(shift, hint=t.dtype, op="tf.nn.sufficient_statistics").to(t.dtype)
        centred = t - shift
    else:
        centred = t
    mean_ss = centred.sum(dim=dims, keepdim=keepdims)
    var_ss = centred.square().sum(dim=dims, keepdim=keepdims)
    return counts, mean_ss, var_ss, shift


def normalize_moments(counts: Any, mean_ss: Any, variance_ss: Any, shift: Any,
                      name: Optional[str] = None) -> tuple:
    """(mean, variance) from sufficient_statistics' sums."""
    m = to_tensor(mean_ss, op="tf.nn.normalize_moments")
    v = to_tensor(variance_ss, hint=m.dtype, op="tf.nn.normalize_moments")
    divisor = to_tensor(counts, hint=m.dtype, op="tf.nn.normalize_moments").to(m.dtype).reciprocal()
    shifted_mean = m * divisor
    mean = shifted_mean if shift is None else shifted_mean + to_tensor(shift, hint=m.dtype).to(m.dtype)
    variance = v * divisor - shifted_mean.square()
    return mean, variance


def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any, variance_epsilon: float,
                        name: Optional[str] = None) -> torch.Tensor:
    """scale * (x - mean) / sqrt(variance + variance_epsilon) + offset (offset and scale may be None)."""
    t = _floating(x, "tf.nn.batch_normalization")

    def conv(value: Any) -> torch.Tensor:
        return to_tensor(value, hint=t.dtype, op="tf.nn.batch_normalization").to(t.dtype)

    inv = torch.rsqrt(conv(variance) + variance_epsilon)
    if scale is not None:
        inv = inv * conv(scale)
    shift = -conv(mean) * inv
    if offset is not None:
        shift = shift + conv(offset)
    return t * inv + shift


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: Optional[str] = None,
                 dim: Any = None) -> torch.Tensor:
    """x / sqrt(max(sum(x^2, axis), epsilon)); `dim` is TF's deprecated name for axis."""
    if axis is not None and dim is not None:
        raise ValueError("tf.nn.l2_normalize: give axis or its deprecated alias dim, not both.")
    t = _floating(x, "tf.nn.l2_normalize")
    dims = _axes(dim if axis is None else axis, t, "tf.nn.l2_normalize")
    square_sum = t.square().sum(dim=dims, keepdim=True)
    return t * torch.rsqrt(torch.clamp(square_sum, min=epsilon))


def local_response_normalization(input: Any, depth_radius: int = 5, bias: float = 1, alpha: float = 1,  # noqa: A002
                                 beta: float = 0.5, name: Optional[str] = None) -> torch.Tensor:
    """input / (bias + alpha * sum of squares over depth +- depth_radius) ** beta, on a 4-D NHWC input."""
    t = _floating(input, "tf.nn.local_response_normalization")
    if t.dim() != 4:
        raise ValueError(f"tf.nn.local_response_normalization: input must be 4-D (NHWC), got shape "
                         f"{tuple(t.shape)}.")
    r = int(depth_radius)
    squares = F.pad(t.square(), [r, r])
    window = squares.unfold(-1, 2 * r + 1, 1).sum(-1)
    return t / (bias + alpha * window) ** beta


lrn = local_response_normalization


def batch_norm_with_global_normalization(input: Any, mean: Any, variance: Any, beta: Any, gamma: Any,  # noqa: A002
                                         variance_epsilon: float, scale_after_normalization: bool,
                                         name: Optional[str] = None) -> torch.Tensor:
    """batch_normalization with offset beta and, when scale_after_normalization, scale gamma."""
    return batch_normalization(input, mean, variance, beta, gamma if scale_after_normalization else None,
                               variance_epsilon)
