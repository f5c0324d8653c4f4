"""`tf.experimental`: the few names TF scripts use from it (`Optional`, the value-or-nothing of
`get_next_as_optional`), defined where they belong and named here."""
from __future__ import annotations

from torchstrategy.data.experimental import Optional

__all__ = ["Optional"]
