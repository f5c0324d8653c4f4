"""`keras.layers.serialize` / `keras.layers.deserialize`: a layer to and from Keras's
{'module', 'class_name', 'config', 'registered_name'} dictionary."""
from __future__ import annotations

from typing import Any, Optional


def serialize(layer: Any) -> dict:
    """Keras's serialized form of `layer` (its class name and `get_config()`)."""
    return {"module": "keras.layers", "class_name": type(layer).__name__, "config": layer.get_config(),
            "registered_name": None}


def deserialize(config: dict, custom_objects: Optional[dict] = None) -> Any:
    """Rebuilds a layer from `serialize`'s dictionary; your own classes go in `custom_objects`."""
    from torchstrategy.keras import saving

    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret serialized layer: expected a dict with 'class_name' and 'config', "
                         f"got {config!r}.")
    return saving.deserialize_layer({"class_name": config["class_name"], "config": config.get("config", {})},
                                    custom_objects)
