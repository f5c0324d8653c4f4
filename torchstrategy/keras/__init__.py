"""`tf.keras`: models, layers, losses, metrics, optimizers, callbacks and datasets, with Keras
names and defaults. Submodules load on first use."""
from __future__ import annotations

from torchstrategy._machinery.lazy import lazy_namespace

__getattr__, __dir__ = lazy_namespace(__name__, {
    "__version__": "torchstrategy.keras._legacy_backend.settings:_KERAS_VERSION",  # keras.__version__, as TF 2.21 ships
    "layers": "torchstrategy.keras.layers",
    "models": "torchstrategy.keras.models",
    "losses": "torchstrategy.keras.losses",
    "metrics": "torchstrategy.keras.metrics",
    "optimizers": "torchstrategy.keras.optimizers",
    "callbacks": "torchstrategy.keras.callbacks",
    "activations": "torchstrategy.keras.activations",
    "initializers": "torchstrategy.keras.initializers",
    "regularizers": "torchstrategy.keras.regularizers",
    "constraints": "torchstrategy.keras.constraints",
    "datasets": "torchstrategy.keras.datasets",
    "backend": "torchstrategy.keras.backend",
    "utils": "torchstrategy.keras.utils",
    "preprocessing": "torchstrategy.keras.preprocessing",
    "mixed_precision": "torchstrategy.keras.mixed_precision",
    "dtype_policies": "torchstrategy.keras.dtype_policies",
    "DTypePolicy": "torchstrategy.keras.dtype_policies:DTypePolicy",
    "distribution": "torchstrategy.keras.distribution",
    "export": "torchstrategy.keras.export",
    "Model": "torchstrategy.keras.models:Model",
    "Sequential": "torchstrategy.keras.models:Sequential",
    "Input": "torchstrategy.keras.functional:Input",
    "InputLayer": "torchstrategy.keras.functional:InputLayer",
    "remat": "torchstrategy.keras.rematerialization:remat",
    "RematScope": "torchstrategy.keras.rematerialization:RematScope",
    "ops": "torchstrategy.keras.ops",
    "config": "torchstrategy.keras._legacy_backend:config",
    "version": "torchstrategy.keras._legacy_backend:version",
    "Layer": "torchstrategy.keras.layers.base:Layer",
    "InputSpec": "torchstrategy.keras.layers.base:InputSpec",
    "Loss": "torchstrategy.keras.losses.base:Loss",
    "Metric": "torchstrategy.keras.metrics.base:Metric",
    "Optimizer": "torchstrategy.keras.optimizers.base:Optimizer",
    "Variable": "torchstrategy.keras.variables:Variable",
    "Initializer": "torchstrategy.keras.initializers:Initializer",
    "Regularizer": "torchstrategy.keras.regularizers:Regularizer",
    "saving": "torchstrategy.keras.saving",
    "random": "torchstrategy.keras.random",
    "applications": "torchstrategy.keras.applications",
})
