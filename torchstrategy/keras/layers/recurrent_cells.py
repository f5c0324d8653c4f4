"""Recurrent cells with Keras's weight layout: SimpleRNNCell, LSTMCell (gates i, f, c, o) and GRUCell
(gates z, r, h; reset_after bias (2, 3*units)), each split into an all-steps input projection and a step."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras import activations, initializers, regularizers
from torchstrategy.keras.layers.base import Layer


def _check_rate(owner: str, name: str, value: Any) -> float:
    rate = float(value)
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"{owner}: `{name}` must be a float between 0 and 1, got {name}={value!r}.")
    return rate


_CELL_OWN = ("unit_forget_bias", "reset_after")  # set by LSTMCell / GRUCell themselves, not by _RecurrentCell


def _arguments(scope: dict, drop: tuple = ()) -> dict:
    """The arguments of the `__init__` whose `locals()` is `scope`, as keywords (its **kwargs merged in): the
    cells and layers spell out Keras's full signatures and hand everything on in one call."""
    named = {k: v for k, v in scope.items() if k not in ("self", "__class__", "kwargs") and k not in drop}
    return {**named, **scope.get("kwargs", {})}


class _RecurrentCell(Layer):
    """Shared weights and dropout of the three cells; subclasses set `_gates` and write `step`.

    `project_inputs` computes `inputs @ kernel + input bias` for all time steps at once (one matmul);
    `step` adds the recurrent part for one step and returns `(output, new_states)`.
    """

    _gates = 1
    _has_recurrent_activation = True

    def __init__(
        self, units: int, activation: Any = "tanh", recurrent_activation: Any = "sigmoid", use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform", recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros", kernel_regularizer: Any = None, recurrent_regularizer: Any = None,
        bias_regularizer: Any = None, kernel_constraint: Any = None, recurrent_constraint: Any = None,
        bias_constraint: Any = None, dropout: float = 0.0, recurrent_dropout: float = 0.0,
        seed: Optional[int] = None, **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        kind = type(self).__name__
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(f"{kind}: `units` must be a positive integer, got units={units!r}.")
        self.units = units
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint, self.recurrent_constraint = kernel_constraint, recurrent_constraint
        self.bias_constraint = bias_constraint
        self.dropout = _check_rate(kind, "dropout", dropout)
        self.recurrent_dropout = _check_rate(kind, "recurrent_dropout", recurrent_dropout)
        self.seed = seed
        self._generators: dict[torch.device, torch.Generator] = {}

    @property
    def state_size(self) -> list[int]:
        return [self.units]

    def _bias_shape(self) -> tuple:
        return (self._gates * self.units,)

    def _make_bias(self, shape: tuple, dtype: Any = None) -> torch.Tensor:
        return initializers.get(self.bias_initializer)(shape, dtype=dtype)

    def build(self, input_shape: Any) -> None:
        features = input_shape[-1]
        if features is None:
            raise ValueError(f"{type(self).__name__} needs the last (features) dimension of its input to be known, "
                             f"but the input shape is {input_shape}.")
        width = self._gates * self.units
        self.kernel = self.add_weight("kernel", (int(features), width), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", (self.units, width), initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer, constraint=self.recurrent_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", self._bias_shape(), initializer=self._make_bias,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        else:
            self.bias = None
        self.built = True

    # ----- dropout (Keras 3: one mask per call; one per gate once recurrent dropout is on) ------------
    def _mask_count(self) -> int:
        return self._gates if self.recurrent_dropout > 0.0 and self._gates > 1 else 1

    def _random_mask(self, rate: float, shape: tuple, like: torch.Tensor) -> Optional[torch.Tensor]:
        if not 0.0 < rate < 1.0:
            return None
        generator = None
        if self.seed is not None:
            if like.device not in self._generators:
                self._generators[like.device] = torch.Generator(device=like.device).manual_seed(int(self.seed))
            generator = self._generators[like.device]
        keep = torch.empty(shape, dtype=like.dtype, device=like.device).bernoulli_(1.0 - rate, generator=generator)
        return keep / (1.0 - rate)

    def dropout_masks(self, inputs: torch.Tensor, training: bool) -> tuple[Optional[torch.Tensor], ...]:
        """(input mask, recurrent mask) for a (batch, steps, features) call; each (count, batch, size) or None."""
        if not training:
            return None, None
        count, batch = self._mask_count(), inputs.shape[0]
        return (self._random_mask(self.dropout, (count, batch, inputs.shape[-1]), inputs),
                self._random_mask(self.recurrent_dropout, (count, batch, self.units), inputs))

    # ----- the math ----------------------------------------------------------------------------------
    def _input_bias(self) -> Optional[torch.Tensor]:
        return self.bias

    def project_inputs(self, inputs: torch.Tensor, input_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """`inputs @ kernel + input bias` for every step: (batch, steps, features) -> (batch, steps, gates*units)."""
        kernel = self.kernel
        if input_mask is None:
            projected = torch.matmul(inputs, kernel)
        elif input_mask.shape[0] == 1:
            projected = torch.matmul(inputs * input_mask[0][:, None, :], kernel)
        else:  # one mask per gate: each gate's slice of the kernel sees its own dropped copy of the inputs
            dropped = inputs[:, :, None, :] * input_mask.permute(1, 0, 2)[:, None, :, :]
            gate_kernels = kernel.reshape(kernel.shape[0], self._gates, self.units)
            projected = torch.einsum("btgf,fgu->btgu", dropped, gate_kernels).flatten(2)
        bias = self._input_bias()
        return projected if bias is None else projected + bias

    def _recurrent(self, h: torch.Tensor, recurrent_mask: Optional[torch.Tensor], gates: slice) -> torch.Tensor:
        """`h @ recurrent_kernel[:, gates]`, with each gate's own dropped `h` when recurrent dropout is on."""
        units = self.units
        start, stop = gates.start * units, gates.stop * units
        kernel = self.recurrent_kernel[:, start:stop]
        if recurrent_mask is None:
            return h @ kernel
        if recurrent_mask.shape[0] == 1:
            return (h * recurrent_mask[0]) @ kernel
        dropped = h[:, None, :] * recurrent_mask[gates].permute(1, 0, 2)  # (batch, gates, units)
        gate_kernels = kernel.reshape(units, gates.stop - gates.start, units)
        return torch.einsum("bgu,ugv->bgv", dropped, gate_kernels).flatten(1)

    def step(self, projected: torch.Tensor, states: list, recurrent_mask: Optional[torch.Tensor] = None) -> tuple:
        raise NotImplementedError

    # ----- Keras's cell protocol (used by keras.layers.RNN and StackedRNNCells) ------------------------
    def get_initial_state(self, batch_size: Optional[int] = None) -> list:
        """Zero states, one (batch_size, size) tensor per entry of `state_size`."""
        return [torch.zeros((batch_size, size), dtype=self._compute_torch_dtype) for size in self.state_size]

    def call(self, inputs: torch.Tensor, states: Any, training: bool = False) -> tuple:
        """One step: `(output, new_states)`; a bare state tensor in gives a bare tensor back, as Keras's cells.
        Inside an RNN's sequence the dropout masks are drawn once and reused at every step (Keras 3)."""
        nested = isinstance(states, (list, tuple))
        states = list(states) if nested else [states]
        masks = self.__dict__.get("_sequence_masks")
        if masks is None:
            masks = self.dropout_masks(inputs[:, None, :], bool(training))
            if self.__dict__.get("_in_sequence"):
                self._sequence_masks = masks
        projected = self.project_inputs(inputs[:, None, :], masks[0])[:, 0]
        output, new_states = self.step(projected, states, masks[1])
        if len(new_states) == 1 and not nested:
            return output, new_states[0]
        return output, list(new_states)

    def _sequence(self, active: bool) -> None:
        """An RNN marks the start (True) and end (False) of a sequence: masks are kept only in between."""
        self._in_sequence, self._sequence_masks = active, None

    def get_config(self) -> dict:
        config = {
            **super().get_config(), "units": self.units, "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias, "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "recurrent_regularizer": regularizers.serialize(self.recurrent_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "kernel_constraint": self.kernel_constraint, "recurrent_constraint": self.recurrent_constraint,
            "bias_constraint": self.bias_constraint, "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout, "seed": self.seed,
        }
        if self._has_recurrent_activation:
            config["recurrent_activation"] = activations.serialize(self.recurrent_activation)
        return config


class SimpleRNNCell(_RecurrentCell):
    """`h_t = activation(x_t @ kernel + bias + h_{t-1} @ recurrent_kernel)`."""

    _gates = 1
    _has_recurrent_activation = False

    def __init__(self, units: int, activation: Any = "tanh", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", recurrent_initializer: Any = "orthogonal",
                 bias_initializer: Any = "zeros", kernel_regularizer: Any = None, recurrent_regularizer: Any = None,
                 bias_regularizer: Any = None, kernel_constraint: Any = None, recurrent_constraint: Any = None,
                 bias_constraint: Any = None, dropout: float = 0.0, recurrent_dropout: float = 0.0,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(**_arguments(locals(), drop=_CELL_OWN))

    def step(self, projected: torch.Tensor, states: list, recurrent_mask: Optional[torch.Tensor] = None) -> tuple:
        output = self.activation(projected + self._recurrent(states[0], recurrent_mask, slice(0, 1)))
        return output, [output]


class LSTMCell(_RecurrentCell):
    """LSTM step, gates in Keras order i, f, c, o; `unit_forget_bias` starts the forget bias at one."""

    _gates = 4

    def __init__(self, units: int, activation: Any = "tanh", recurrent_activation: Any = "sigmoid",
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 unit_forget_bias: bool = True,
                 kernel_regularizer: Any = None, recurrent_regularizer: Any = None,
                 bias_regularizer: Any = None, kernel_constraint: Any = None, recurrent_constraint: Any = None,
                 bias_constraint: Any = None, dropout: float = 0.0, recurrent_dropout: float = 0.0,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        self.unit_forget_bias = bool(unit_forget_bias)
        super().__init__(**_arguments(locals(), drop=_CELL_OWN))

    @property
    def state_size(self) -> list[int]:
        return [self.units, self.units]

    def _make_bias(self, shape: tuple, dtype: Any = None) -> torch.Tensor:
        if not self.unit_forget_bias:
            return super()._make_bias(shape, dtype)
        init, units = initializers.get(self.bias_initializer), self.units
        parts = [torch.as_tensor(init((units,), dtype=dtype)), torch.ones(units, dtype=dtype),
                 torch.as_tensor(init((2 * units,), dtype=dtype))]
        return torch.cat(parts)

    def step(self, projected: torch.Tensor, states: list, recurrent_mask: Optional[torch.Tensor] = None) -> tuple:
        h_prev, c_prev = states
        z = projected + self._recurrent(h_prev, recurrent_mask, slice(0, 4))
        z_i, z_f, z_c, z_o = z.chunk(4, dim=-1)
        gate = self.recurrent_activation
        c = gate(z_f) * c_prev + gate(z_i) * self.activation(z_c)
        h = gate(z_o) * self.activation(c)
        return h, [h, c]

    def get_config(self) -> dict:
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias}


class GRUCell(_RecurrentCell):
    """GRU step, gates in Keras order z, r, h. `reset_after=True` (Keras default) applies the reset gate after
    the recurrent matmul and keeps separate input and recurrent biases (bias shape (2, 3*units))."""

    _gates = 3

    def __init__(self, units: int, activation: Any = "tanh", recurrent_activation: Any = "sigmoid",
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None,
                 recurrent_regularizer: Any = None,
                 bias_regularizer: Any = None, kernel_constraint: Any = None, recurrent_constraint: Any = None,
                 bias_constraint: Any = None, dropout: float = 0.0, recurrent_dropout: float = 0.0,
                 reset_after: bool = True, seed: Optional[int] = None, **kwargs: Any) -> None:
        self.reset_after = bool(reset_after)
        super().__init__(**_arguments(locals(), drop=_CELL_OWN))

    def _bias_shape(self) -> tuple:
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _input_bias(self) -> Optional[torch.Tensor]:
        if self.bias is None:
            return None
        return self.bias[0] if self.reset_after else self.bias

    def step(self, projected: torch.Tensor, states: list, recurrent_mask: Optional[torch.Tensor] = None) -> tuple:
        h_prev, units = states[0], self.units
        x_z, x_r, x_h = projected.chunk(3, dim=-1)
        gate = self.recurrent_activation
        if self.reset_after:
            inner = self._recurrent(h_prev, recurrent_mask, slice(0, 3))
            if self.bias is not None:
                inner = inner + self.bias[1]
            r_z, r_r, r_h = inner.chunk(3, dim=-1)
            z, r = gate(x_z + r_z), gate(x_r + r_r)
            candidate = self.activation(x_h + r * r_h)
        else:
            inner = self._recurrent(h_prev, recurrent_mask, slice(0, 2))
            z, r = gate(x_z + inner[:, :units]), gate(x_r + inner[:, units:])
            reset = r * h_prev
            if recurrent_mask is not None:  # the candidate's own dropped copy of h
                reset = r * (h_prev * recurrent_mask[-1])
            candidate = self.activation(x_h + reset @ self.recurrent_kernel[:, 2 * units:])
        h = z * h_prev + (1.0 - z) * candidate
        return h, [h]

    def get_config(self) -> dict:
        return {**super().get_config(), "reset_after": self.reset_after}
