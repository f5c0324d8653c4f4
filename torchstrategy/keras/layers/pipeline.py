"""Keras's preprocessing `Pipeline`: layers applied in order (training flag and masks handed on), kept
out of the model's layer graph."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras.layers.base import Layer


class Pipeline(Layer):
    """Applies `layers` one after the other.

    >>> from torchstrategy.keras.layers import Rescaling
    >>> Pipeline([Rescaling(2.0), Rescaling(0.5, offset=1.0)])(torch.ones(2)).tolist()
    [2.0, 2.0]
    """

    _float_policy_only = False

    def __init__(self, layers: list, name: Optional[str] = None) -> None:
        super().__init__(name=name)
        self._pipeline_layers = list(layers)
        self.built = True

    @property
    def layers(self) -> list:
        """The layers, in the order they run."""
        return self._pipeline_layers

    def _cast_inputs(self, inputs: Any) -> Any:
        return inputs  # each layer casts its own inputs

    def call(self, inputs: Any, training: bool = True, mask: Any = None) -> Any:
        outputs = inputs
        for layer in self._pipeline_layers:
            kwargs: dict = {}
            if getattr(layer, "_call_takes_mask", False) and mask is not None:
                kwargs["mask"] = mask
            if getattr(layer, "_call_takes_training", False) and training is not None:
                kwargs["training"] = training
            outputs = layer(inputs, **kwargs)
            inputs = outputs
            mask = getattr(outputs, "_keras_mask", None)
        return outputs

    def get_config(self) -> dict:
        from torchstrategy.keras.layers.serialization import serialize

        return {"layers": [serialize(layer) for layer in self._pipeline_layers], "name": self.name}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Pipeline":
        from torchstrategy.keras.layers.serialization import deserialize

        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError("`Pipeline` config must contain a `layers` key mapping to a list of serialized layers. "
                             f"Received config with layers={layers}.")
        return cls([deserialize(entry, custom_objects) if isinstance(entry, dict) else entry for entry in layers],
                   name=config.get("name"))
