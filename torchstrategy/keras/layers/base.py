"""The Keras `Layer` on top of `torch.nn.Module`: lazy build from the first input's shape,
Keras-ordered weights, input checks that name the layer, the `training` flag, and config."""
from __future__ import annotations

import inspect
import re
from typing import Any, Iterable, Optional, Sequence

import numpy as np
import torch
from torch import nn

from torchstrategy import _context
from torchstrategy._machinery.eager import eager_outputs
from torchstrategy.keras import dtype_policies as precision
from torchstrategy.nest import flatten, map_structure
from torchstrategy.keras import backend
from torchstrategy.keras.layers import masking_flow, quantized, tracking
from torchstrategy.keras.layers.input_spec import InputSpec, problem as _spec_problem
from torchstrategy.keras.layers.weight_args import legacy_weight_args


def _snake_case(name: str) -> str:
    # Keras's rule: digits stay with the word before them (Conv2D -> conv2d, MaxPooling2D -> max_pooling2d).
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _shape_str(shape: Sequence[Optional[int]]) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _is_symbolic(value: Any) -> bool:
    return getattr(value, "_keras_symbolic", False)


def _shape_of(value: Any) -> tuple:
    """Keras shape of a tensor: batch dimension reported as None."""
    shape = tuple(value.shape)
    return (None,) + tuple(int(d) for d in shape[1:]) if shape else ()


def _cast_leaf(value: Any, target: Optional[torch.dtype]) -> Any:
    """One input of a layer call: NumPy numbers as a tensor, floating tensors in the autocast `target` dtype."""
    if isinstance(value, np.ndarray) and value.dtype.kind not in "USO":  # text stays a NumPy array
        value = backend.to_tensor(value)
    if target is not None and target.is_floating_point and isinstance(value, torch.Tensor) \
            and value.is_floating_point() and value.dtype != target:
        return value.to(target)
    return value


class Layer(nn.Module):
    """Base class of every Keras layer: subclass it and write `build(input_shape)` and `call`.

    >>> class Scale(Layer):
    ...     def build(self, input_shape):
    ...         self.scale = self.add_weight("scale", (input_shape[-1],), initializer="ones")
    ...     def call(self, inputs):
    ...         return inputs * self.scale
    >>> Scale()(torch.ones(2, 3)).shape
    torch.Size([2, 3])
    """

    def __init__(
        self,
        *,
        activity_regularizer: Any = None,
        trainable: bool = True,
        dtype: Any = None,
        autocast: bool = True,
        name: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        # Keras 3 still takes Keras 2's input_shape / batch_input_shape / input_dim on any layer
        input_shape = kwargs.pop("input_shape", None)
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        input_dim = kwargs.pop("input_dim", None)
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unexpected keyword arguments: {sorted(kwargs)}")
        self.name = name or _context.unique_name(_snake_case(type(self).__name__))
        self._no_autocast: set[str] = set()  # weights read as stored even in a mixed call (add_weight(autocast=False))
        self.dtype_policy = dtype
        self.autocast = bool(autocast)
        self._trainable = trainable
        self.built = False
        self.input_spec: Optional[InputSpec] = None
        self.supports_masking = masking_flow.overrides_compute_mask(self, Layer)  # Keras 3's default
        self._weight_order: list[tuple[str, bool]] = []  # (attribute name, created trainable)
        # recorded now, not looked up during a step (the model's setup may replace it)
        self._distribute_strategy = _context.get_strategy() if _context.has_strategy() else None
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if batch_input_shape is not None:
            self._batch_input_shape: Optional[tuple] = tuple(batch_input_shape)
        elif input_shape is not None:
            self._batch_input_shape = (None,) + tuple(input_shape)
        else:
            self._batch_input_shape = None
        call_params = inspect.signature(self.call).parameters
        self._call_takes_training = "training" in call_params or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in call_params.values()
        )
        self._call_takes_mask = "mask" in call_params  # Keras passes the input's mask only to such calls
        # Keras 3: with no `training` given or handed down, a call runs with its own default (augmentation: True)
        default = call_params["training"].default if "training" in call_params else None
        self._call_training_required = default is inspect.Parameter.empty  # call(x, training): False is passed
        self._call_training_default = default if isinstance(default, bool) or default is None else None
        self._build_input_shape: Optional[Any] = None
        self._remat_mode = _context.keras_scope("remat")  # keras.RematScope in force at creation (Keras 3)
        self._losses: list = []  # add_loss() values of the current outermost call
        from torchstrategy.keras import regularizers

        self.activity_regularizer = regularizers.get(activity_regularizer)  # applied to the outputs by __call__

    # ----- dtype policy --------------------------------------------------------------------
    _float_policy_only = True  # layers that compute refuse integer policies; InputLayer passes any dtype

    @property
    def dtype_policy(self) -> precision.DTypePolicy:
        """The layer's policy (`dtype=` at construction, else the global policy then); a DTypePolicyMap given
        as `dtype` is returned as given, the layer using its entry for the layer's name."""
        policy_map = self.__dict__.get("_dtype_policy_map")
        return policy_map if policy_map is not None else self._dtype_policy

    @dtype_policy.setter
    def dtype_policy(self, value: Any) -> None:
        policy = precision.get(value)
        if isinstance(policy, precision.DTypePolicyMap):
            self._dtype_policy_map, policy = policy, policy[self.name]
        if self._float_policy_only and not policy.is_floating:
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}) computes in floating point, so its dtype must be a "
                f"float policy, but got dtype={value!r}. Pass one of {list(precision.POLICY_NAMES)}; integer "
                "inputs need no dtype here (declare them with Input(dtype='int32') if you like).")
        self._dtype_policy = policy
        # Keras: setting a quantized policy on a built layer quantizes it
        if policy.quantization_mode is not None and self.__dict__.get("built") \
                and not self.__dict__.get("_is_quantized"):
            self.quantize(policy.quantization_mode)

    @property
    def quantization_mode(self) -> Optional[str]:
        """The layer's quantization mode ('int8', ...), None when it is not quantized."""
        return self._dtype_policy.quantization_mode

    def quantize(self, mode: Optional[str] = None, type_check: bool = True, config: Any = None) -> None:
        """Quantizes the layer's weights in `mode`; layers that support it (Dense, EinsumDense, Embedding)
        override this, others raise NotImplementedError as in Keras."""
        raise quantized.not_implemented(self, "quantize")

    def quantized_build(self, input_shape: Any, mode: str) -> None:
        """Creates the quantized variables of `mode` (overridden by the layers that quantize)."""
        raise quantized.not_implemented(self, "quantized_build")

    def quantized_call(self, *args: Any, **kwargs: Any) -> Any:
        """`call` of a quantized layer: its `_int8_call` or `_int4_call` (the modes provided)."""
        if self.quantization_mode in ("int8", "int4"):
            return (self._int8_call if self.quantization_mode == "int8" else self._int4_call)(*args, **kwargs)
        raise quantized.unsupported_mode(self, self.quantization_mode)

    def _int8_call(self, *args: Any, **kwargs: Any) -> Any:
        raise quantized.not_implemented(self, "_int8_call")

    def _int4_call(self, *args: Any, **kwargs: Any) -> Any:
        raise quantized.unsupported_mode(self, "int4")

    @property
    def dtype(self) -> str:
        """The dtype of the layer's weights (Keras: the policy's variable dtype)."""
        return self._dtype_policy.variable_dtype

    @property
    def variable_dtype(self) -> str:
        return self._dtype_policy.variable_dtype

    @property
    def compute_dtype(self) -> str:
        """The dtype the layer computes in and casts float inputs to, e.g. 'bfloat16' for 'mixed_bfloat16'."""
        return self._dtype_policy.compute_dtype

    @property
    def _compute_torch_dtype(self) -> torch.dtype:
        return self._dtype_policy.torch_compute_dtype

    @property
    def input(self) -> Any:
        """The symbolic input(s) of this layer's first call in a functional graph (Keras `layer.input`)."""
        return self._first_node_value("input")

    @property
    def output(self) -> Any:
        """The symbolic output(s) of this layer's first call in a functional graph (Keras `layer.output`)."""
        return self._first_node_value("output")

    def _first_node_value(self, what: str) -> Any:
        nodes = self.__dict__.get("_inbound_nodes")
        if not nodes:
            raise _NotConnected(f"The layer {self.name} has never been called on a symbolic input (keras.Input) "
                                f"and thus has no defined {what}.")
        node = nodes[0]
        values = node.input_tensors if what == "input" else flatten(node.outputs)
        return values[0] if len(values) == 1 else values

    def __getattr__(self, name: str) -> Any:
        if name in ("input", "output"):  # the property raised: keep its message (torch would replace it)
            self._first_node_value(name)
        # Keras reads float weights in the compute dtype inside a mixed-policy call (AutoCastVariable);
        # torch looks Parameters up here, so the cast happens on read and gradients reach the original.
        value = super().__getattr__(name)
        if not isinstance(value, torch.Tensor):  # a sublayer or another module: nothing to map or cast
            return value
        scope = _context.keras_scope("stateless")
        if scope is not None:  # a weight mapped to a value that needs gradients reads as that value
            value = scope._read(value)
        if _context.autocast_dtype() is not None and isinstance(value, nn.Parameter) \
                and name not in self.__dict__.get("_no_autocast", ()):
            return precision.cast_on_read(value)
        return value

    # ----- weights -------------------------------------------------------------------------

    def add_weight(
        self,
        *args: Any,
        shape: Optional[Sequence[int]] = None,
        initializer: Any = None,
        dtype: Any = None,
        trainable: bool = True,
        autocast: bool = True,
        regularizer: Any = None,
        constraint: Any = None,
        aggregation: str = "none",
        overwrite_with_gradient: bool = False,
        name: Optional[str] = None,
    ) -> torch.Tensor:
        """Creates a weight (a Parameter if trainable, else a buffer) in the policy's variable dtype unless
        `dtype` is given, and returns it. Trainable float weights are read in the compute dtype inside a
        mixed-policy call unless `autocast=False` (Keras 3's argument). A `constraint` (name, config or
        callable) is kept as the weight's `constraint` attribute and applied by the optimizer after each update.
        Positional arguments are Keras 3's (shape, initializer, dtype); a leading string is also taken as the
        Keras 2 style (name, shape, initializer, ...), which Keras 3 rejects."""
        shape, initializer, dtype, name = legacy_weight_args(args, shape, initializer, dtype, name)
        if aggregation not in (None, "none", "mean", "sum", "only_first_replica"):
            raise ValueError(f"add_weight(aggregation={aggregation!r}): expected one of None, 'none', 'mean', "
                             "'sum', 'only_first_replica'.")
        if overwrite_with_gradient:
            raise NotImplementedError("add_weight(overwrite_with_gradient=True) is not supported by torchstrategy.")
        if name is None:
            name = f"variable_{len(self._weight_order)}" if self._weight_order else "variable"
        shape = () if shape is None else shape
        from torchstrategy.keras import initializers

        dtype = backend.to_torch_dtype(dtype or self.variable_dtype)
        if initializer is None:  # Keras: glorot_uniform for float weights, zeros otherwise
            initializer = "glorot_uniform" if dtype.is_floating_point else "zeros"
        init = initializers.get(initializer)
        value = init(tuple(int(d) for d in shape), dtype=dtype)
        value = backend.to_tensor(value).to(dtype)
        value = self._strategy_for_weights().init_variable(value)  # mirrored: every replica starts equal
        attr = name.replace("/", "_")
        from torchstrategy.keras.variables import make_weight  # Keras 3's variable API on the stored tensor

        weight = make_weight(value, bool(trainable), self._trainable, name, f"{self.name}/{name}")
        if trainable:
            setattr(self, attr, weight)
        else:
            self.register_buffer(attr, weight)
        self._weight_order.append((attr, trainable))
        if not autocast:
            self._no_autocast.add(attr)
        # Keras keeps the projection on the variable (`variable.constraint`); the optimizer applies it
        # after each update
        from torchstrategy.keras import constraints

        stored = self._parameters[attr] if trainable else self._buffers[attr]
        stored.constraint = constraints.get(constraint)
        if regularizer is not None:
            from torchstrategy.keras import regularizers

            self._regularizers = getattr(self, "_regularizers", []) + [(attr, regularizers.get(regularizer))]
            _context.note_loss_holder(self)
        return self._parameters[attr] if trainable else self._buffers[attr]  # as stored, even inside a mixed call

    def add_variable(self, shape: Sequence[int], initializer: Any, dtype: Any = None, trainable: bool = True,
                     autocast: bool = True, regularizer: Any = None, constraint: Any = None,
                     name: Optional[str] = None) -> torch.Tensor:
        """Keras 3's add_variable: add_weight with `shape` and `initializer` required (and positional-first)."""
        return self.add_weight(shape=shape, initializer=initializer, dtype=dtype, trainable=trainable,
                               autocast=autocast, regularizer=regularizer, constraint=constraint, name=name)

    @property
    def metrics(self) -> list:
        """Keras 3's list of the metrics this layer holds as attributes (alone or in a list/tuple), then those of
        its sublayers, each once; [] for a layer that holds none."""
        return self._held_metrics(lambda child: False)

    def _held_metrics(self, skip: Any) -> list:
        """The metrics held as attributes here, then each sublayer's `metrics` (sublayers where `skip(child)`
        is true left out: a Model leaves out nested models, as Keras 3's Trainer does)."""
        from torchstrategy.keras.metrics.base import Metric

        found: list = []
        for value in vars(self).values():
            items = value if isinstance(value, (list, tuple)) else (value,)
            found.extend(item for item in items if isinstance(item, Metric) and all(item is not f for f in found))
        for child in self.children():
            if isinstance(child, Layer) and not skip(child):
                found.extend(m for m in child.metrics if all(m is not f for f in found))
        return found

    def _strategy_for_weights(self) -> Any:
        """The strategy this layer's variables belong to: the one it was created (or set up) under."""
        return self._distribute_strategy or _context.get_strategy()

    def _set_distribute_strategy(self, strategy: Any) -> None:
        """Called when the model is set up: every nested layer then uses the model's strategy."""
        for layer in self._flatten_layers():
            layer.__dict__["_distribute_strategy"] = strategy

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        for layer in self._flatten_layers():
            layer._trainable = bool(value)
            for attr, created_trainable in layer._weight_order:
                if created_trainable:
                    getattr(layer, attr).requires_grad_(bool(value))

    def _flatten_layers(self, include_self: bool = True) -> list["Layer"]:
        """This layer and every Keras layer nested in it, depth first, each once."""
        return tracking.nested_layers(self, include_self, Layer)

    def _own_weights(self, trainable: Optional[bool]) -> list[torch.Tensor]:
        return tracking.own_weights(self, trainable)

    @property
    def trainable_weights(self) -> list[torch.Tensor]:
        return tracking.collect_weights(self._flatten_layers(), (True,))

    @property
    def non_trainable_weights(self) -> list[torch.Tensor]:
        return tracking.collect_weights(self._flatten_layers(), (False,))

    @property
    def weights(self) -> list[torch.Tensor]:
        """Keras order: layer by layer; within a layer, trainable then non-trainable."""
        return tracking.collect_weights(self._flatten_layers(), (True, False))

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def get_weights(self) -> list[np.ndarray]:
        """The weights as NumPy arrays, in Keras order (so they match a Keras model's list)."""
        from torchstrategy.distribute.parts.progress import public_call

        with public_call("get_weights"):  # sharded ones are gathered: every replica must call it
            return [backend.full_value(w).cpu().numpy().copy() for w in self.weights]

    def set_weights(self, weights: Sequence[Any]) -> None:
        """Loads a list of arrays in Keras order (e.g. `keras_model.get_weights()`)."""
        own = self.weights
        if len(weights) != len(own):
            raise ValueError(
                f"Layer '{self.name}' expects {len(own)} weight arrays, but set_weights got "
                f"{len(weights)}. Pass the list from get_weights() of a model with the same layers."
            )
        for index, (target, value) in enumerate(zip(own, weights)):
            array = backend.to_tensor(value)
            if tuple(array.shape) != tuple(target.shape):
                raise ValueError(
                    f"Layer '{self.name}': weight #{index} has shape {tuple(target.shape)}, but "
                    f"set_weights got an array of shape {tuple(array.shape)}."
                )
        for target, value in zip(own, weights):
            backend.assign_full(target, backend.to_tensor(value))

    def count_params(self) -> int:
        return int(sum(w.numel() for w in self.weights))

    def add_metric(self, *args: Any, **kwargs: Any) -> None:
        """Removed in Keras 3: refused with what to do instead (as Keras 3.15)."""
        raise NotImplementedError(
            "Layer.add_metric() was removed in Keras 3. Give the metric to Model.compile(metrics=[...]), or make a "
            "keras.metrics.Metric in the layer's __init__/build and call its update_state() in call().")

    def add_loss(self, loss: Any) -> None:
        """Adds a scalar loss (or a structure of them) from inside `call` or `build`, as Keras 3's `add_loss`:
        it shows in `losses` until the next outermost call and joins the training loss in `fit`."""
        values = flatten(loss)
        for value in values:
            if not isinstance(value, torch.Tensor):
                raise ValueError("`add_loss()` can only be called from inside `build()` or `call()`, on a tensor "
                                 f"input. Received invalid value: {value!r}")
        self.__dict__.setdefault("_losses", []).extend(values)
        _context.note_loss_holder(self)
        scope = _context.keras_scope("stateless")
        if scope is not None and scope.collect_losses:
            scope.losses.extend(values)

    def _clear_losses(self) -> None:
        if not _context.any_loss_holder():  # no layer holds any: nothing to clear (every outermost call)
            return
        for layer in self._flatten_layers():
            layer.__dict__.setdefault("_losses", []).clear()

    @property
    def losses(self) -> list[torch.Tensor]:
        """`add_loss` values (activity regularization included) of this layer and nested layers, then the weight
        regularization penalties (recomputed on access), as Keras 3 orders them."""
        out: list = []
        if not _context.any_loss_holder():  # no layer holds any (every training step asks)
            return out
        layers = self._flatten_layers()
        for layer in layers:
            out.extend(layer.__dict__.get("_losses", []))
        for layer in layers:
            for attr, regularizer in layer.__dict__.get("_regularizers", ()):
                penalty = regularizer(getattr(layer, attr))
                # a sharded weight's penalty is a DTensor: its whole value (a sum over the shards) joins the loss
                out.append(penalty.full_tensor() if hasattr(penalty, "full_tensor") else penalty)
        return out

    def stateless_call(self, trainable_variables: Sequence[Any], non_trainable_variables: Sequence[Any], *args: Any,
                       return_losses: bool = False, **kwargs: Any) -> tuple:
        """Calls the layer on `args` with its weights given as values (Keras order), changing none of them:
        `(outputs, new non_trainable values)`, plus the losses when `return_losses` (keras/stateless.py)."""
        from torchstrategy.keras import stateless

        return stateless.layer_call(self, trainable_variables, non_trainable_variables, args, return_losses, kwargs)

    def symbolic_call(self, *args: Any, **kwargs: Any) -> Any:
        """Records a call on KerasTensors as a graph node and returns its output KerasTensors."""
        from torchstrategy.keras.functional import call_symbolic

        return call_symbolic(self, args[0] if args else None, tuple(args[1:]), kwargs)

    # ----- building and calling ------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        """Creates the weights; `input_shape` has None for the batch dimension."""
        self.built = True

    def call(self, *args: Any, **kwargs: Any) -> Any:
        return args[0] if args else None

    def _check_input(self, inputs: Any) -> None:
        spec = self.input_spec
        if spec is None or not isinstance(inputs, torch.Tensor):
            return
        shape = _shape_of(inputs)
        problem = _spec_problem(spec, shape, inputs.dtype)
        if problem:
            expected = list(self._build_input_shape) if isinstance(self._build_input_shape, tuple) else None
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: {problem}. "
                f"The layer was built for input shape {_shape_str(expected) if expected else spec}, "
                f"but received input with shape {_shape_str(shape)}."
            )

    def _maybe_build(self, inputs: Any) -> None:
        if self.built and self._build_input_shape is not None:
            return
        shapes = map_structure(lambda t: _shape_of(t) if hasattr(t, "shape") else None, inputs)
        if not self.built:
            self._build_input_shape = shapes
            if self._dtype_policy.is_low_precision:
                devices = [t.device.type for t in flatten(inputs) if isinstance(t, torch.Tensor)]
                precision.check_device_support(self._dtype_policy, devices[0] if devices else "cpu")
            with precision.no_autocast():  # a build inside a mixed call must initialise the weights themselves
                self.build(shapes)
            self.built = True
        elif self._build_input_shape is None:
            self._build_input_shape = shapes

    def _cast_inputs(self, inputs: Any) -> Any:
        target = self._compute_torch_dtype if self.autocast else None
        if type(inputs) is torch.Tensor:  # the usual input: no structure to walk
            return _cast_leaf(inputs, target)
        return map_structure(lambda value: _cast_leaf(value, target), inputs)

    def __call__(self, inputs: Any, *args: Any, training: Optional[bool] = None, **kwargs: Any) -> Any:
        if _is_symbolic(inputs) if type(inputs) is torch.Tensor else any(_is_symbolic(leaf) for leaf in flatten(inputs)):
            from torchstrategy.keras.functional import call_symbolic

            return call_symbolic(self, inputs, args, dict(kwargs, training=training))
        outermost = not _context.inside_layer_call()
        inputs = self._cast_inputs(inputs)
        self._maybe_build(inputs)
        self._check_input(inputs)
        if training is None:
            training = _context.inherited_training()
        if training is None:
            training = self._call_training_default
        if self._call_takes_training and (training is not None or self._call_training_required):
            kwargs["training"] = bool(training)
        # Keras masking: a mask rides on the tensor as `_keras_mask`; an explicit mask= (not None) wins.
        previous_mask = kwargs.get("mask")
        if previous_mask is None:
            previous_mask = masking_flow.mask_of(inputs)
            if self._call_takes_mask and previous_mask is not None:
                kwargs["mask"] = previous_mask
        if outermost:  # Keras: an outermost call starts with no added losses
            self._clear_losses()
        with _context.training_scope(training):  # None hands nothing down: inner calls use their defaults
            if self._remat_mode is not None and torch.is_grad_enabled():
                from torchstrategy.keras.rematerialization import _call_with_remat

                outputs = _call_with_remat(self, super().__call__, inputs, *args, **kwargs)
            else:
                outputs = super().__call__(inputs, *args, **kwargs)
        if previous_mask is not None or type(self).compute_mask is not Layer.compute_mask \
                or "compute_mask" in self.__dict__:  # else the base compute_mask gives None: no mask to set
            masking_flow.set_output_masks(self, inputs, outputs, previous_mask)
        if self.__dict__.get("activity_regularizer") is not None:
            self._add_activity_loss(outputs)
        return eager_outputs(outputs) if outermost else outputs  # user code: outputs convert to NumPy as in TF

    def _add_activity_loss(self, outputs: Any) -> None:
        # Keras 3: the penalty of each output tensor divided by its batch size (no division for a scalar)
        for output in flatten(outputs):
            if isinstance(output, torch.Tensor):
                penalty = self.activity_regularizer(output)
                if output.dim() > 0 and output.shape[0] > 0:
                    penalty = penalty / output.shape[0]
                self.add_loss(penalty)

    def compute_mask(self, inputs: Any, previous_mask: Any) -> Any:
        """The mask of this layer's output (Keras 3: the input's mask if `supports_masking`, else None). A
        subclass that writes its own supports masking unless it says otherwise, as in Keras 3. Keras's base
        Layer spells it (inputs, previous_mask); its layers override it as (inputs, mask=None)."""
        return previous_mask if self.supports_masking else None

    def forward(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        # The dtype scope is entered here, inside nn.Module.__call__, so recomputation (remat) re-enters it;
        # a float32 layer outside any mixed call (the common case) skips it. A quantized layer runs quantized_call.
        call = self.call if self._dtype_policy.quantization_mode is None else self.quantized_call
        if self._dtype_policy.is_mixed or _context.autocast_dtype() is not None:
            with precision.compute_context(self._dtype_policy, self.autocast):
                return call(inputs, *args, **kwargs)
        return call(inputs, *args, **kwargs)

    def compute_output_shape(self, input_shape: Any) -> Any:
        """Output shape found by running the layer on a zero input of one row (of the batch size, when
        `input_shape` gives one). (Keras's base Layer spells it (*args, **kwargs); its layers override it as
        (input_shape).)"""
        is_shape = lambda s: isinstance(s, tuple) and all(d is None or isinstance(d, int) for d in s)
        shapes = [input_shape] if is_shape(input_shape) else list(input_shape)
        batch = shapes[0][0] if shapes and shapes[0] else None
        dummies = [torch.zeros((batch or 1,) + tuple(s[1:]), dtype=self._compute_torch_dtype) for s in shapes]
        with torch.no_grad(), _context.shape_probe(batch):
            out = self(dummies[0] if is_shape(input_shape) else dummies, training=False)
        return map_structure(lambda t: (batch,) + _shape_of(t)[1:] if t.dim() else (), out)

    # ----- config --------------------------------------------------------------------------
    def get_config(self) -> dict:
        """Constructor arguments that rebuild this layer (Keras's get_config)."""
        policy = self.dtype_policy
        dtype = policy.name if type(policy) is precision.DTypePolicy else precision.serialize(policy)
        config: dict = {"name": self.name, "trainable": self._trainable, "dtype": dtype}
        if self.__dict__.get("activity_regularizer") is not None:
            from torchstrategy.keras import regularizers

            config["activity_regularizer"] = regularizers.serialize(self.activity_regularizer)
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = list(self._batch_input_shape)
        return config

    @classmethod
    def from_config(cls, config: dict) -> "Layer":
        return cls(**config)

    def __setstate__(self, state: dict) -> None:  # a copy (deepcopy, pickle) of a layer holding losses holds them too
        super().__setstate__(state)
        if self.__dict__.get("_losses") or self.__dict__.get("_regularizers"):
            _context.note_loss_holder(self)

    def __setattr__(self, name: str, value: Any) -> None:
        # Keras tracks layers held in list/tuple attributes; torch only registers bare modules.
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, nn.Module) for v in value):
            super().__setattr__(f"_tracked_{name}", nn.ModuleList(value))
        super().__setattr__(name, value)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"

    def _get_name(self) -> str:  # shown by nn.Module's repr
        return f"{type(self).__name__}[{self.name}]"


class _NotConnected(AttributeError):
    """`layer.input` / `layer.output` of a layer never called on a KerasTensor."""


def _iter_layers(items: Iterable[Any]) -> list[Layer]:
    return [item for item in items if isinstance(item, Layer)]
