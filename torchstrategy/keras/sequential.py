"""`keras.Sequential`: a plain stack of layers, each feeding the next, with Keras 3's symbolic input/output once
it knows its Input; the compile/fit surface is Model's (models.py)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy import _context
from torchstrategy.keras import functional
from torchstrategy.keras.functional import InputLayer, KerasTensor
from torchstrategy.keras.layers import fusion
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.models import Model
from torchstrategy.nest import flatten as flatten_structure


class Sequential(Model):
    """A plain stack of layers, each feeding the next (keras.Sequential).

    >>> import torchstrategy as tf
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
    ...                              tf.keras.layers.Dense(1)])
    >>> model.output_shape
    (None, 1)
    """

    def __init__(self, layers: Optional[Sequence[Layer]] = None, trainable: bool = True,
                 name: Optional[str] = None) -> None:
        super().__init__(trainable=trainable, name=name)
        self.autocast = False  # as Keras 3: a model's layers cast their own inputs, each to its own policy
        self._stack = torch.nn.ModuleList()
        self._input_layer: Optional[InputLayer] = None
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._build_from_input_shape()  # once for the whole stack (a build per add ran it n times)

    @property
    def layers(self) -> list[Layer]:
        return list(self._stack)

    def add(self, layer: Any, rebuild: bool = True) -> None:
        """Appends a layer; a KerasTensor from `Input` sets the input shape instead. With `rebuild`, a model
        whose input shape is known is built again at once."""
        if isinstance(layer, KerasTensor):
            layer = layer.node.layer
        if isinstance(layer, InputLayer):
            if self._stack or self._input_layer is not None:
                raise ValueError("An InputLayer/Input can only be the first entry of a Sequential model.")
            self._input_layer = layer
            if rebuild:
                self._build_from_input_shape()
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential.add takes Keras layers; got {type(layer).__name__}: {layer!r}.")
        if any(existing.name == layer.name for existing in self._stack):
            raise ValueError(f"All layers added to a Sequential model should have unique names. Name "
                             f"'{layer.name}' is already the name of a layer in this model.")
        self._stack.append(layer)
        if len(self._stack) == 1 and self._input_layer is None and layer._batch_input_shape is not None:
            self._input_layer = InputLayer(batch_input_shape=layer._batch_input_shape, dtype=layer.dtype)
        if rebuild:
            self._build_from_input_shape()

    def pop(self, rebuild: bool = True) -> Layer:
        """Removes and returns the last layer (the model is built again when `rebuild` and it can be)."""
        if not self._stack:
            raise TypeError("There are no layers in the model.")
        layer = self._stack.pop(-1)
        if rebuild:
            self._build_from_input_shape()
        return layer

    def build(self, input_shape: Any = None) -> None:
        """Builds the layers for `input_shape` (default: the shape of the model's Input, if it has one)."""
        if input_shape is None:
            if self._input_layer is None:
                raise ValueError("You must provide an `input_shape` argument: this Sequential model has no Input.")
            self._build_from_input_shape()
            return
        super().build(input_shape)

    def _build_from_input_shape(self) -> None:
        if self._input_layer is not None and self._stack:
            self.built = False
            spec = self._input_layer.output
            with torch.no_grad(), _context.shape_probe(spec.shape[0]):
                self(functional._concrete(spec), training=False)

    @property
    def input_shape(self) -> Any:
        if self._input_layer is None:
            raise AttributeError("The model has no defined input shape yet: call it on data or give input_shape.")
        return self._input_layer.output.shape

    @property
    def output_shape(self) -> Any:
        return self.compute_output_shape(self.input_shape)

    @property
    def input(self) -> Any:
        """The symbolic input of a Sequential that starts with an Input (or knows its input shape)."""
        return self._symbolic("input")

    @property
    def output(self) -> Any:
        """The symbolic output: the layers called in turn on `input`, once (their `output`s are defined then)."""
        return self._symbolic("output")

    @property
    def inputs(self) -> list:
        """`[input]` of a Sequential that knows its input (Keras 3); AttributeError before that."""
        return flatten_structure(self._symbolic("input"))

    @property
    def outputs(self) -> list:
        """`[output]` of a Sequential that knows its input (Keras 3); AttributeError before that."""
        return flatten_structure(self._symbolic("output"))

    def _symbolic(self, what: str) -> Any:
        if self._input_layer is None:
            raise AttributeError(f"Sequential model '{self.name}' has no defined {what}s yet.")
        if what == "input":
            return self._input_layer.output
        graph = self.__dict__.get("_symbolic_graph")
        if graph is None or graph[0] != [id(layer) for layer in self._stack]:
            tensor = self._input_layer.output
            for layer in self._stack:
                tensor = layer(tensor)
            graph = ([id(layer) for layer in self._stack], tensor)
            self.__dict__["_symbolic_graph"] = graph
        return graph[1]

    def __getattr__(self, name: str) -> Any:
        if name in ("input", "output", "inputs", "outputs"):  # the property raised: keep its message
            self._symbolic(name.rstrip("s"))
        return super().__getattr__(name)

    def call(self, inputs: Any, training: Optional[bool] = None, mask: Any = None, **kwargs: Any) -> Any:
        # the input layer and the stack by dict lookups (as attributes, modules go through nn.Module.__getattr__)
        modules = self._modules
        first = modules.get("_input_layer")
        x = inputs if first is None or first.passes_through(inputs) else first(inputs)
        layers, index = list(modules["_stack"]._modules.values()), 0
        while index < len(layers):
            if index + 1 < len(layers) and fusion.pools_before_relu(layers[index], layers[index + 1]):
                x = fusion.pool_then_relu(layers[index], layers[index + 1], x, training)  # same numbers, less memory traffic
                index += 2
                continue
            x = layers[index](x, training=training)
            index += 1
        return x

    def get_config(self) -> dict:
        from torchstrategy.keras import saving

        from torchstrategy.keras import keras_config

        entries = [saving.serialize_layer(self._input_layer)] if self._input_layer is not None else []
        entries += [saving.serialize_layer(layer) for layer in self._stack]
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": keras_config.dtype_policy_config(self.dtype_policy.name), "layers": entries}
        if self._build_input_shape is not None:
            config["build_input_shape"] = keras_config.plain(self._build_input_shape)
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Sequential":
        from torchstrategy.keras import saving

        layers = [saving.deserialize_layer(entry, custom_objects) for entry in config["layers"]]
        model = cls(layers, name=config.get("name"))
        if not model.built and config.get("build_input_shape") is not None:
            from torchstrategy.keras import graph_config

            model.build(graph_config.as_shape(config["build_input_shape"]))
        return model
