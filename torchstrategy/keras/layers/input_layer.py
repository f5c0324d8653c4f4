"""Symbolic inputs of the functional API: `Input`, the `InputLayer` behind it, the KerasTensor
it returns and the Node that records each layer call on KerasTensors."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.base import Layer, _shape_str
from torchstrategy.nest import flatten as flatten_structure


class _StringDType:
    """The dtype of a KerasTensor of text (`Input(dtype='string')`); its values are NumPy object arrays."""

    is_floating_point = False
    is_complex = False

    def __repr__(self) -> str:
        return "string"


STRING = _StringDType()


class KerasTensor:
    """A symbolic tensor: the shape (batch None) and dtype of a value in a functional graph."""

    _keras_symbolic = True

    def __init__(self, shape: Sequence[Optional[int]], dtype: Any = "float32", sparse: bool = False,
                 ragged: bool = False, record_history: bool = True, name: Optional[str] = None,
                 **kwargs: Any) -> None:
        """Keras 3's constructor; the graph passes the `node` that made the tensor and its `index` by keyword."""
        unknown = set(kwargs) - {"node", "index"}
        if unknown:
            raise TypeError(f"KerasTensor() got unexpected keyword arguments {sorted(unknown)}.")
        if sparse or ragged:
            raise NotImplementedError("KerasTensor(sparse=True / ragged=True) is not supported by torchstrategy: "
                                      "functional graphs here carry dense tensors.")
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = dtype if isinstance(dtype, (torch.dtype, _StringDType)) else (
            STRING if dtype in ("string", "str") else backend.to_torch_dtype(dtype))
        self.sparse, self.ragged, self.record_history = False, False, bool(record_history)
        self.node: Optional[Node] = kwargs.get("node")
        self.index: int = kwargs.get("index", 0)
        self.name = name
        self.mask_rank: Optional[int] = None  # the rank of the mask the value carries (Keras: its `_keras_mask`)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def reshape(self, newshape: Any) -> "KerasTensor":
        return _op("reshape")(self, newshape)

    def squeeze(self, axis: Any = None) -> "KerasTensor":
        return _op("squeeze")(self, axis)

    def __bool__(self) -> bool:
        raise TypeError("A symbolic KerasTensor cannot be used as a boolean.")

    def __iter__(self) -> Any:
        raise NotImplementedError("Iterating over a symbolic KerasTensor is not supported.")

    def __int__(self) -> int:
        raise ValueError(_NO_VALUE.format("an int"))

    def __float__(self) -> float:
        raise ValueError(_NO_VALUE.format("a float"))

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError(_NO_VALUE.format("a NumPy array"))

    def __repr__(self) -> str:
        producer = self.node.layer.name if self.node else "?"
        return f"<KerasTensor shape={_shape_str(self.shape)} dtype={str(self.dtype).replace('torch.', '')} " \
               f"(created by layer '{producer}')>"


_NO_VALUE = ("A KerasTensor is symbolic: it's a placeholder for a shape and a dtype. It doesn't have any actual "
             "numerical value. You cannot convert it to {}.")


def _op(name: str) -> Any:
    from torchstrategy.keras import ops

    return getattr(ops, name)


def _operator(op_name: str, reflected: bool = False) -> Any:
    """A KerasTensor operator that applies keras.ops.<op_name> (a graph step), as Keras 3's KerasTensor does."""
    if reflected:
        return lambda self, other: _op(op_name)(other, self)
    return lambda self, other: _op(op_name)(self, other)


# Keras 3's KerasTensor operators and the keras.ops function each applies (`==` stays identity, as there)
for _name, _op_name in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("matmul", "matmul"),
                        ("truediv", "true_divide"), ("pow", "power"), ("floordiv", "floor_divide"), ("mod", "mod"),
                        ("and", "logical_and"), ("or", "logical_or"), ("xor", "logical_xor")):
    setattr(KerasTensor, f"__{_name}__", _operator(_op_name))
    setattr(KerasTensor, f"__r{_name}__", _operator(_op_name, reflected=True))
for _name, _op_name in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal"),
                        ("ne", "not_equal"), ("getitem", "get_item")):
    setattr(KerasTensor, f"__{_name}__", _operator(_op_name))
KerasTensor.__neg__ = lambda self: _op("negative")(self)
KerasTensor.__abs__ = lambda self: _op("absolute")(self)
KerasTensor.__invert__ = lambda self: _op("logical_not")(self)
KerasTensor.__round__ = lambda self, ndigits=None: _op("round")(self, 0 if ndigits is None else ndigits)


@dataclass(eq=False)
class Node:
    """One call of `layer` on symbolic inputs, with the KerasTensors it produced."""

    layer: Layer
    inputs: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    outputs: Any = None

    @property
    def input_tensors(self) -> list[KerasTensor]:
        return [t for t in flatten_structure((self.inputs, self.args, self.kwargs)) if isinstance(t, KerasTensor)]


def _check_input_shape(batch_input_shape: Sequence[Any]) -> None:
    """Every dimension is None (unknown) or a non-negative integer, as TF's TensorShape requires."""
    for dim in batch_input_shape:
        if dim is None:
            continue
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 0:
            per_sample = tuple(batch_input_shape[1:])
            raise ValueError(f"Input shape {per_sample} (batch shape {tuple(batch_input_shape)}) is invalid: "
                             f"dimension {dim!r} is not allowed. Each dimension must be a non-negative integer, "
                             f"or None for a size known only at run time, e.g. Input(shape=(None, 3)).")


def _refuse_unsupported(sparse: Any, ragged: Any, input_tensor: Any, optional: Any) -> None:
    """NotImplementedError for the Input options torchstrategy does not honour (their defaults pass)."""
    for value, what in ((sparse, "sparse=True (sparse inputs)"), (ragged, "ragged=True (ragged inputs)"),
                        (optional, "optional=True (inputs that may be None)")):
        if value:
            raise NotImplementedError(f"keras.Input / InputLayer: {what} is not supported by torchstrategy; "
                                      f"pass dense tensors (pad ragged data, or densify sparse data).")
    if input_tensor is not None:
        raise NotImplementedError("keras.Input(tensor=...) / InputLayer(input_tensor=...) is not supported by "
                                  "torchstrategy: make a new Input(shape=...) and connect it instead.")


class InputLayer(Layer):
    """The layer behind `Input`: passes its input through (casting to its dtype)."""

    _float_policy_only = False  # integer inputs (Input(dtype='int32')) are fine

    def __init__(self, shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None,
                 dtype: Any = None, sparse: Optional[bool] = None, ragged: Optional[bool] = None,
                 batch_shape: Optional[Sequence[Optional[int]]] = None, input_tensor: Any = None,
                 optional: bool = False, name: Optional[str] = None, **kwargs: Any) -> None:
        if "input_shape" in kwargs:  # the Keras 2 spelling, which Keras 3 still takes
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs:
            batch_shape = kwargs.pop("batch_input_shape")
        _refuse_unsupported(sparse, ragged, input_tensor, optional)
        if shape is not None and batch_shape is not None:
            raise ValueError(f"InputLayer got both shape={shape!r} and batch_shape={batch_shape!r}: pass one "
                             f"(shape is per sample; batch_shape includes the batch dimension).")
        if batch_size is not None and batch_shape is not None:
            raise ValueError(f"InputLayer got both batch_size={batch_size!r} and batch_shape={batch_shape!r}: "
                             f"pass one (batch_shape's first entry is the batch size).")
        if shape is None and batch_shape is None:
            raise ValueError("Input() needs `shape` (per-sample, without the batch dimension), e.g. "
                             "Input(shape=(784,)), or `batch_shape` (with it).")
        batch_input_shape = tuple(batch_shape) if batch_shape is not None else (batch_size,) + tuple(shape)
        dtype = backend.floatx() if dtype is None else dtype  # the input's dtype, not the global policy (Keras)
        self.__dict__["_strings"] = dtype in ("string", "str", str, object)  # text in NumPy object arrays
        _check_input_shape(tuple(batch_input_shape))
        super().__init__(name=name, dtype=None if self._strings else dtype, batch_input_shape=batch_input_shape,
                         **kwargs)
        self.built = True
        output = KerasTensor(tuple(batch_input_shape), STRING if self._strings else backend.to_torch_dtype(self.dtype),
                             node=Node(self, None), name=self.name)
        output.node.outputs = output
        self.__dict__["_inbound_nodes"] = [output.node]  # `self.output` (Layer) reads it

    @property
    def dtype(self) -> str:
        return "string" if self.__dict__.get("_strings") else super().dtype

    def call(self, inputs: Any) -> Any:
        return inputs

    def passes_through(self, inputs: Any) -> bool:
        """Whether a call on `inputs` would hand them back as they are with nothing else happening (a plain tensor
        of this layer's dtype, no Keras mask, no input spec, activity regularizer or torch hook on the layer, its
        first call made): the Sequential it starts then skips the call, which runs on every step."""
        return (type(inputs) is torch.Tensor and inputs.dtype == self._compute_torch_dtype
                and getattr(inputs, "_keras_mask", None) is None and not self._strings
                and self._build_input_shape is not None and self.input_spec is None
                and self.__dict__.get("activity_regularizer") is None and not _hooked(self))

    def _cast_inputs(self, inputs: Any) -> Any:
        if self._strings:
            array = inputs if isinstance(inputs, np.ndarray) else np.asarray(inputs)
            return array.astype(object)
        value = backend.to_tensor(inputs)
        target = self._compute_torch_dtype
        return value if value.dtype == target else value.to(target)

    def get_config(self) -> dict:
        return {"batch_input_shape": list(self._batch_input_shape), "dtype": self.dtype, "name": self.name}


def _hooked(module: torch.nn.Module) -> bool:
    """Whether torch runs hooks around a call of `module`: its own or global forward/backward hooks."""
    hooks = torch.nn.modules.module
    return bool(module._forward_hooks or module._forward_pre_hooks or module._backward_hooks
                or module._backward_pre_hooks or hooks._global_forward_hooks or hooks._global_forward_pre_hooks
                or hooks._global_backward_hooks or hooks._global_backward_pre_hooks)


def Input(shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, dtype: Any = None,
          sparse: Optional[bool] = None, ragged: Optional[bool] = None,
          batch_shape: Optional[Sequence[Optional[int]]] = None, name: Optional[str] = None, tensor: Any = None,
          optional: bool = False) -> KerasTensor:
    """A symbolic input of the given per-sample `shape` (keras.Input). Sparse, ragged and optional inputs and
    wrapping an existing `tensor` are not supported (NotImplementedError).

    >>> x = Input(shape=(32, 32, 3))
    >>> x.shape
    (None, 32, 32, 3)
    """
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse, ragged=ragged,
                       batch_shape=batch_shape, input_tensor=tensor, optional=optional, name=name)
    return layer.output


def root_as_input(tensor: KerasTensor) -> KerasTensor:
    """Gives a KerasTensor made directly (`keras.KerasTensor(shape)`, no history yet) an InputLayer of its shape
    and dtype, so a graph can start at it; a tensor with history is returned as it is."""
    if tensor.node is not None:
        return tensor
    dtype = "string" if isinstance(tensor.dtype, _StringDType) else str(tensor.dtype).replace("torch.", "")
    layer = InputLayer(batch_shape=tensor.shape, dtype=dtype, name=tensor.name)
    node = layer.__dict__["_inbound_nodes"][0]
    node.outputs = tensor
    tensor.node, tensor.index = node, 0
    return tensor
