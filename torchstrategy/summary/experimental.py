"""`tf.summary.experimental`: the default step (`get_step`, `set_step`), `summary_scope` and `write_raw_pb`,
re-exported from the summary writer module that owns them."""
from __future__ import annotations

from torchstrategy.summary.writer import get_step, set_step, summary_scope, write_raw_pb

__all__ = ["get_step", "set_step", "summary_scope", "write_raw_pb"]
