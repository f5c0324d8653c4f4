"""EagerTensor: the torch.Tensor subclass a Keras model call returns in eager user code, so that its
results convert to NumPy as TF's eager tensors do (`numpy()`, `np.asarray`, `y_numpy - t`)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy import _context

__all__ = ["EagerTensor", "as_eager", "plain", "eager_outputs", "NUMPY_OPERATORS"]


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def _operand(tensor: torch.Tensor, other: Any) -> Any:
    """A NumPy operand of a binary op, as TF converts it: a tensor of `tensor`'s dtype and device."""
    if isinstance(other, (np.ndarray, np.generic)):
        array = np.asarray(other)
        if array.dtype.kind in "OSU":
            raise TypeError(f"Cannot combine a {_dtype_name(tensor.dtype)} tensor with a string array.")
        return torch.from_numpy(np.array(array, copy=True)).to(device=tensor.device, dtype=tensor.dtype)
    return other


def _binary(name: str) -> Any:
    method = getattr(torch.Tensor, name)

    def op(self: torch.Tensor, other: Any) -> Any:
        return method(self, _operand(self, other))

    op.__name__ = name
    op.__doc__ = f"`{name}` with NumPy operands converted to this tensor's dtype (TF's rule)."
    return op


class EagerTensor(torch.Tensor):
    """A torch tensor that converts to NumPy like TF's EagerTensor: `numpy()` and `np.asarray(t)` work even
    when autograd recorded it (the value is read without the graph), and a NumPy operand on either side of
    an arithmetic operator is converted to this tensor's dtype. Ops on it return EagerTensors; autograd,
    `backward()` and every torch op work as on any tensor.

    >>> t = as_eager(torch.ones(2, requires_grad=True) * 2)
    >>> (np.ones(2) - t).numpy().tolist()
    [-1.0, -1.0]
    """

    def numpy(self, *, force: bool = False) -> np.ndarray:  # type: ignore[override]
        """The value as a NumPy array (read without the autograd graph, copied from an accelerator)."""
        return torch.Tensor.numpy(plain(self), force=True)

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        value = self.numpy()
        shown = str(value) if value.ndim == 0 else "\n" + repr(value)
        return f"<tf.Tensor: shape={tuple(self.shape)}, dtype={_dtype_name(self.dtype)}, numpy={shown}>"

    def __float__(self) -> float:
        return float(plain(self))

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple = (), kwargs: Optional[dict] = None) -> Any:
        # torch's own rule, except that gradients come back plain (optimizers take them as they are) and that
        # tensors of another layout (the sparse row gradients of an embedding) are never wrapped
        with torch._C.DisableTorchFunctionSubclass():
            result = func(*args, **(kwargs or {}))
        if func in _PLAIN_RESULTS or func in torch.overrides.get_default_nowrap_functions():
            return result
        return _wrapped(result, cls)

    def __int__(self) -> int:
        return int(plain(self))



_PLAIN_RESULTS = {torch.autograd.grad, torch.autograd.backward, torch.Tensor.backward}


def _wrapped(value: Any, cls: type) -> Any:
    """`value` with its strided tensors as `cls` (lists and tuples of them too), as torch's default does."""
    if isinstance(value, torch.Tensor):
        return value.as_subclass(cls) if value.layout == torch.strided and not isinstance(value, cls) else value
    if isinstance(value, (list, tuple)):
        return type(value)(_wrapped(item, cls) for item in value)
    return value


def _as_array(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return torch.Tensor.numpy(plain(value), force=True)
    if isinstance(value, (list, tuple)):
        return type(value)(_as_array(item) for item in value)
    return value


_UFUNC_OPERATORS = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "truediv",
                    np.floor_divide: "floordiv", np.remainder: "mod", np.power: "pow", np.matmul: "matmul"}


def _array_ufunc(self: torch.Tensor, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """NumPy ufuncs on a tensor: the arithmetic operators (`y_numpy - t`) give tensors, as TF's do; any other
    ufunc (np.isnan, np.exp, ...) runs on the value and gives NumPy results, as it does on TF tensors."""
    name = _UFUNC_OPERATORS.get(ufunc)
    if name is not None and method == "__call__" and len(inputs) == 2 and not kwargs:
        left, right = inputs
        if isinstance(left, torch.Tensor):
            return getattr(type(left), f"__{name}__")(left, right)
        return getattr(type(right), f"__r{name}__")(right, left)
    return getattr(ufunc, method)(*_as_array(inputs), **{k: _as_array(v) for k, v in kwargs.items()})


def _array_function(self: torch.Tensor, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    """NumPy functions (np.mean, np.stack, np.allclose, ...) on tensors run on their values, as on TF tensors."""
    return func(*_as_array(args), **{k: _as_array(v) for k, v in kwargs.items()})


#: arithmetic operators that take a NumPy operand on either side, and NumPy's ufunc/function protocols
#: (tf.Variable installs them too)
NUMPY_OPERATORS = {name: _binary(name) for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul")
                   for name in (f"__{op}__", f"__r{op}__")}
NUMPY_OPERATORS["__array_ufunc__"] = _array_ufunc
NUMPY_OPERATORS["__array_function__"] = _array_function
for _name, _method in NUMPY_OPERATORS.items():
    setattr(EagerTensor, _name, _method)


def as_eager(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` as an EagerTensor (same storage and autograd history), keeping a Keras mask it carries."""
    if isinstance(tensor, EagerTensor) or type(tensor) is not torch.Tensor:
        return tensor
    out = tensor.as_subclass(EagerTensor)
    mask = getattr(tensor, "_keras_mask", None)
    if mask is not None:
        out._keras_mask = mask
    return out


def plain(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` as a plain torch.Tensor without autograd history (the value only)."""
    with torch._C.DisableTorchFunctionSubclass():
        return torch.Tensor.detach(tensor).as_subclass(torch.Tensor)


def eager_outputs(outputs: Any) -> Any:
    """A model's outputs as user code outside `strategy.run` sees them: EagerTensors, which convert to NumPy;
    inside a replica function (fit's steps, custom replica steps) they stay plain tensors at full speed."""
    if _context.current_replica() is not None or torch.compiler.is_compiling():
        return outputs
    return _map(outputs)


def _map(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return as_eager(value)
    if type(value) in (list, tuple):
        return type(value)(_map(item) for item in value)
    if type(value) is dict:
        return {key: _map(item) for key, item in value.items()}
    return value
