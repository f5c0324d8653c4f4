"""`tf.keras.mixed_precision`, a namespace only: dtype policies live in keras/dtype_policies.py and
`LossScaleOptimizer` in keras/optimizers/loss_scale.py; this module names them as Keras does."""
from __future__ import annotations

from torchstrategy.keras.dtype_policies import DTypePolicy, global_policy, set_global_policy
from torchstrategy.keras.optimizers.loss_scale import LossScaleOptimizer

Policy = DTypePolicy  # Keras 2's name; Keras 3 keeps it as an alias
dtype_policy = global_policy  # Keras 3 names
set_dtype_policy = set_global_policy

__all__ = ["DTypePolicy", "Policy", "global_policy", "set_global_policy", "dtype_policy", "set_dtype_policy",
           "LossScaleOptimizer"]
