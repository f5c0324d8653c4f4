"""`tf.experimental`: the few names TF scripts use from it (`Optional`, the value-or-nothing of
`get_next_as_optional`), defined where they belong and named here."""
from __future__ import annotations

from torchstrategy.data.experimental import Optional

__all__ = ["Optional"]

# tf.experimental.dtensor loads on first use (it brings in torch.distributed.tensor)
from torchstrategy._machinery.lazy import lazy_namespace  # noqa: E402

__getattr__, _dir = lazy_namespace(__name__, {"dtensor": "torchstrategy.dtensor"})
__all__ += ["dtensor"]
