"""tf.math's remaining reductions and checks: polyval, cumulative_logsumexp, reduce_euclidean_norm,
confusion_matrix, in_top_k, invert_permutation, the monotonicity tests, zero_fraction, accumulate_n, approx_*_k
and sobol_sample."""
from __future__ import annotations

import builtins
from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import DTypeError, dims, match_dtypes, require, to_tensor
from torchstrategy.dtypes import as_dtype

__all__ = ["sobol_sample", "polyval", "cumulative_logsumexp", "reduce_euclidean_norm", "confusion_matrix", "in_top_k",
           "invert_permutation", "is_non_decreasing", "is_strictly_increasing", "zero_fraction", "accumulate_n",
           "approx_max_k", "approx_min_k"]


def polyval(coeffs: Any, x: Any, name: Optional[str] = None) -> torch.Tensor:
    """coeffs[0] * x**(n-1) + ... + coeffs[n-1] by Horner's rule; `coeffs` is a list (empty: zeros like x)."""
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError("tf.math.polyval: coeffs must be a list of tensors (highest power first).")
    tensor = to_tensor(x, op="tf.math.polyval")
    if not coeffs:
        return torch.zeros_like(tensor)
    terms = match_dtypes([tensor] + list(coeffs), "tf.math.polyval")
    out = terms[1]
    for term in terms[2:]:
        out = out * terms[0] + term
    return out + torch.zeros_like(terms[0])  # a lone constant term still takes x's shape


def cumulative_logsumexp(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
                         name: Optional[str] = None) -> torch.Tensor:
    """log(cumsum(exp(x))) along `axis` without overflow; `exclusive` starts from -inf (log 0), `reverse` runs
    from the end (float inputs only)."""
    tensor = require(to_tensor(x, op="tf.math.cumulative_logsumexp"), "real", "tf.math.cumulative_logsumexp")
    dim = int(axis)
    if tensor.dim() == 0 or not -tensor.dim() <= dim < tensor.dim():
        raise ValueError(f"tf.math.cumulative_logsumexp: axis {dim} is out of range for shape "
                         f"{tuple(tensor.shape)}.")
    if reverse:
        tensor = tensor.flip(dim)
    if exclusive:
        pad_shape = list(tensor.shape)
        pad_shape[dim] = 1
        start = torch.full(pad_shape, float("-inf"), dtype=tensor.dtype, device=tensor.device)
        tensor = torch.cat([start, tensor.narrow(dim, 0, tensor.shape[dim] - 1)], dim)
    out = torch.logcumsumexp(tensor, dim)
    return out.flip(dim) if reverse else out


def reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                          name: Optional[str] = None) -> torch.Tensor:
    """sqrt(sum(x ** 2)) over `axis` (all when None), keeping the dtype (an int norm is truncated, as TF)."""
    tensor = require(to_tensor(input_tensor, op="tf.math.reduce_euclidean_norm"), "numeric",
                     "tf.math.reduce_euclidean_norm")
    axes = dims(axis, tensor.dim())
    if axes is None:
        axes = tuple(builtins.range(tensor.dim()))
    work = tensor if (tensor.is_floating_point() or tensor.is_complex()) else tensor.double()
    squares = (work * work.conj()).real if work.is_complex() else work * work
    total = squares.sum(dim=axes, keepdim=bool(keepdims)) if axes else squares
    out = torch.sqrt(total)
    return out.to(tensor.dtype)


def confusion_matrix(labels: Any, predictions: Any, num_classes: Any = None, weights: Any = None,
                     dtype: Any = torch.int32, name: Optional[str] = None) -> torch.Tensor:
    """The [num_classes, num_classes] matrix counting (label, prediction) pairs (rows: labels), weighted by
    `weights`; num_classes defaults to max(labels, predictions) + 1.

    >>> confusion_matrix([1, 2, 4], [2, 2, 4]).tolist()[1]
    [0, 0, 1, 0, 0]
    """
    op = "tf.math.confusion_matrix"
    truth = to_tensor(labels, op=op).reshape(-1)
    guess = to_tensor(predictions, op=op).reshape(-1)
    for what, tensor in (("labels", truth), ("predictions", guess)):
        if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool:
            raise TypeError(f"{op}: {what} must be integer class ids, got {tensor.dtype}.")
        if tensor.numel() and int(tensor.min()) < 0:
            raise ValueError(f"{op}: {what} must be non-negative, got {int(tensor.min())}.")
    if truth.numel() != guess.numel():
        raise ValueError(f"{op}: labels ({truth.numel()}) and predictions ({guess.numel()}) differ in size.")
    if num_classes is None:
        count = builtins.max(int(truth.max()) if truth.numel() else -1, int(guess.max()) if guess.numel() else -1) + 1
    else:
        count = int(num_classes)
        top = builtins.max(int(truth.max()) if truth.numel() else -1, int(guess.max()) if guess.numel() else -1)
        if top >= count:
            raise ValueError(f"{op}: class id {top} is out of range for num_classes={count}.")
    out_dtype = as_dtype(dtype)
    values = torch.ones(truth.numel(), dtype=out_dtype) if weights is None else \
        to_tensor(weights, op=op).reshape(-1).to(out_dtype)
    if values.numel() != truth.numel():
        raise ValueError(f"{op}: weights need one entry per label ({truth.numel()}), got {values.numel()}.")
    flat = truth.to(torch.int64) * count + guess.to(torch.int64)
    out = torch.zeros(count * count, dtype=out_dtype, device=values.device)
    return out.index_add_(0, flat.to(values.device), values).reshape(count, count)


def in_top_k(targets: Any, predictions: Any, k: Any, name: Optional[str] = None) -> torch.Tensor:
    """Whether each row's target class is among its k highest predictions; classes tied with the k-th all count,
    and a non-finite target prediction gives False (as TF). Note tf.math.in_top_k takes targets first."""
    op = "tf.math.in_top_k"
    scores = require(to_tensor(predictions, op=op), "real", op)
    target = to_tensor(targets, op=op)
    if scores.dim() != 2 or target.dim() != 1 or target.shape[0] != scores.shape[0]:
        raise ValueError(f"{op}: predictions must be [batch, classes] and targets [batch]; got "
                         f"{tuple(scores.shape)} and {tuple(target.shape)}.")
    if target.is_floating_point() or target.dtype == torch.bool:
        raise TypeError(f"{op}: targets must be int32 or int64 class ids, got {target.dtype}.")
    valid = (target >= 0) & (target < scores.shape[1])
    safe = torch.where(valid, target, torch.zeros_like(target)).to(torch.int64).to(scores.device)
    own = scores.gather(1, safe.unsqueeze(1))
    better = (scores > own).sum(1)
    return (better < int(k)) & torch.isfinite(own.squeeze(1)) & valid.to(scores.device)


def invert_permutation(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """y with y[x[i]] = i for a 1-D int32/int64 permutation x of 0..n-1."""
    perm = to_tensor(x, op="tf.math.invert_permutation")
    if perm.dtype not in (torch.int32, torch.int64) or perm.dim() != 1:
        raise ValueError(f"tf.math.invert_permutation needs a 1-D int32 or int64 tensor, got {perm.dtype} of "
                         f"shape {tuple(perm.shape)}.")
    n = perm.numel()
    if n and not torch.equal(torch.sort(perm.to(torch.int64)).values, torch.arange(n, device=perm.device)):
        raise ValueError(f"tf.math.invert_permutation: {perm.tolist()} is not a permutation of 0..{n - 1}.")
    out = torch.empty_like(perm)
    out[perm.to(torch.int64)] = torch.arange(n, dtype=perm.dtype, device=perm.device)
    return out


def _monotone(x: Any, op: str, strict: bool) -> torch.Tensor:
    flat = require(to_tensor(x, op=op), "numeric", op).reshape(-1)
    if flat.is_complex():
        raise DTypeError(f"{op} does not take complex tensors (they have no order).")
    step = flat[1:] > flat[:-1] if strict else flat[1:] >= flat[:-1]
    return step.all()


def is_non_decreasing(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """A scalar bool: whether x, flattened, never decreases (True for fewer than two entries)."""
    return _monotone(x, "tf.math.is_non_decreasing", strict=False)


def is_strictly_increasing(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """A scalar bool: whether x, flattened, always increases (True for fewer than two entries)."""
    return _monotone(x, "tf.math.is_strictly_increasing", strict=True)


def zero_fraction(value: Any, name: Optional[str] = None) -> torch.Tensor:
    """The fraction of entries of `value` equal to zero, a float32 scalar (NaN for an empty tensor)."""
    tensor = to_tensor(value, op="tf.math.zero_fraction")
    zeros = (tensor == 0).sum().to(torch.float32)
    return zeros / torch.tensor(float(tensor.numel()), dtype=torch.float32, device=zeros.device)


def accumulate_n(inputs: Any, shape: Any = None, tensor_dtype: Any = None, name: Optional[str] = None
                 ) -> torch.Tensor:
    """The element-wise sum of a list of same-shape, same-dtype tensors (`add_n`), checking the optional
    `shape` and `tensor_dtype` against them."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("tf.math.accumulate_n needs a non-empty list of tensors.")
    tensors = match_dtypes(list(inputs), "tf.math.accumulate_n")
    shapes = {tuple(tensor.shape) for tensor in tensors}
    if len(shapes) > 1:
        raise ValueError(f"tf.math.accumulate_n: all inputs need one shape, got {sorted(shapes)}.")
    if shape is not None and tuple(int(d) for d in shape) != tuple(tensors[0].shape):
        raise ValueError(f"tf.math.accumulate_n: shape {tuple(shape)} does not match the inputs' "
                         f"{tuple(tensors[0].shape)}.")
    if tensor_dtype is not None and as_dtype(tensor_dtype) != tensors[0].dtype:
        raise TypeError(f"tf.math.accumulate_n: tensor_dtype {tensor_dtype} does not match the inputs' "
                        f"{tensors[0].dtype}.")
    total = tensors[0].clone()
    for tensor in tensors[1:]:
        total = total + tensor
    return total


def _approx_k(operand: Any, k: int, dim: int, aggregate: bool, largest: bool, op: str) -> tuple:
    tensor = to_tensor(operand, op=op)
    if tensor.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise DTypeError(f"{op} takes float16, bfloat16 or float32 operands (TF's ApproxTopK), got {tensor.dtype}; "
                         "cast it first or use tf.math.top_k.")
    if tensor.dim() == 0 or not -tensor.dim() <= int(dim) < tensor.dim():
        raise ValueError(f"{op}: reduction_dimension {dim} is out of range for shape {tuple(tensor.shape)}.")
    size = tensor.shape[int(dim)]
    if not 0 <= int(k) <= size:
        raise ValueError(f"{op}: k={k} must be in [0, {size}].")
    if not aggregate:
        raise NotImplementedError(f"{op}(aggregate_to_topk=False) (TPU partial reduction) is not supported; "
                                  "leave it True.")
    order = torch.sort(tensor, dim=int(dim), descending=largest, stable=True).indices.narrow(int(dim), 0, int(k))
    return torch.gather(tensor, int(dim), order), order.to(torch.int32)


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 name: Optional[str] = None) -> tuple:
    """(values, int32 indices) of the k largest entries along `reduction_dimension`. This computes the exact
    top-k: TF only promises a recall of at least `recall_target`, and exact results (recall 1) meet any target
    (TF on CPU is exact too). Ties keep the lower index first."""
    return _approx_k(operand, k, reduction_dimension, aggregate_to_topk, True, "tf.math.approx_max_k")


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 name: Optional[str] = None) -> tuple:
    """(values, int32 indices) of the k smallest entries along `reduction_dimension`, computed exactly (exact
    results meet any `recall_target`, which TF treats as a lower bound on recall)."""
    return _approx_k(operand, k, reduction_dimension, aggregate_to_topk, False, "tf.math.approx_min_k")


def sobol_sample(dim: int, num_results: int, skip: int = 0, dtype: Any = torch.float32,
                 name: Optional[str] = None) -> torch.Tensor:
    """[num_results, dim] points of the (unscrambled) Sobol sequence, TF's numbers: TF's sequence leaves out the
    all-zero first point, and `skip` drops that many more."""
    out = as_dtype(dtype)
    if out not in (torch.float32, torch.float64):
        raise ValueError(f"tf.math.sobol_sample: dtype must be float32 or float64, got {dtype!r}.")
    if not 1 <= int(dim) <= 1111 or int(num_results) < 0 or int(skip) < 0:
        raise ValueError(f"tf.math.sobol_sample: need 1 <= dim <= 1111 (TF's limit), num_results >= 0 and skip >= 0; "
                         f"got {dim}, {num_results}, {skip}.")
    engine = torch.quasirandom.SobolEngine(int(dim), scramble=False)
    engine.fast_forward(int(skip) + 1)
    return engine.draw(int(num_results), dtype=torch.float64).to(out)
