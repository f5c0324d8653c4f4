"""Keras recurrent layers on torch: SimpleRNN, LSTM, GRU (masked time loop over the cells in
recurrent_cells.py), the Bidirectional and TimeDistributed wrappers, and Masking."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras.layers import rnn_state
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell, _forwarded, _RecurrentCell

_CELL_KEYS = ("name", "trainable", "dtype", "batch_input_shape")  # the cell's own Layer arguments


def _as_state_list(initial_state: Any) -> list:
    if initial_state is None:
        return []
    return list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]


class _RNN(Layer):
    """The time loop shared by SimpleRNN, LSTM and GRU: masked steps keep the previous state (and, unless
    `zero_output_for_mask`, repeat the previous output), as Keras's backend `rnn` does."""

    _cell_class: type = _RecurrentCell

    def __init__(
        self, units: int, return_sequences: bool = False, return_state: bool = False, go_backwards: bool = False,
        stateful: bool = False, unroll: bool = False, zero_output_for_mask: bool = False, **kwargs: Any,
    ) -> None:
        layer_kwargs = {key: kwargs.pop(key) for key in ("name", "trainable", "dtype", "input_shape",
                                                         "batch_input_shape", "input_dim", "activity_regularizer")
                        if key in kwargs}  # Keras applies activity_regularizer to the layer's output
        kwargs.pop("use_cudnn", None)  # Keras 3 kernel choice; the torch loop is the same math
        kwargs.pop("implementation", None)
        super().__init__(**layer_kwargs)
        dtype = layer_kwargs.get("dtype")
        self.cell = self._cell_class(units, dtype=dtype, **kwargs)
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful, self.unroll = bool(go_backwards), bool(stateful), bool(unroll)
        self.states: Any = None  # with stateful=True: the states kept between batches (rnn_state.py)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.supports_masking = True

    @property
    def units(self) -> int:
        return self.cell.units

    @property
    def state_size(self) -> list[int]:
        return self.cell.state_size

    def build(self, sequences_shape: Any, initial_state_shape: Any = None) -> None:
        shape = sequences_shape[0] if isinstance(sequences_shape, list) else sequences_shape
        if not isinstance(shape, tuple) or len(shape) != 3:
            raise ValueError(f"Input 0 of layer '{self.name}' ({type(self).__name__}) must be a 3-D tensor "
                             f"(batch, timesteps, features), but received input with shape {shape}.")
        self.cell.build((shape[0], shape[-1]))
        self.built = True

    def _initial_states(self, inputs: torch.Tensor, initial_state: Any) -> list:
        given = _as_state_list(initial_state)
        sizes = self.state_size
        if not given:
            return [inputs.new_zeros((inputs.shape[0], size)) for size in sizes]
        if len(given) != len(sizes):
            raise ValueError(f"Layer '{self.name}' ({type(self).__name__}) has {len(sizes)} state(s) but "
                             f"initial_state has {len(given)}. Pass a list of {len(sizes)} tensors of shape "
                             f"(batch, {self.units}).")
        states = []
        for state, size in zip(given, sizes):
            state = torch.as_tensor(state, dtype=inputs.dtype, device=inputs.device)
            if tuple(state.shape) != (inputs.shape[0], size):
                raise ValueError(f"Layer '{self.name}': each initial_state must have shape (batch, {size}) = "
                                 f"{(inputs.shape[0], size)}, got {tuple(state.shape)}.")
            states.append(state)
        return states

    def call(self, sequences: torch.Tensor, initial_state: Any = None, mask: Optional[torch.Tensor] = None,
             training: bool = False) -> Any:
        inputs = sequences
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if inputs.dim() != 3:
            raise ValueError(f"Layer '{self.name}' ({type(self).__name__}) expects (batch, timesteps, features) "
                             f"inputs, got shape {tuple(inputs.shape)}.")
        if self.stateful:  # the kept states, unless the call gives its own
            kept = rnn_state.initial_state(self, inputs, lambda batch: [inputs.new_zeros((batch, size))
                                                                        for size in self.state_size])
            states = list(kept) if initial_state is None else self._initial_states(inputs, initial_state)
        else:
            states = self._initial_states(inputs, initial_state)
        if self.go_backwards:
            inputs = inputs.flip(1)
            mask = None if mask is None else mask.flip(1)
        input_mask, recurrent_mask = self.cell.dropout_masks(inputs, bool(training))
        projected = self.cell.project_inputs(inputs, input_mask)  # all steps in one matmul
        steps = inputs.shape[1]
        step_mask = None if mask is None else mask.to(torch.bool)[:, :, None]
        previous = inputs.new_zeros((inputs.shape[0], self.units))
        outputs = []
        for t in range(steps):
            output, new_states = self.cell.step(projected[:, t], states, recurrent_mask)
            if step_mask is not None:
                keep = step_mask[:, t]
                new_states = [torch.where(keep, new, old) for new, old in zip(new_states, states)]
                fallback = torch.zeros_like(output) if self.zero_output_for_mask else previous
                output = torch.where(keep, output, fallback)
                previous = torch.where(keep, output, previous)
            else:
                previous = output
            states = new_states
            outputs.append(output)
        if not outputs:
            raise ValueError(f"Layer '{self.name}' got an input with 0 timesteps; it needs at least one.")
        result = torch.stack(outputs, dim=1) if self.return_sequences else previous
        if self.stateful:
            rnn_state.keep_final_state(self, states)
        return [result] + list(states) if self.return_state else result

    def reset_state(self) -> None:
        """Zeroes the states a stateful layer keeps between batches (Keras 3)."""
        rnn_state.reset_state(self)

    def reset_states(self) -> None:
        """Keras's other name for `reset_state`."""
        rnn_state.reset_state(self)

    def compute_mask(self, _: Any, mask: Any) -> Any:
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(self.state_size)
        return output_mask

    def compute_output_shape(self, sequences_shape: Any, initial_state_shape: Any = None) -> Any:
        batch, length = sequences_shape[0], sequences_shape[1]
        output = (batch, length, self.units) if self.return_sequences else (batch, self.units)
        return (output, *[(batch, size) for size in self.state_size]) if self.return_state else output

    def get_config(self) -> dict:
        cell_config = {k: v for k, v in self.cell.get_config().items() if k not in _CELL_KEYS}
        return {**super().get_config(), "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards, "stateful": self.stateful,
                "unroll": self.unroll, "zero_output_for_mask": self.zero_output_for_mask, **cell_config}


class SimpleRNN(_RNN):
    """Fully connected RNN: `h_t = tanh(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)`.

    >>> SimpleRNN(4)(torch.ones(2, 5, 3)).shape
    torch.Size([2, 4])
    """

    _cell_class = SimpleRNNCell

    def __init__(
        self, units: int, activation: Any = "tanh", use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
        recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
        recurrent_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
        kernel_constraint: Any = None, recurrent_constraint: Any = None, bias_constraint: Any = None,
        dropout: float = 0.0, recurrent_dropout: float = 0.0, return_sequences: bool = False,
        return_state: bool = False, go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
        seed: Optional[int] = None, **kwargs: Any,
    ) -> None:
        super().__init__(**_forwarded(locals()))


class LSTM(_RNN):
    """Long short-term memory (Keras weights: kernel (features, 4*units) in i, f, c, o order); states [h, c].

    >>> LSTM(4, return_sequences=True)(torch.ones(2, 5, 3)).shape
    torch.Size([2, 5, 4])
    """

    _cell_class = LSTMCell

    def __init__(
        self, units: int, activation: Any = "tanh", recurrent_activation: Any = "sigmoid", use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform", recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros", unit_forget_bias: bool = True, kernel_regularizer: Any = None,
        recurrent_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
        kernel_constraint: Any = None, recurrent_constraint: Any = None, bias_constraint: Any = None,
        dropout: float = 0.0, recurrent_dropout: float = 0.0, seed: Optional[int] = None,
        return_sequences: bool = False, return_state: bool = False, go_backwards: bool = False,
        stateful: bool = False, unroll: bool = False, use_cudnn: Any = "auto", **kwargs: Any,
    ) -> None:
        super().__init__(**_forwarded(locals()))


class GRU(_RNN):
    """Gated recurrent unit (gates z, r, h; reset_after=True by default, bias (2, 3*units)).

    >>> GRU(4, return_state=True)(torch.ones(2, 5, 3))[1].shape
    torch.Size([2, 4])
    """

    _cell_class = GRUCell

    def __init__(
        self, units: int, activation: Any = "tanh", recurrent_activation: Any = "sigmoid", use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform", recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros", kernel_regularizer: Any = None, recurrent_regularizer: Any = None,
        bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
        recurrent_constraint: Any = None, bias_constraint: Any = None, dropout: float = 0.0,
        recurrent_dropout: float = 0.0, seed: Optional[int] = None, return_sequences: bool = False,
        return_state: bool = False, go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
        reset_after: bool = True, use_cudnn: Any = "auto", **kwargs: Any,
    ) -> None:
        super().__init__(**_forwarded(locals()))


# ----- wrappers ----------------------------------------------------------------------------------
def _rebuild(layer_config: dict, custom_objects: Optional[dict]) -> Layer:
    from torchstrategy.keras import saving

    return saving.deserialize_layer(layer_config, custom_objects)


def _copy_layer(layer: Layer, **overrides: Any) -> Layer:
    return type(layer).from_config({**layer.get_config(), **overrides})


class Bidirectional(Layer):
    """Runs a recurrent layer forwards and a copy of it backwards and merges the two outputs.

    merge_mode: 'concat' (default), 'sum', 'mul', 'ave', or None (a list [forward, backward]).

    >>> Bidirectional(LSTM(4))(torch.ones(2, 5, 3)).shape
    torch.Size([2, 8])
    """

    _MERGE_MODES = ("concat", "sum", "mul", "ave", None)

    def __init__(self, layer: Layer, merge_mode: Optional[str] = "concat", weights: Any = None,
                 backward_layer: Optional[Layer] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(layer, _RNN):
            raise ValueError(f"Bidirectional needs a recurrent layer (SimpleRNN, LSTM, GRU) as `layer`, got {layer!r}.")
        if merge_mode not in self._MERGE_MODES:
            raise ValueError(f"Invalid merge_mode {merge_mode!r}: use one of {list(self._MERGE_MODES)}.")
        if backward_layer is not None:
            if not isinstance(backward_layer, _RNN):
                raise ValueError(f"Bidirectional: `backward_layer` must be a recurrent layer, got {backward_layer!r}.")
            if backward_layer.go_backwards == layer.go_backwards:
                raise ValueError("Bidirectional: `backward_layer.go_backwards` must be the opposite of "
                                 f"`layer.go_backwards` (both are {layer.go_backwards}).")
            for attr in ("return_sequences", "return_state"):
                if getattr(backward_layer, attr) != getattr(layer, attr):
                    raise ValueError(f"Bidirectional: `{attr}` of `layer` and `backward_layer` must match, got "
                                     f"{getattr(layer, attr)} and {getattr(backward_layer, attr)}.")
        # Keras copies `layer` from its config: the wrapper owns fresh forward/backward layers.
        self.forward_layer = _copy_layer(layer, name="forward_" + layer.name)
        self.backward_layer = backward_layer if backward_layer is not None else _copy_layer(
            layer, name="backward_" + layer.name, go_backwards=not layer.go_backwards)
        self._original_config = {"class_name": type(layer).__name__, "config": layer.get_config()}
        self.merge_mode = merge_mode
        self.return_sequences, self.return_state = layer.return_sequences, layer.return_state
        self.stateful = layer.stateful
        for sub in (self.forward_layer, self.backward_layer):  # Keras: zeros at masked steps of the sequences
            sub.zero_output_for_mask = sub.return_sequences
        self.supports_masking = True
        self._initial_weights = weights

    def build(self, sequences_shape: Any, initial_state_shape: Any = None) -> None:
        self.built = True

    def call(self, sequences: torch.Tensor, initial_state: Any = None, mask: Optional[torch.Tensor] = None,
             training: Optional[bool] = None) -> Any:
        inputs = sequences
        forward_state = backward_state = None
        states = _as_state_list(initial_state)
        if states:
            if len(states) % 2:
                raise ValueError(f"Bidirectional '{self.name}': initial_state must list the forward states then "
                                 f"the backward states (an even number), got {len(states)}.")
            half = len(states) // 2
            forward_state, backward_state = states[:half], states[half:]
        y = self.forward_layer(inputs, mask=mask, training=training, initial_state=forward_state)
        y_rev = self.backward_layer(inputs, mask=mask, training=training, initial_state=backward_state)
        if self.return_state:
            y, forward_states = y[0], y[1:]
            y_rev, backward_states = y_rev[0], y_rev[1:]
        if self.return_sequences:
            y_rev = y_rev.flip(1)  # back into input order
        if self.merge_mode == "concat":
            output: Any = torch.cat([y, y_rev], dim=-1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = [y, y_rev]
        if self.return_state:
            output = (output if isinstance(output, list) else [output]) + list(forward_states) + list(backward_states)
        return output

    def reset_state(self) -> None:
        """Zeroes both directions' kept states (a stateful wrapped layer only, as Keras 3)."""
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        self.forward_layer.reset_state()
        self.backward_layer.reset_state()

    def reset_states(self) -> None:
        self.reset_state()

    @property
    def states(self) -> Any:
        """The forward then backward kept states of a stateful wrapped layer, else None."""
        if self.forward_layer.states and self.backward_layer.states:
            return tuple(self.forward_layer.states + self.backward_layer.states)
        return None

    def compute_mask(self, _: Any, mask: Any) -> Any:
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask: Any = mask if self.return_sequences else None
        if self.merge_mode is None:
            output_mask = [output_mask, output_mask]
        if self.return_state:
            state_masks = [None] * (2 * len(self.forward_layer.state_size))
            return (output_mask if isinstance(output_mask, list) else [output_mask]) + state_masks
        return output_mask

    def compute_output_shape(self, sequences_shape: Any, initial_state_shape: Any = None) -> Any:
        forward = self.forward_layer.compute_output_shape(sequences_shape)
        output, states = (forward[0], list(forward[1:])) if self.return_state else (forward, [])
        if self.merge_mode == "concat":
            output = (*output[:-1], None if output[-1] is None else 2 * output[-1])
        elif self.merge_mode is None:
            output = [output, output]
        if self.return_state:
            return (output if isinstance(output, list) else [output]) + states + states
        return output

    def get_config(self) -> dict:
        backward = {"class_name": type(self.backward_layer).__name__, "config": self.backward_layer.get_config()}
        return {**super().get_config(), "merge_mode": self.merge_mode, "layer": self._original_config,
                "backward_layer": backward}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Bidirectional":
        config = dict(config)
        layer = _rebuild(config.pop("layer"), custom_objects)
        backward = config.pop("backward_layer", None)
        backward_layer = None if backward is None else _rebuild(backward, custom_objects)
        return cls(layer, backward_layer=backward_layer, **config)


class TimeDistributed(Layer):
    """Applies `layer` to every time step of a (batch, timesteps, ...) input (one call on batch*timesteps rows).

    >>> from torchstrategy.keras.layers.core import Dense
    >>> TimeDistributed(Dense(2))(torch.ones(4, 3, 5)).shape
    torch.Size([4, 3, 2])
    """

    def __init__(self, layer: Layer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(layer, Layer):
            raise ValueError(f"TimeDistributed needs a Keras layer, got {layer!r}.")
        self.layer = layer
        self.supports_masking = True

    def build(self, input_shape: Any) -> None:
        if not isinstance(input_shape, tuple) or len(input_shape) < 3:
            raise ValueError(f"TimeDistributed '{self.name}' needs an input of at least 3 dimensions (batch, "
                             f"timesteps, ...), got shape {input_shape}.")
        self.built = True

    def call(self, inputs: torch.Tensor, training: Optional[bool] = None, mask: Optional[torch.Tensor] = None) -> Any:
        batch, steps = inputs.shape[0], inputs.shape[1]
        kwargs: dict = {"training": training}
        if mask is not None and getattr(self.layer, "_call_takes_mask", False):
            kwargs["mask"] = mask.reshape((batch * steps,) + tuple(mask.shape[2:]))
        flat = inputs.reshape((batch * steps,) + tuple(inputs.shape[2:]))
        output = self.layer(flat, **kwargs)
        return output.reshape((batch, steps) + tuple(output.shape[1:]))

    def get_config(self) -> dict:
        return {**super().get_config(), "layer": {"class_name": type(self.layer).__name__,
                                                  "config": self.layer.get_config()}}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "TimeDistributed":
        config = dict(config)
        return cls(_rebuild(config.pop("layer"), custom_objects), **config)


class Masking(Layer):
    """Masks time steps whose features all equal `mask_value`: they are zeroed and skipped downstream.

    >>> out = Masking()(torch.tensor([[[1.0], [0.0]]]))
    >>> out._keras_mask.tolist()
    [[True, False]]
    """

    def __init__(self, mask_value: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mask_value = float(mask_value)
        self.supports_masking = True

    def compute_mask(self, inputs: torch.Tensor, mask: Any = None) -> torch.Tensor:
        return (inputs != self.mask_value).any(dim=-1)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        keep = self.compute_mask(inputs)
        return inputs * keep[..., None].to(inputs.dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "mask_value": self.mask_value}


__all__: Sequence[str] = ["SimpleRNN", "LSTM", "GRU", "Bidirectional", "TimeDistributed", "Masking",
                          "SimpleRNNCell", "LSTMCell", "GRUCell"]
