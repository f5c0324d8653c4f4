"""`tf.version`: the TF release whose API and numbers torchstrategy follows (VERSION, as scripts check it),
and torchstrategy's own version."""
from __future__ import annotations

VERSION = "2.21.0"
GIT_VERSION = "torchstrategy"
COMPILER_VERSION = "torchstrategy (PyTorch backend)"
GRAPH_DEF_VERSION = 0
TORCHSTRATEGY_VERSION = "0.1.0"
