"""tf.sparse's conversions and structure ops on SparseTensors: to_dense/from_dense, reorder, reshape, concat,
slice, split, expand_dims, transpose, retain, reset_shape, fill_empty_rows, eye, mask, to_indicator, map_values."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import int_list, to_tensor
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.indexed_slices import IndexedSlices
from torchstrategy.sparse_tensor import (SparseTensor, as_sparse, concat_values, default_fill, is_string_values,
                                         make, take_values)

__all__ = ["to_dense", "from_dense", "reorder", "reshape", "concat", "slice", "split", "expand_dims", "transpose",
           "retain", "reset_shape", "fill_empty_rows", "eye", "mask", "to_indicator", "map_values"]


def linear_positions(indices: torch.Tensor, shape: list) -> torch.Tensor:
    """Row-major linear positions of the coordinates."""
    strides = [int(np.prod(shape[i + 1:])) for i in range(len(shape))]
    return (indices * torch.tensor(strides, dtype=torch.int64)).sum(dim=1) if len(shape) else \
        torch.zeros(indices.shape[0], dtype=torch.int64)


def coordinates_of(linear: torch.Tensor, shape: list) -> torch.Tensor:
    columns = []
    for size in reversed(shape):
        columns.append(linear % size if size else linear)
        linear = torch.div(linear, size, rounding_mode="floor") if size else linear
    return torch.stack(list(reversed(columns)), dim=1) if shape else linear.reshape(-1, 0)


def _check_bounds(sp: SparseTensor, op: str) -> None:
    shape = torch.tensor(list(sp.shape), dtype=torch.int64)
    bad = ((sp.indices < 0) | (sp.indices >= shape)).any(dim=1) if sp.indices.numel() else torch.zeros(0, dtype=bool)
    if bool(bad.any()):
        at = int(bad.nonzero()[0])
        raise InvalidArgumentError(None, None, f"{op}: indices[{at}] = {sp.indices[at].tolist()} is out of bounds: need "
                                   f"0 <= index < {list(sp.shape)}.")


def to_dense(sp_input: Any, default_value: Any = None, validate_indices: bool = True,
             name: Optional[str] = None) -> Any:
    """The dense tensor, `default_value` (0, or b'' for strings) where no value is given. With
    validate_indices (TF's default) the indices must be in bounds and in row-major order (tf.sparse.reorder)."""
    sp = as_sparse(sp_input, "tf.sparse.to_dense")
    _check_bounds(sp, "tf.sparse.to_dense")
    if validate_indices and sp.indices.shape[0] > 1:
        linear = linear_positions(sp.indices, list(sp.shape))
        order = (linear[1:] <= linear[:-1]).nonzero()
        if order.numel():
            at = int(order[0]) + 1
            raise InvalidArgumentError(None, None, f"tf.sparse.to_dense: indices[{at}] = {sp.indices[at].tolist()} is out of "
                                       "order. Many sparse ops require sorted indices (use tf.sparse.reorder).")
    fill = default_fill(sp.dtype, default_value)
    if is_string_values(sp.values):
        dense = np.full(tuple(sp.shape), fill.encode() if isinstance(fill, str) else fill, dtype=object)
        if len(sp.values):
            dense[tuple(sp.indices.t().numpy())] = sp.values
        return dense
    dense = torch.full(tuple(sp.shape), fill, dtype=sp.values.dtype, device=sp.values.device)
    if sp.values.numel():
        dense[tuple(sp.indices.t().to(dense.device))] = sp.values
    return dense


def from_dense(tensor: Any, name: Optional[str] = None) -> SparseTensor:
    """The SparseTensor of `tensor`'s non-zero (non-empty for strings) entries, indices in row-major order."""
    if is_string_values(tensor):
        array = np.asarray(tensor, dtype=object)
        where = np.argwhere(array != b"")
        return make(torch.from_numpy(where.astype(np.int64)), array[tuple(where.T)], list(array.shape))
    dense = to_tensor(tensor, op="tf.sparse.from_dense")
    indices = torch.nonzero(dense != 0)
    return make(indices.cpu(), dense[tuple(indices.t())], list(dense.shape))


def reorder(sp_input: Any, name: Optional[str] = None) -> SparseTensor:
    """The same SparseTensor with its entries in row-major (canonical) order."""
    sp = as_sparse(sp_input, "tf.sparse.reorder")
    order = torch.argsort(linear_positions(sp.indices, list(sp.shape)), stable=True)
    return make(sp.indices[order], take_values(sp.values, order), sp.dense_shape)


def reshape(sp_input: Any, shape: Any, name: Optional[str] = None) -> SparseTensor:
    """The SparseTensor with a new dense shape (one -1 inferred); the entries keep their row-major positions."""
    sp = as_sparse(sp_input, "tf.sparse.reshape")
    old = list(sp.shape)
    dims = int_list(shape, "tf.sparse.reshape: shape")
    total = int(np.prod(old))
    if dims.count(-1) > 1:
        raise InvalidArgumentError(None, None, "tf.sparse.reshape: at most one dimension can be -1.")
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1]))
        if known == 0 or total % known:
            raise InvalidArgumentError(None, None, f"tf.sparse.reshape: cannot infer -1 in {dims} for {total} dense values.")
        dims[dims.index(-1)] = total // known
    if int(np.prod(dims)) != total:
        raise InvalidArgumentError(None, None, f"tf.sparse.reshape: input to reshape is a tensor with {total} dense values, but "
                                   f"the requested shape has {int(np.prod(dims))}.")
    return make(coordinates_of(linear_positions(sp.indices, old), dims), sp.values, dims)


def concat(axis: int, sp_inputs: Any, expand_nonconcat_dims: bool = False, name: Optional[str] = None) -> SparseTensor:
    """The SparseTensors joined along `axis` (their other dims equal, or grown to the largest with
    expand_nonconcat_dims); the result is in row-major order."""
    parts = [as_sparse(sp, "tf.sparse.concat") for sp in sp_inputs]
    if not parts:
        raise ValueError("tf.sparse.concat needs at least one SparseTensor.")
    rank = len(parts[0].shape)
    dim = axis % rank
    dtypes = {str(sp.dtype) for sp in parts}
    if len(dtypes) > 1:
        raise InvalidArgumentError(None, None, f"tf.sparse.concat: the inputs have different dtypes ({sorted(dtypes)}).")
    shapes = [list(sp.shape) for sp in parts]
    if any(len(s) != rank for s in shapes):
        raise InvalidArgumentError(None, None, "tf.sparse.concat: the inputs must have one rank.")
    out_shape = [max(s[d] for s in shapes) for d in range(rank)]
    for position, shape in enumerate(shapes):
        for d in range(rank):
            if d != dim and shape[d] != out_shape[d] and not expand_nonconcat_dims:
                raise InvalidArgumentError(None, None, f"tf.sparse.concat: input shapes must match: expected {shapes[0][d]} for "
                                           f"dimension {d} but got {shape[d]} at position {position}.")
    out_shape[dim] = sum(s[dim] for s in shapes)
    offset, indices = 0, []
    for sp, shape in zip(parts, shapes):
        shifted = sp.indices.clone()
        shifted[:, dim] += offset
        indices.append(shifted)
        offset += shape[dim]
    return reorder(make(torch.cat(indices), concat_values([sp.values for sp in parts]), out_shape))


def slice(sp_input: Any, start: Any, size: Any, name: Optional[str] = None) -> SparseTensor:  # noqa: A001
    """The entries inside the box [start, start + size) (clipped to the dense shape), shifted to start at 0."""
    sp = as_sparse(sp_input, "tf.sparse.slice")
    begin = int_list(start, "tf.sparse.slice: start")
    extent = int_list(size, "tf.sparse.slice: size")
    shape = list(sp.shape)
    if len(begin) != len(shape) or len(extent) != len(shape):
        raise ValueError(f"tf.sparse.slice: start and size need {len(shape)} entries (the rank).")
    out_shape = [max(0, min(e, s - b)) for b, e, s in zip(begin, extent, shape)]
    low = torch.tensor(begin, dtype=torch.int64)
    high = low + torch.tensor(out_shape, dtype=torch.int64)
    keep = ((sp.indices >= low) & (sp.indices < high)).all(dim=1).nonzero().reshape(-1)
    return make(sp.indices[keep] - low, take_values(sp.values, keep), out_shape)


def split(sp_input: Any = None, num_split: Any = None, axis: Any = None, name: Optional[str] = None) -> list:
    """`num_split` SparseTensors cut along `axis`; the first (size % num_split) parts get one more row."""
    if sp_input is None or num_split is None or axis is None:
        raise ValueError("tf.sparse.split needs sp_input, num_split and axis.")
    sp = as_sparse(sp_input, "tf.sparse.split")
    shape = list(sp.shape)
    dim = int(axis) % len(shape)
    count = int(num_split)
    if not 1 <= count <= shape[dim]:
        raise InvalidArgumentError(None, None, f"tf.sparse.split: num_split should be between 1 and the splitting dimension size "
                                   f"({shape[dim]}), got {count}.")
    sizes = [shape[dim] // count + (1 if i < shape[dim] % count else 0) for i in range(count)]
    out, begin = [], 0
    for size in sizes:
        start = [0] * len(shape)
        start[dim] = begin
        extent = list(shape)
        extent[dim] = size
        out.append(slice(sp, start, extent))
        begin += size
    return out


def expand_dims(sp_input: Any, axis: Any = None, name: Optional[str] = None) -> SparseTensor:
    """The SparseTensor with a length-1 dimension inserted at `axis` (-1: last)."""
    sp = as_sparse(sp_input, "tf.sparse.expand_dims")
    rank = len(sp.shape)
    position = int(axis if axis is not None else 0)
    if not -rank - 1 <= position <= rank:
        raise ValueError(f"tf.sparse.expand_dims: axis {position} is out of range for rank {rank}.")
    position = position % (rank + 1)
    zeros = torch.zeros((sp.indices.shape[0], 1), dtype=torch.int64)
    indices = torch.cat([sp.indices[:, :position], zeros, sp.indices[:, position:]], dim=1)
    shape = list(sp.shape)
    shape.insert(position, 1)
    return make(indices, sp.values, shape)


def transpose(sp_input: Any, perm: Any = None, name: Optional[str] = None) -> SparseTensor:
    """The SparseTensor with its dims permuted (reversed by default), in row-major order."""
    sp = as_sparse(sp_input, "tf.sparse.transpose")
    rank = len(sp.shape)
    order = list(reversed(range(rank))) if perm is None else int_list(perm, "tf.sparse.transpose: perm")
    if sorted(order) != list(range(rank)):
        raise ValueError(f"tf.sparse.transpose: perm {order} is not a permutation of {list(range(rank))}.")
    shape = [list(sp.shape)[d] for d in order]
    return reorder(make(sp.indices[:, order], sp.values, shape))


def retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """The entries where the 1-D bool `to_retain` (one per entry) is True."""
    sp = as_sparse(sp_input, "tf.sparse.retain")
    keep = torch.as_tensor(np.asarray(to_retain) if not isinstance(to_retain, torch.Tensor) else to_retain)
    if keep.dim() != 1 or keep.shape[0] != sp.indices.shape[0]:
        raise ValueError(f"tf.sparse.retain: to_retain needs one bool per entry ({sp.indices.shape[0]}), got shape "
                         f"{list(keep.shape)}.")
    where = keep.to(torch.bool).nonzero().reshape(-1)
    return make(sp.indices[where], take_values(sp.values, where), sp.dense_shape)


def reset_shape(sp_input: Any, new_shape: Any = None) -> SparseTensor:
    """The SparseTensor with dense shape `new_shape` (each dim at least the old one), or the tightest shape
    that holds its indices when new_shape is None."""
    sp = as_sparse(sp_input, "tf.sparse.reset_shape")
    if new_shape is None:
        shape = (sp.indices.max(dim=0).values + 1).tolist() if sp.indices.shape[0] else [0] * len(sp.shape)
        return make(sp.indices, sp.values, shape)
    shape = int_list(new_shape, "tf.sparse.reset_shape: new_shape")
    if len(shape) != len(sp.shape) or any(n < o for n, o in zip(shape, sp.shape)):
        raise ValueError(f"Requested new_shape should have dimension sizes >= sp_input.shape. Found new_shape "
                         f"({shape}), sp_input.shape ({list(sp.shape)}).")
    return make(sp.indices, sp.values, shape)


def fill_empty_rows(sp_input: Any, default_value: Any, name: Optional[str] = None) -> tuple:
    """(the SparseTensor with `default_value` at column 0 of every empty row, in row-major order; a bool vector
    saying which rows were empty)."""
    sp = as_sparse(sp_input, "tf.sparse.fill_empty_rows")
    rows = list(sp.shape)[0]
    present = torch.zeros(rows, dtype=torch.bool)
    if sp.indices.shape[0]:
        present[sp.indices[:, 0]] = True
    empty = ~present
    missing = empty.nonzero().reshape(-1)
    new_indices = torch.zeros((missing.numel(), len(sp.shape)), dtype=torch.int64)
    new_indices[:, 0] = missing
    if is_string_values(sp.values):
        fill = np.array([default_value.encode() if isinstance(default_value, str) else default_value] *
                        missing.numel(), dtype=object)
    else:
        fill = torch.full((missing.numel(),), default_value, dtype=sp.values.dtype)
    merged = make(torch.cat([sp.indices, new_indices]), concat_values([sp.values, fill]), sp.dense_shape)
    return reorder(merged), empty


def eye(num_rows: int, num_columns: Optional[int] = None, dtype: Any = torch.float32,
        name: Optional[str] = None) -> SparseTensor:
    """A sparse identity matrix: ones on the main diagonal of a num_rows x num_columns matrix."""
    columns = num_rows if num_columns is None else int(num_columns)
    diagonal = torch.arange(min(int(num_rows), columns), dtype=torch.int64)
    return make(torch.stack([diagonal, diagonal], dim=1), torch.ones(diagonal.numel(), dtype=as_dtype(dtype)),
                [int(num_rows), columns])


def mask(a: Any, mask_indices: Any, name: Optional[str] = None) -> IndexedSlices:
    """The IndexedSlices `a` without the rows whose index is in `mask_indices`."""
    if not isinstance(a, IndexedSlices):
        raise TypeError(f"tf.sparse.mask needs a tf.IndexedSlices, got {type(a).__name__}.")
    drop = to_tensor(mask_indices, op="tf.sparse.mask").reshape(-1).to(a.indices.dtype)
    keep = ~torch.isin(a.indices, drop)
    return IndexedSlices(a.values[keep], a.indices[keep], a.dense_shape)


def to_indicator(sp_input: Any, vocab_size: int, name: Optional[str] = None) -> torch.Tensor:
    """A dense bool tensor [..., vocab_size]: True at the ids each last-dim row of `sp_input` holds."""
    sp = as_sparse(sp_input, "tf.sparse.to_indicator")
    ids = sp.values
    if not isinstance(ids, torch.Tensor) or ids.is_floating_point() or ids.dtype == torch.bool:
        raise TypeError("tf.sparse.to_indicator needs integer ids as values.")
    shape = list(sp.shape)[:-1] + [int(vocab_size)]
    out = torch.zeros(shape, dtype=torch.bool)
    if ids.numel():
        if bool(((ids < 0) | (ids >= vocab_size)).any()):
            raise InvalidArgumentError(None, None, f"tf.sparse.to_indicator: ids must be in [0, {vocab_size}).")
        out[tuple(sp.indices[:, :-1].t()) + (ids.to(torch.int64),)] = True
    return out


def map_values(op: Callable, *args: Any, **kwargs: Any) -> SparseTensor:
    """op applied to the values of the SparseTensor arguments (all with the same indices), others passed as given."""
    sparse = [a for a in list(args) + list(kwargs.values()) if isinstance(a, SparseTensor)]
    if not sparse:
        raise ValueError("tf.sparse.map_values needs at least one SparseTensor argument.")
    first = sparse[0]
    for other in sparse[1:]:
        if not torch.equal(other.indices, first.indices) or not torch.equal(other.dense_shape, first.dense_shape):
            raise ValueError("tf.sparse.map_values: the SparseTensor arguments must have the same indices and "
                             "dense_shape.")
    values = op(*[a.values if isinstance(a, SparseTensor) else a for a in args],
                **{k: v.values if isinstance(v, SparseTensor) else v for k, v in kwargs.items()})
    return first.with_values(values)
