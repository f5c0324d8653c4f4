"""Keras models: `Model` (subclassing API and the compile/fit/evaluate/predict surface) and the functional
`Model(inputs, outputs)`; `Sequential` is in sequential.py, the loops in training.py."""
from __future__ import annotations

from typing import Any, Optional

import warnings

import torch

from torchstrategy import _context
from torchstrategy.distribute.parts.progress import public_call
from torchstrategy.keras import compile_utils, functional, runtime, steps, training
from torchstrategy.keras.functional import InputLayer, KerasTensor
from torchstrategy.keras.saving import load_model, save_model  # noqa: F401  (keras.models.load_model, save_model)
from torchstrategy.keras.layers.base import Layer, _shape_of
from torchstrategy.nest import flatten as flatten_structure, map_structure


class Model(Layer):
    """A layer with training: subclass it and write `call`, or build it functionally.

    >>> import torchstrategy as tf
    >>> inputs = tf.keras.Input(shape=(4,))
    >>> model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
    >>> model.compile(optimizer="adam", loss="mse")
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> "Model":
        if cls is Model and _functional_init_arguments(args, kwargs):  # Keras: `Model(inputs, outputs)`
            return super().__new__(Functional)
        return super().__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if _functional_init_arguments(args, kwargs) and not isinstance(self, Functional):
            # Keras: a subclass given (inputs, outputs), as `CustomModel(inputs, outputs)` or from its own
            # __init__, becomes that subclass on top of the functional model. A subclass whose own __init__ takes
            # other positional arguments (`Sub(3, "relu")`) is not: only what reaches Model.__init__ counts.
            object.__setattr__(self, "__class__", _functional_subclass(type(self)))
            Functional.__init__(self, *args, **kwargs)  # type: ignore[arg-type]
            return
        if args:
            raise TypeError(f"{type(self).__name__}() got unexpected positional arguments {args!r}; a subclassed "
                            f"Model passes only keyword arguments (name=, trainable=, dtype=) to Model.__init__.")
        super().__init__(**kwargs)
        self.stop_training = False
        self.history: Any = None
        self.optimizer: Any = None
        # Keras 3: `model.loss` is compile()'s `loss` argument (None before), an instance attribute over the
        # deprecated `Model.loss(y, y_pred)` method; set in __dict__ so a torch loss module is not registered.
        self.__dict__["loss"] = None
        self._compiled: Optional[compile_utils.CompiledState] = None
        self._strategy = _context.get_strategy() if _context.has_strategy() else None
        self.run_eagerly = False

    # ----- facts ---------------------------------------------------------------------------
    @property
    def distribute_strategy(self) -> Any:
        """The strategy whose scope created (or compiled) the model; else the current one."""
        return self._strategy or _context.get_strategy()

    @property
    def layers(self) -> list[Layer]:
        return [m for m in self.children() if isinstance(m, Layer) and not isinstance(m, InputLayer)]

    def get_layer(self, name: Optional[str] = None, index: Optional[int] = None) -> Layer:
        """The layer called `name`, or at position `index` of `model.layers` (give exactly one)."""
        if index is not None and name is not None:
            raise ValueError(f"Provide only a layer name or a layer index, not both. Received: index={index}, "
                             f"name={name}.")
        if index is not None:
            layers = self.layers
            if not -len(layers) <= index < len(layers):
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only has "
                                 f"{len(layers)} layers.")
            return layers[index]
        if name is None:
            raise ValueError("Provide either a layer name or a layer index at `get_layer`.")
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[l.name for l in self.layers]}.")

    def to_json(self, **kwargs: Any) -> str:
        """The model's architecture as a JSON string (`keras.models.model_from_json` rebuilds it);
        `kwargs` go to `json.dumps`."""
        import json

        from torchstrategy.keras import saving

        return json.dumps(saving.serialize_layer(self), default=_json_default, **kwargs)

    @property
    def metrics(self) -> list:
        """Keras 3's: the compiled loss tracker and metrics, then the metrics the model and its layers hold as
        attributes (a tracker made in __init__), nested models left out."""
        compiled = self._compiled.all_metrics() if self._compiled else []
        held = self._held_metrics(lambda child: isinstance(child, Model))
        return compiled + [m for m in held if all(m is not c for c in compiled)]

    @property
    def metrics_variables(self) -> list:
        """The state variables of every metric in `metrics`, metric by metric (Keras 3)."""
        return [variable for metric in self.metrics for variable in metric.variables]

    def stateless_compute_loss(self, trainable_variables: Any, non_trainable_variables: Any, metrics_variables: Any,
                               x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None,
                               training: bool = True) -> tuple:
        """`compute_loss` with the variables given as values, changing none of them: `(loss, (trainable,
        non_trainable, metrics_variables))` with the values after the call (keras/stateless.py)."""
        from torchstrategy.keras import stateless

        return stateless.model_compute_loss(self, trainable_variables, non_trainable_variables, metrics_variables,
                                            x, y, y_pred, sample_weight, training)

    @property
    def metrics_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def loss(self, y: Any, y_pred: Any, sample_weight: Any = None) -> torch.Tensor:
        """Keras 3's deprecated spelling of `compute_loss(None, y, y_pred, sample_weight)`. On a model it is
        hidden by the instance attribute `model.loss` (compile()'s `loss` argument, as in Keras 3)."""
        warnings.warn("`model.loss()` is deprecated. Instead, use `model.compute_loss(x, y, y_pred, sample_weight, "
                      "training)`.", stacklevel=2)
        return self.compute_loss(None, y, y_pred, sample_weight)

    def build(self, input_shape: Any) -> None:
        """Creates the weights by calling the model once on zeros of `input_shape` (batch may be None)."""
        if self.built:
            return
        shapes = [input_shape] if isinstance(input_shape, tuple) and all(
            d is None or isinstance(d, int) for d in input_shape) else list(input_shape)
        batch = shapes[0][0] if shapes and shapes[0] else None  # a stateful RNN's states take a static batch
        dummies = [torch.zeros((batch or 1,) + tuple(1 if d is None else d for d in s[1:])) for s in shapes]
        with torch.no_grad(), _context.shape_probe(batch):
            self(dummies[0] if len(dummies) == 1 else dummies, training=False)

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        strategy = self.__dict__.get("_strategy")
        if strategy is not None and strategy.setup_before_first_call and runtime.runtime_of(self) is None \
                and torch.is_grad_enabled() and not self.__dict__.get("_setting_up") \
                and not _context.inside_layer_call() \
                and not any(isinstance(leaf, KerasTensor) for leaf in flatten_structure(inputs)):
            # A sharding strategy shards the model before its first training call, in a custom loop as in fit
            # (building calls run without gradients, so layers a Sequential adds later are sharded too).
            self.__dict__["_setting_up"] = True
            try:
                runtime.set_up(self, inputs)
            finally:
                self.__dict__["_setting_up"] = False
        return super().__call__(inputs, *args, **kwargs)

    def _maybe_build(self, inputs: Any) -> None:
        # Sub-layers build themselves during the call; remember the shape for save/load.
        if self._build_input_shape is None:
            self._build_input_shape = map_structure(lambda t: _shape_of(t) if hasattr(t, "shape") else None, inputs)
        if not self.built:  # (torch's __setattr__ on every call costs more than the check)
            self.built = True

    def call(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement call(inputs, training=None).")

    # ----- compile and the loops (training.py) ---------------------------------------------
    def compile(
        self,
        optimizer: Any = "rmsprop",
        loss: Any = None,
        loss_weights: Any = None,
        metrics: Any = None,
        weighted_metrics: Any = None,
        run_eagerly: bool = False,
        steps_per_execution: int = 1,
        jit_compile: Any = "auto",
        auto_scale_loss: bool = True,
    ) -> None:
        """Configures the model for training (Keras `compile`). With `auto_scale_loss` (Keras 3's), a
        'mixed_float16' policy wraps the optimizer in a LossScaleOptimizer."""
        if steps_per_execution is None:
            steps_per_execution = 1
        if isinstance(steps_per_execution, bool) or not isinstance(steps_per_execution, int) \
                or steps_per_execution < 1:
            raise ValueError(f"steps_per_execution must be a positive integer; got {steps_per_execution!r}.")
        if jit_compile not in (None, True, False, "auto"):
            raise ValueError(f"jit_compile must be True, False or 'auto'; got {jit_compile!r}.")
        if run_eagerly and jit_compile is True:
            warnings.warn("run_eagerly=True turns jit_compile off (as Keras does).", stacklevel=2)
            jit_compile = False
        if _context.has_strategy():
            current = _context.get_strategy()
            if self._strategy is None and self.built and getattr(current, "needs_model_in_scope", False):
                raise ValueError(
                    f"Model '{self.name}' was created outside strategy.scope(), but {type(current).__name__} "
                    f"needs its variables created inside it. Build the model (and its optimizer) within "
                    f"`with strategy.scope():`, then compile it there."
                )
            self._strategy = self._strategy or current
        from torchstrategy.keras import optimizers
        from torchstrategy.keras.optimizers.loss_scale import wrap_for_policy

        optimizer = optimizers.get(optimizer)
        self.optimizer = wrap_for_policy(self.dtype_policy, optimizer) if auto_scale_loss else optimizer
        # 'auto' (Keras 3's default) runs eagerly here: torch.compile only when asked with True
        self.__dict__["loss"] = loss  # what Keras 3's model.loss reads back (see __init__)
        self._compiled = compile_utils.CompiledState(self, loss, metrics, loss_weights, weighted_metrics,
                                                jit_compile=jit_compile is True,
                                                steps_per_execution=steps_per_execution)
        self.run_eagerly = bool(run_eagerly)
        runtime.forget(self)
        self.stop_training = False

    # ----- Keras's overridable steps (steps.py): called once per replica and batch ----------
    def train_step(self, data: Any) -> dict:
        """One training step on a batch `(x, y[, sample_weight])`; returns the logs. Override it to
        customise `fit()` (GradientTape, `self.compute_loss`, `self.optimizer.apply_gradients`)."""
        return steps.train_step(self, data)

    def test_step(self, data: Any) -> dict:
        """One evaluation step; returns the logs. Override it to customise `evaluate()`."""
        return steps.test_step(self, data)

    def predict_step(self, data: Any) -> Any:
        """The outputs for one batch. Override it to customise `predict()`."""
        return steps.predict_step(self, data)

    def compute_loss(self, x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None,
                     training: bool = True) -> torch.Tensor:
        """The compiled loss of a batch plus the regularization losses (Keras `compute_loss`)."""
        return steps.compute_loss(self, x, y, y_pred, sample_weight, training)

    def compute_metrics(self, x: Any, y: Any, y_pred: Any, sample_weight: Any = None) -> dict:
        """Updates the compiled metrics and returns every metric's current result."""
        return steps.compute_metrics(self, x, y, y_pred, sample_weight)

    def get_metrics_result(self) -> dict:
        return {metric.name: metric.result() for metric in self.metrics}

    def compiled_loss(self, y: Any, y_pred: Any, sample_weight: Any = None,
                      regularization_losses: Any = None) -> torch.Tensor:
        """Keras 2's compiled loss, deprecated in Keras 3: the compiled loss of a batch plus the model's own
        regularization losses (`self.losses`, whatever `regularization_losses` says, as Keras 3 does), scaled for
        distribution. As Keras 2 (not 3) it also records the loss in the 'loss' metric, so a Keras 2
        `train_step` reports it."""
        warnings.warn("`model.compiled_loss()` is deprecated. Instead, use `model.compute_loss(x, y, y_pred, "
                      "sample_weight, training)`.", stacklevel=2)
        return steps.compiled_loss(self, y, y_pred, sample_weight)

    @property
    def compiled_metrics(self) -> steps.CompiledMetrics:
        """Keras 2's compiled metrics (`self.compiled_metrics.update_state(y, y_pred)`)."""
        return steps.CompiledMetrics(self)

    @property
    def steps_per_execution(self) -> int:
        return self._compiled.steps_per_execution if self._compiled else 1

    def _require_compiled(self, what: str) -> compile_utils.CompiledState:
        if self._compiled is None:
            raise RuntimeError(f"You must compile your model before {what}. "
                               f"Call model.compile(optimizer, loss, metrics) first.")
        return self._compiled

    def fit(self, x: Any = None, y: Any = None, batch_size: Optional[int] = None, epochs: int = 1,
            verbose: Any = "auto", callbacks: Any = None, validation_split: float = 0.0,
            validation_data: Any = None, shuffle: Any = True, class_weight: Any = None, sample_weight: Any = None,
            initial_epoch: int = 0, steps_per_epoch: Optional[int] = None, validation_steps: Optional[int] = None,
            validation_batch_size: Optional[int] = None, validation_freq: Any = 1) -> Any:
        """Trains for `epochs` epochs and returns a History (keys 'loss', 'accuracy', 'val_loss', ...)."""
        self._require_compiled("training/testing")
        return training.fit(self, **{k: v for k, v in locals().items() if k not in ("self", "__class__")})

    def evaluate(self, x: Any = None, y: Any = None, batch_size: Optional[int] = None, verbose: Any = "auto",
                 sample_weight: Any = None, steps: Optional[int] = None, callbacks: Any = None,
                 return_dict: bool = False, **kwargs: Any) -> Any:
        """Loss (and metrics) over the data: a scalar, a list [loss, *metrics], or a dict."""
        self._require_compiled("training/testing")
        return training.evaluate(self, **{k: v for k, v in locals().items() if k not in ("self", "__class__")})

    def predict(self, x: Any, batch_size: Optional[int] = None, verbose: Any = "auto", steps: Optional[int] = None,
                callbacks: Any = None) -> Any:
        """Model outputs for every input row, as NumPy arrays, in input order."""
        return training.predict(self, **{k: v for k, v in locals().items() if k not in ("self", "__class__")})

    def train_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None, class_weight: Any = None,
                       return_dict: bool = False) -> Any:
        """One gradient step on one batch; returns the loss (and metrics) of that batch alone: as in Keras 3,
        the metrics restart at every call (Keras 2's `reset_metrics` is gone)."""
        self._require_compiled("training/testing")
        return training.train_on_batch(self, x, y, sample_weight, return_dict, class_weight)

    def test_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None, return_dict: bool = False) -> Any:
        """The loss (and metrics) of one batch alone, without training (metrics restart at every call)."""
        self._require_compiled("training/testing")
        return training.test_on_batch(self, x, y, sample_weight, return_dict)

    def predict_on_batch(self, x: Any) -> Any:
        return training.predict_on_batch(self, x)

    def reset_metrics(self) -> None:
        for metric in self.metrics:
            metric.reset_state()

    # ----- saving and summary (saving.py, summary.py) -------------------------------------
    def save(self, filepath: str, overwrite: bool = True, zipped: Optional[bool] = None, **kwargs: Any) -> None:
        """Writes architecture, weights, compile settings and optimizer state to one file (keyword arguments as
        keras.saving.save_model: include_optimizer, save_format)."""
        from torchstrategy.keras import saving

        with public_call("model.save"):
            saving.save_model(self, filepath, overwrite=overwrite, zipped=zipped, **kwargs)

    def export(self, filepath: str, format: str = "tf_saved_model", verbose: Optional[bool] = None,
               input_signature: Any = None, **kwargs: Any) -> None:
        """Writes a serving directory (endpoint 'serve', signature 'serving_default'); see keras/export.py.
        `verbose=None` (Keras 3's default) prints the message, as True does."""
        from torchstrategy.keras import export

        export.export_model(self, filepath, format=format, verbose=verbose, input_signature=input_signature, **kwargs)

    def save_weights(self, filepath: str, overwrite: bool = True, max_shard_size: Any = None) -> None:
        from torchstrategy.keras import saving

        with public_call("model.save_weights"):
            saving.save_weights(self, filepath, overwrite=overwrite, max_shard_size=max_shard_size)

    def load_weights(self, filepath: str, skip_mismatch: bool = False, **kwargs: Any) -> None:
        from torchstrategy.keras import saving

        saving.load_weights(self, filepath, skip_mismatch=skip_mismatch, **kwargs)

    def summary(self, line_length: Optional[int] = None, positions: Any = None, print_fn: Any = None,
                expand_nested: bool = False, show_trainable: bool = False, layer_range: Any = None) -> None:
        """Prints Keras 3's table of layers, output shapes and parameter counts (summary.py)."""
        from torchstrategy.keras import summary

        summary.print_summary(self, line_length=line_length, positions=positions, print_fn=print_fn,
                              expand_nested=expand_nested, show_trainable=show_trainable, layer_range=layer_range)

    def get_quantization_layer_structure(self, mode: Optional[str] = None) -> Optional[dict]:
        """Keras's hook for GPTQ/AWQ ({'pre_block_layers': [...], 'sequential_blocks': [...]}); None by default."""
        del mode
        return None

    def quantize(self, mode: Optional[str] = None, config: Any = None, filters: Any = None, **kwargs: Any) -> None:
        """Quantizes every (filtered) layer's weights: 'int8' or 'int4' for Dense, EinsumDense and Embedding, as
        in Keras 3.15; layers that cannot be quantized warn. float8, GPTQ and AWQ raise NotImplementedError."""
        from torchstrategy.keras.layers import quantized

        quantized.quantize_model(self, mode, config, filters, kwargs)

    def get_config(self) -> dict:
        return {"name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Model":
        """The model a `get_config()` describes: a functional model's config (layers, input_layers,
        output_layers) rebuilds the graph, as Keras does for Model, Functional and subclasses whose __init__
        takes (inputs, outputs, name) or (*args, **kwargs); any other config goes to the constructor."""
        from torchstrategy.keras import model_cloning

        if model_cloning.is_functional_config(config) and model_cloning.revivable_as_functional(cls, Functional):
            from torchstrategy.keras import saving

            return saving.functional_from_config(config, custom_objects, cls=cls)
        try:
            return cls(**config)
        except TypeError as error:
            raise TypeError(f"Unable to revive model from config. When overriding the `get_config()` method, make "
                            f"sure that the returned config contains all items used as arguments in the constructor "
                            f"to {cls}, which is the default behavior. You can override this default behavior by "
                            f"defining a `from_config(cls, config)` class method to specify how to create an "
                            f"instance of {cls.__name__} from its config.\n\nReceived config={config}\n\nError "
                            f"encountered during deserialization: {error}") from error

    def get_compile_config(self) -> Optional[dict]:
        return self._compiled.get_config() if self._compiled else None


class Functional(Model):
    """A model defined by a graph of layer calls from `Input`s to outputs."""

    def __init__(self, inputs: Any, outputs: Any, name: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.autocast = False  # as Keras 3: a model's layers cast their own inputs, each to its own policy
        for tensor in flatten_structure(inputs):  # keras.Input()s, or (Keras 3) KerasTensors computed in another graph
            if not isinstance(tensor, KerasTensor) or tensor.node is None:
                raise ValueError(f"Model inputs must be KerasTensors (from keras.Input()); got {tensor!r}.")
        inputs, outputs = functional.rooted_at_inputs(inputs, outputs)  # intermediate inputs become Inputs
        self._input_structure = inputs
        self._inputs = [t for t in flatten_structure(inputs)]
        self._outputs = outputs
        self._nodes = functional.topological_nodes(outputs, self._inputs)
        self._input_layers = torch.nn.ModuleList([t.node.layer for t in self._inputs
                                                  if isinstance(t.node.layer, InputLayer)])
        # Keras's order (so weights and weight files line up layer by layer with Keras's)
        ordered = functional.keras_layer_order(self._inputs, outputs)
        self.__dict__["_layer_order"] = ordered
        self._graph_layers = torch.nn.ModuleList([l for l in ordered if not isinstance(l, InputLayer)])
        self.built = True

    @property
    def layers(self) -> list[Layer]:
        return [l for l in self.graph_layers if not getattr(l, "_keras_operation", False)]

    @property
    def graph_layers(self) -> list[Layer]:
        """Every step of the graph in Keras's order: `layers` plus the tensor operations (`x + 1.0`)."""
        return list(self.__dict__["_layer_order"])

    @property
    def inputs(self) -> list[KerasTensor]:
        return list(self._inputs)

    @property
    def outputs(self) -> list[KerasTensor]:
        return flatten_structure(self._outputs)

    @property
    def input(self) -> Any:
        """The model's symbolic input(s), in the structure given to `Model(inputs, ...)`."""
        if isinstance(self._input_structure, (list, tuple)) and len(self._input_structure) == 1:
            return self._input_structure[0]
        return self._input_structure

    @property
    def output(self) -> Any:
        """The model's symbolic output(s), in the structure given to `Model(..., outputs)`."""
        if isinstance(self._outputs, (list, tuple)) and len(self._outputs) == 1:
            return self._outputs[0]
        return self._outputs

    @property
    def input_shape(self) -> Any:
        shapes = [t.shape for t in self._inputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self) -> Any:
        shapes = [t.shape for t in self.outputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_names(self) -> list[str]:
        return [t.node.layer.name for t in self.outputs]

    def call(self, inputs: Any, training: Optional[bool] = None, mask: Any = None) -> Any:
        if isinstance(inputs, dict):
            values = [inputs[t.node.layer.name] for t in self._inputs]
        elif len(self._inputs) == 1 and not (isinstance(inputs, (list, tuple)) and len(inputs) == 1):
            values = [inputs]
        else:
            values = list(inputs)
        if len(values) != len(self._inputs):
            raise ValueError(f"Model '{self.name}' expects {len(self._inputs)} input(s), got {len(values)}.")
        values = functional.fit_input_ranks(self.name, self._inputs, values)
        if getattr(self, "_chained_pairs", None) is None:
            self._chained_pairs = functional.chained_pairs(self._nodes, self._outputs)
        return functional.run_graph(self._nodes, self._inputs, values, self._outputs, training, self._chained_pairs)

    def get_config(self) -> dict:
        from torchstrategy.keras import saving

        return saving.functional_config(self)


def _json_default(value: Any) -> Any:
    """JSON for the few non-JSON values a config holds (tuples become lists on their own)."""
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, torch.dtype):
        return str(value).replace("torch.", "")
    raise TypeError(f"to_json: {type(value).__name__} value {value!r} in the model config is not JSON-serializable.")


_FUNCTIONAL_SUBCLASSES: dict = {}


def _functional_init_arguments(args: tuple, kwargs: dict) -> bool:
    """Keras's test for `Model(inputs, outputs)` (positionally or by keyword)."""
    return len(args) == 2 or (len(args) == 1 and "outputs" in kwargs) or ("inputs" in kwargs and "outputs" in kwargs)


def _functional_subclass(cls: type) -> type:
    """`cls` with the functional model underneath (one class per subclass, made once)."""
    if cls not in _FUNCTIONAL_SUBCLASSES:
        _FUNCTIONAL_SUBCLASSES[cls] = type(cls.__name__, (cls, Functional), {"__module__": cls.__module__,
                                                                            "__qualname__": cls.__qualname__})
    return _FUNCTIONAL_SUBCLASSES[cls]


from torchstrategy.keras.model_cloning import clone_model, model_from_json  # noqa: E402,F401  (keras.models)


def __getattr__(name: str) -> Any:
    """`keras.models.Sequential`, from sequential.py on first use: that module builds on Model, so importing it
    here at import time would be a cycle when it is the one imported first (unpickling a Sequential)."""
    if name == "Sequential":
        from torchstrategy.keras.sequential import Sequential

        return Sequential
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
