"""The checkpoint-IO part: how a strategy reads and writes the state of the modules and optimizers
it trains. Replicated strategies hold full tensors everywhere (sharded ones use sharded_io.py)."""
from __future__ import annotations

from typing import Any


class FullStateIO:
    """Every replica holds the full state, so the chief's copy is the whole truth."""

    sharded = False  # the chief writes the whole checkpoint

    def state_dict(self, module: Any) -> dict:
        return module.state_dict()

    def load_state_dict(self, module: Any, state: dict) -> Any:
        return module.load_state_dict(state)
