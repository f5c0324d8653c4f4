"""tf.train.experimental.PythonState: a Python object a tf.train.Checkpoint saves as the one string its
`serialize()` gives and hands back to its `deserialize()` on restore (TF's key: `py_state`)."""
from __future__ import annotations

import abc
from typing import Union


class PythonState(abc.ABC):
    """Subclass with `serialize()` (str or bytes) and `deserialize(string_value)` (given bytes, as TF gives);
    a Checkpoint holding the object saves the string and restores through `deserialize`."""

    @abc.abstractmethod
    def serialize(self) -> Union[str, bytes]:
        """The object's state as one string."""

    @abc.abstractmethod
    def deserialize(self, string_value: bytes) -> None:
        """Sets the object's state from what `serialize` gave (as bytes)."""

    def state_dict(self) -> dict:
        """What a Checkpoint writes: {'py_state': serialize() as bytes}."""
        value = self.serialize()
        if isinstance(value, str):
            value = value.encode("utf-8")
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"{type(self).__name__}.serialize() must return str or bytes; got {type(value).__name__}.")
        return {"py_state": bytes(value)}

    def load_state_dict(self, state: dict) -> None:
        """Restores through `deserialize` from a state `state_dict` wrote."""
        self.deserialize(state["py_state"])
