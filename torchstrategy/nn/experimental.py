"""`tf.nn.experimental`: stateless_dropout and general_dropout, named here (they live in nn/_dropout.py)."""
from __future__ import annotations

from torchstrategy.nn._dropout import general_dropout, stateless_dropout

__all__ = ["general_dropout", "stateless_dropout"]
