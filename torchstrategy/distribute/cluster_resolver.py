"""`tf.distribute.cluster_resolver`: the resolvers live in torchstrategy.cluster (the only code
that reads the environment); this module gives them their TF names."""
from __future__ import annotations

from torchstrategy.cluster import (  # noqa: F401
    ClusterSpec, SimpleClusterResolver, SlurmClusterResolver, TFConfigClusterResolver, TorchElasticClusterResolver,
    TPUClusterResolver,
)
from torchstrategy.cluster.resolvers import ClusterResolver  # noqa: F401
