"""Keras's layer wrappers: the `Wrapper` base, SpectralNormalization, TorchModuleWrapper (any torch module as a
Keras layer), and JaxLayer/FlaxLayer, which need JAX and say what to use here instead."""
from __future__ import annotations

from typing import Any, Optional

import torch
from torch import nn

from torchstrategy.keras import initializers
from torchstrategy.keras.layers.base import InputSpec, Layer


def _serialize_layer(layer: Layer) -> dict:
    return {"module": "keras.layers", "class_name": type(layer).__name__, "config": layer.get_config(),
            "registered_name": None}


def _deserialize_layer(entry: Any, custom_objects: Optional[dict]) -> Layer:
    if isinstance(entry, Layer):
        return entry
    from torchstrategy.keras import saving

    return saving.deserialize_layer(entry, custom_objects)


class Wrapper(Layer):
    """Base class of layers that wrap another layer (`self.layer`), built with the same input shape.

    >>> class Twice(Wrapper):
    ...     def call(self, x):
    ...         return 2 * self.layer(x)
    >>> from torchstrategy.keras.layers import Dense
    >>> Twice(Dense(3))(torch.ones(1, 2)).shape
    torch.Size([1, 3])
    """

    def __init__(self, layer: Layer, **kwargs: Any) -> None:
        if not isinstance(layer, Layer):
            raise ValueError(f"Layer {layer} supplied to Wrapper isn't a supported layer type. Please ensure wrapped "
                             "layer is a valid Keras layer.")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape: Any = None) -> None:
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
            self.layer._build_input_shape = input_shape
        self.built = True

    def call(self, *args: Any, **kwargs: Any) -> Any:
        return self.layer(*args, **kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), "layer": _serialize_layer(self.layer)}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Wrapper":
        config = dict(config)
        return cls(_deserialize_layer(config.pop("layer"), custom_objects), **config)


def _unit(x: torch.Tensor) -> torch.Tensor:
    # Keras's ops.normalize(x, axis=None): x * min(rsqrt(sum(x**2)), 1 / epsilon), epsilon 1e-7
    return x * torch.clamp(torch.rsqrt(torch.sum(x * x)), max=1e7)


class SpectralNormalization(Wrapper):
    """Divides the wrapped layer's `kernel` (or `embeddings`) by its largest singular value, estimated by
    `power_iterations` steps of power iteration on a kept vector `vector_u`; updated in training calls.

    >>> from torchstrategy.keras.layers import Dense
    >>> SpectralNormalization(Dense(3))(torch.ones(2, 4), training=True).shape
    torch.Size([2, 3])
    """

    def __init__(self, layer: Layer, power_iterations: int = 1, **kwargs: Any) -> None:
        super().__init__(layer, **kwargs)
        if power_iterations <= 0:
            raise ValueError(f"`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.power_iterations = power_iterations

    def _kernel_name(self) -> str:
        for name in ("kernel", "embeddings"):
            if isinstance(getattr(self.layer, name, None), torch.Tensor):
                return name
        raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' nor 'embeddings'")

    def build(self, input_shape: Any) -> None:
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        kernel = getattr(self.layer, self._kernel_name())
        self.kernel_shape = tuple(kernel.shape)
        self.add_weight("vector_u", (1, self.kernel_shape[-1]), initializer=initializers.TruncatedNormal(stddev=0.02),
                        trainable=False, dtype=kernel.dtype)
        self.built = True

    @property
    def kernel(self) -> torch.Tensor:
        return getattr(self.layer, self._kernel_name())

    @property
    def weights(self) -> list[torch.Tensor]:
        # Keras's order: the wrapped kernel (tracked by the wrapper too), vector_u, then the layer's other weights
        inner = self.layer.weights
        kernel = self.kernel
        return [kernel, self.vector_u] + [w for w in inner if w is not kernel]

    def normalized_weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(new vector_u, kernel divided by its estimated spectral norm)."""
        weights = self.kernel.reshape(-1, self.kernel_shape[-1])
        u = self.vector_u
        for _ in range(self.power_iterations):
            v = _unit(u @ weights.t())
            u = _unit(v @ weights)
        u, v = u.detach(), v.detach()
        sigma = (v @ weights) @ u.t()
        return u.to(self.vector_u.dtype), (self.kernel / sigma).reshape(self.kernel_shape).to(self.kernel.dtype)

    def call(self, inputs: torch.Tensor, training: bool = False) -> torch.Tensor:
        if training and bool(torch.any(self.kernel != 0)):
            with torch.no_grad():
                new_u, new_kernel = self.normalized_weights()
                self.vector_u.copy_(new_u)
                self.kernel.copy_(new_kernel)
        output = self.layer(inputs)
        return output.to(inputs.dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return self.layer.compute_output_shape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "power_iterations": self.power_iterations}


class TorchModuleWrapper(Layer):
    """Any `torch.nn.Module` as a Keras layer: its parameters are the layer's weights (trainable as their
    `requires_grad` says) and `call` forwards to the module.

    >>> TorchModuleWrapper(torch.nn.Linear(4, 2))(torch.ones(3, 4)).shape
    torch.Size([3, 2])
    """

    def __init__(self, module: nn.Module, name: Optional[str] = None, output_shape: Any = None,
                 **kwargs: Any) -> None:
        if not isinstance(module, nn.Module):
            raise ValueError(f"TorchModuleWrapper needs a torch.nn.Module, got {module!r}.")
        super().__init__(name=name, **kwargs)
        self.module = module
        self.output_shape = output_shape
        self.built = True

    def _own_weights(self, trainable: Optional[bool]) -> list[torch.Tensor]:
        out = []
        for param in self.module.parameters():
            is_trainable = param.requires_grad and self._trainable
            if trainable is None or trainable == is_trainable:
                out.append(param)
        return out

    def call(self, *args: Any, training: Optional[bool] = None, **kwargs: Any) -> Any:
        """Runs the module, in eval mode when `training` is False and in train mode otherwise (Keras 3)."""
        if training is False:
            self.module.eval()
        else:
            self.module.train()
        return self.module(*args, **kwargs)

    def compute_output_shape(self, input_shape: Any) -> Any:
        if self.output_shape is not None:
            return tuple(self.output_shape)
        return super().compute_output_shape(input_shape)

    def get_config(self) -> dict:
        # the module object itself (configs round-trip within one process, as Lambda's function)
        return {**super().get_config(), "module": self.module, "output_shape": self.output_shape}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None,
                    safe_mode: Optional[bool] = None) -> "TorchModuleWrapper":
        """The layer from `get_config()`: the config holds the module object itself, so nothing is unpickled
        and `safe_mode` has nothing to refuse (Keras's config holds a torch.save() pickle)."""
        return cls(**config)


class JaxLayer(Layer):
    """Keras's wrapper of a JAX function; it needs the JAX backend, so here it raises NotImplementedError."""

    def __init__(self, call_fn: Any, init_fn: Any = None, params: Any = None, state: Any = None, seed: Any = None,
                 native_serialization_platforms: Any = None, **kwargs: Any) -> None:
        raise NotImplementedError("keras.layers.JaxLayer runs JAX functions, which this PyTorch-based Keras cannot "
                                  "call. Write the computation as a Layer (or wrap a torch.nn.Module with "
                                  "keras.layers.TorchModuleWrapper).")

    def call(self, inputs: Any, training: bool = False) -> Any:
        """Keras's signature; never reached (the constructor refuses)."""
        raise NotImplementedError("keras.layers.JaxLayer cannot run here: it calls JAX functions.")


class FlaxLayer(JaxLayer):
    """Keras's wrapper of a Flax module; it needs JAX, so here it raises NotImplementedError."""

    def __init__(self, module: Any, method: Any = None, variables: Any = None, **kwargs: Any) -> None:
        raise NotImplementedError("keras.layers.FlaxLayer runs Flax (JAX) modules, which this PyTorch-based Keras "
                                  "cannot call. Port the module to torch.nn and wrap it with "
                                  "keras.layers.TorchModuleWrapper.")
