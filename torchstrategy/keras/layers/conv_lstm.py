"""Keras's convolutional LSTMs ConvLSTM1D/2D/3D: an LSTM whose input and recurrent transforms are
convolutions (kernels (*kernel_size, in, 4*filters), gates i, f, c, o), run by keras.layers.RNN's time loop."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch

from torchstrategy.keras import activations, initializers, regularizers
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.conv import _CONV_FNS, _pad_spatial, _same_padding
from torchstrategy.keras.layers.core import _normalize_data_format, _normalize_padding, _normalize_tuple
from torchstrategy.keras.layers.recurrent_cells import _check_rate
from torchstrategy.keras.layers.rnn import RNN


def _conv_length(size: Optional[int], kernel: int, stride: int, padding: str, dilation: int) -> Optional[int]:
    if size is None:
        return None
    if padding == "same":
        return -(-size // stride)
    return (size - ((kernel - 1) * dilation + 1)) // stride + 1


class _ConvLSTMCell(Layer):
    """One ConvLSTM step on channels_last or channels_first tensors (no batch-time axis)."""

    def __init__(self, rank: int, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: Optional[str] = None, dilation_rate: Any = 1, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", recurrent_initializer: Any = "orthogonal",
                 bias_initializer: Any = "zeros", unit_forget_bias: bool = True, kernel_regularizer: Any = None,
                 recurrent_regularizer: Any = None, bias_regularizer: Any = None, kernel_constraint: Any = None,
                 recurrent_constraint: Any = None, bias_constraint: Any = None, dropout: float = 0.0,
                 recurrent_dropout: float = 0.0, seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(filters, int) or isinstance(filters, bool) or filters <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. "
                             f"Received filters={filters!r}.")
        self.rank, self.filters = rank, filters
        self.kernel_size = _normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = _normalize_tuple(strides, rank, "strides")
        self.padding = _normalize_padding(padding)
        self.data_format = _normalize_data_format(data_format)
        self.dilation_rate = _normalize_tuple(dilation_rate, rank, "dilation_rate")
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias, self.unit_forget_bias = bool(use_bias), bool(unit_forget_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint, self.recurrent_constraint = kernel_constraint, recurrent_constraint
        self.bias_constraint = bias_constraint
        self.dropout = _check_rate(type(self).__name__, "dropout", dropout)
        self.recurrent_dropout = _check_rate(type(self).__name__, "recurrent_dropout", recurrent_dropout)
        self.seed = seed
        self.state_size = -1  # set at build (a conv state has no single size); RNN only checks its type
        self._generators: dict[torch.device, torch.Generator] = {}
        self._in_sequence, self._sequence_masks = False, None

    def build(self, input_shape: Any) -> None:
        channel_axis = -1 if self.data_format == "channels_last" else 1
        input_dim = input_shape[channel_axis]
        if input_dim is None:
            raise ValueError(f"The channel dimension of the inputs should be defined. Found input shape {input_shape}.")
        self.input_dim = int(input_dim)
        spatial = input_shape[1:-1] if self.data_format == "channels_last" else input_shape[2:]
        self.spatial_dims = tuple(spatial)
        width = 4 * self.filters
        self.kernel = self.add_weight("kernel", self.kernel_size + (self.input_dim, width),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", self.kernel_size + (self.filters, width),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        if self.use_bias:
            init = self.bias_initializer
            if self.unit_forget_bias:
                def init(shape: Any, dtype: Any = None) -> torch.Tensor:
                    f = self.filters
                    base = initializers.get(self.bias_initializer)
                    return torch.cat([torch.as_tensor(base((f,), dtype=dtype)), torch.ones(f, dtype=dtype),
                                      torch.as_tensor(base((2 * f,), dtype=dtype))])
            self.bias = self.add_weight("bias", (width,), initializer=init, regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        else:
            self.bias = None
        self.built = True

    def _conv(self, x: torch.Tensor, kernel: torch.Tensor, strides: Sequence[int], padding: str,
              dilation: Sequence[int]) -> torch.Tensor:
        x = x.movedim(-1, 1) if self.data_format == "channels_last" else x
        if padding == "same":
            pads = [_same_padding(int(x.shape[2 + i]), kernel.shape[i], strides[i], dilation[i])
                    for i in range(self.rank)]
        else:
            pads = [(0, 0)] * self.rank
        x, pad_arg = _pad_spatial(x, pads)
        weight = kernel.permute(self.rank + 1, self.rank, *range(self.rank))  # (*k, in, out) -> (out, in, *k)
        y = _CONV_FNS[self.rank](x, weight, None, tuple(strides), pad_arg, tuple(dilation))
        return y.movedim(1, -1) if self.data_format == "channels_last" else y

    def _masks(self, inputs: torch.Tensor, h: torch.Tensor, training: bool) -> tuple:
        if self._sequence_masks is not None:
            return self._sequence_masks
        generator = None
        if self.seed is not None:
            if inputs.device not in self._generators:
                self._generators[inputs.device] = torch.Generator(inputs.device).manual_seed(int(self.seed))
            generator = self._generators[inputs.device]

        def draw(rate: float, like: torch.Tensor) -> Optional[torch.Tensor]:
            if not (training and 0.0 < rate < 1.0):
                return None
            keep = torch.empty((4,) + tuple(like.shape), dtype=like.dtype, device=like.device)
            return keep.bernoulli_(1.0 - rate, generator=generator) / (1.0 - rate)

        masks = (draw(self.dropout, inputs), draw(self.recurrent_dropout, h))
        if self._in_sequence:
            self._sequence_masks = masks
        return masks

    def _sequence(self, active: bool) -> None:
        self._in_sequence, self._sequence_masks = active, None

    def call(self, inputs: torch.Tensor, states: Any, training: bool = False) -> tuple:
        h_prev, c_prev = states[0], states[1]
        input_mask, recurrent_mask = self._masks(inputs, h_prev, training)
        kernels = torch.split(self.kernel, self.filters, dim=self.rank + 1)
        recurrent_kernels = torch.split(self.recurrent_kernel, self.filters, dim=self.rank + 1)
        biases = torch.split(self.bias, self.filters) if self.bias is not None else (None,) * 4
        gates = []
        for g in range(4):
            x = inputs if input_mask is None else inputs * input_mask[g]
            h = h_prev if recurrent_mask is None else h_prev * recurrent_mask[g]
            z = self._conv(x, kernels[g], self.strides, self.padding, self.dilation_rate)
            if biases[g] is not None:
                z = z + (biases[g] if self.data_format == "channels_last"
                         else biases[g].reshape((-1,) + (1,) * self.rank))
            gates.append(z + self._conv(h, recurrent_kernels[g], (1,) * self.rank, "same", (1,) * self.rank))
        i = self.recurrent_activation(gates[0])
        f = self.recurrent_activation(gates[1])
        c = f * c_prev + i * self.activation(gates[2])
        o = self.recurrent_activation(gates[3])
        h = o * self.activation(c)
        return h, [h, c]

    def output_spatial(self, spatial: Sequence[Optional[int]]) -> tuple:
        return tuple(_conv_length(s, k, st, self.padding, d) for s, k, st, d in
                     zip(spatial, self.kernel_size, self.strides, self.dilation_rate))

    def get_initial_state(self, batch_size: Optional[int] = None) -> list:
        spatial = self.output_spatial(self.spatial_dims)
        shape = ((batch_size,) + spatial + (self.filters,) if self.data_format == "channels_last"
                 else (batch_size, self.filters) + spatial)
        return [torch.zeros(shape, dtype=self._compute_torch_dtype) for _ in range(2)]


class _ConvLSTM(RNN):
    _RANK = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: Optional[str] = None, dilation_rate: Any = 1, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", recurrent_initializer: Any = "orthogonal",
                 bias_initializer: Any = "zeros", unit_forget_bias: bool = True, kernel_regularizer: Any = None,
                 recurrent_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, recurrent_constraint: Any = None, bias_constraint: Any = None,
                 dropout: float = 0.0, recurrent_dropout: float = 0.0, seed: Optional[int] = None,
                 return_sequences: bool = False, return_state: bool = False, go_backwards: bool = False,
                 stateful: bool = False, **kwargs: Any) -> None:
        cell = _ConvLSTMCell(
            self._RANK, filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
            dilation_rate=dilation_rate, activation=activation, recurrent_activation=recurrent_activation,
            use_bias=use_bias, kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer, unit_forget_bias=unit_forget_bias,
            kernel_regularizer=kernel_regularizer, recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint, dropout=dropout,
            recurrent_dropout=recurrent_dropout, seed=seed, name="conv_lstm_cell", dtype=kwargs.get("dtype"))
        kwargs.pop("unroll", None)
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, activity_regularizer=activity_regularizer,
                         **kwargs)

    def build(self, sequences_shape: Any, initial_state_shape: Any = None) -> None:
        if isinstance(sequences_shape, list):
            sequences_shape = sequences_shape[0]
        if not isinstance(sequences_shape, tuple) or len(sequences_shape) != self._RANK + 3:
            raise ValueError(f"Input 0 of layer '{self.name}' ({type(self).__name__}) must be a "
                             f"{self._RANK + 3}-D tensor (batch, time, *{self._RANK} spatial dims, channels), but "
                             f"received input with shape {sequences_shape}.")
        super().build(sequences_shape)

    def __getattr__(self, name: str) -> Any:
        if name in ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "activation",
                    "recurrent_activation", "use_bias", "unit_forget_bias", "dropout", "recurrent_dropout", "seed"):
            return getattr(self._modules["cell"], name)
        return super().__getattr__(name)

    def compute_output_shape(self, sequences_shape: Any, initial_state_shape: Any = None) -> Any:
        cell = self.cell
        batch, steps = sequences_shape[0], sequences_shape[1]
        if cell.data_format == "channels_last":
            state = (batch,) + cell.output_spatial(sequences_shape[2:-1]) + (cell.filters,)
        else:
            state = (batch, cell.filters) + cell.output_spatial(sequences_shape[3:])
        output = (state[0], steps) + state[1:] if self.return_sequences else state
        return (output, state, state) if self.return_state else output

    def get_config(self) -> dict:
        cell = self.cell
        config = {k: v for k, v in super().get_config().items() if k != "cell"}
        return {
            **config, "filters": cell.filters, "kernel_size": cell.kernel_size, "strides": cell.strides,
            "padding": cell.padding, "data_format": cell.data_format, "dilation_rate": cell.dilation_rate,
            "activation": activations.serialize(cell.activation),
            "recurrent_activation": activations.serialize(cell.recurrent_activation), "use_bias": cell.use_bias,
            "kernel_initializer": initializers.serialize(cell.kernel_initializer),
            "recurrent_initializer": initializers.serialize(cell.recurrent_initializer),
            "bias_initializer": initializers.serialize(cell.bias_initializer),
            "unit_forget_bias": cell.unit_forget_bias,
            "kernel_regularizer": regularizers.serialize(cell.kernel_regularizer),
            "recurrent_regularizer": regularizers.serialize(cell.recurrent_regularizer),
            "bias_regularizer": regularizers.serialize(cell.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "kernel_constraint": cell.kernel_constraint, "recurrent_constraint": cell.recurrent_constraint,
            "bias_constraint": cell.bias_constraint, "dropout": cell.dropout,
            "recurrent_dropout": cell.recurrent_dropout, "seed": cell.seed,
        }

    @classmethod
    def from_config(cls, config: dict) -> "_ConvLSTM":
        return cls(**config)


class ConvLSTM1D(_ConvLSTM):
    """ConvLSTM over (batch, time, steps, channels) sequences.

    >>> ConvLSTM1D(2, 3)(torch.ones(1, 4, 6, 3)).shape
    torch.Size([1, 4, 2])
    """

    _RANK = 1


class ConvLSTM2D(_ConvLSTM):
    """ConvLSTM over (batch, time, rows, cols, channels) sequences.

    >>> ConvLSTM2D(2, 3, padding="same")(torch.ones(1, 4, 5, 5, 3)).shape
    torch.Size([1, 5, 5, 2])
    """

    _RANK = 2


class ConvLSTM3D(_ConvLSTM):
    """ConvLSTM over (batch, time, dim1, dim2, dim3, channels) sequences."""

    _RANK = 3
