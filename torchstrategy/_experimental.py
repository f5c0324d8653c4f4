"""`tf.experimental`: the names TF scripts use from it (`Optional`, the value-or-nothing of
`get_next_as_optional`; the `numpy` and `dtensor` namespaces), defined where they belong and named here."""
from __future__ import annotations

from torchstrategy.data.experimental import Optional

__all__ = ["Optional"]

# tf.experimental.dtensor (it brings in torch.distributed.tensor) and tf.experimental.numpy load on first use
from torchstrategy._machinery.lazy import lazy_namespace  # noqa: E402

__getattr__, _dir = lazy_namespace(__name__, {"dtensor": "torchstrategy.dtensor",
                                              "numpy": "torchstrategy.experimental_numpy",
                                              "RowPartition": "torchstrategy.ragged:RowPartition",
                                              "DynamicRaggedShape": "torchstrategy.ragged:DynamicRaggedShape"})
__all__ += ["dtensor", "numpy", "RowPartition", "DynamicRaggedShape"]
