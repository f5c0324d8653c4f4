"""A model rebuilt from its description: `keras.models.clone_model` (Keras 3's: per-layer `clone_function`,
`call_function`, `input_tensors`, `recursive`), `model_from_json`, and which configs `Model.from_config`
rebuilds as a functional graph."""
from __future__ import annotations

import inspect
import json
from typing import Any, Callable, Optional

from torchstrategy.nest import assert_same_structure, flatten, map_structure

_FUNCTIONAL_KEYS = ("name", "layers", "input_layers", "output_layers")


def is_functional_config(config: Any) -> bool:
    """True for the config of a functional model (Keras's test: it names layers, input and output layers; or
    torchstrategy's earlier form, with `nodes`)."""
    return isinstance(config, dict) and (all(key in config for key in _FUNCTIONAL_KEYS)
                                         or ("layers" in config and "nodes" in config))


def _init_args(cls: type) -> list:
    return inspect.getfullargspec(cls.__init__).args[1:]


def revivable_as_functional(cls: type, functional: type) -> bool:
    """Keras 3: Model, Functional, and subclasses whose __init__ takes Functional's arguments or (*args, **kwargs)
    are rebuilt on the config's graph."""
    from torchstrategy.keras import models

    spec = inspect.getfullargspec(cls.__init__)
    return cls in (functional, models.Model) or _init_args(cls) == _init_args(functional) or \
        (spec.varargs == "args" and spec.varkw == "kwargs")


def clone_model(model: Any, input_tensors: Any = None, clone_function: Optional[Callable] = None,
                call_function: Optional[Callable] = None, recursive: bool = False, **kwargs: Any) -> Any:
    """A new model with the same architecture and fresh weights (Keras 3's clone_model). `clone_function(layer)`
    makes each layer's copy (default: `layer.__class__.from_config(layer.get_config())`); `call_function(layer,
    *args, **kwargs)` calls it in a functional graph; `input_tensors` (KerasTensors) replace the inputs;
    `recursive` clones nested Sequential/functional models layer by layer too. A compiled model's copy is compiled
    the same way. Subclassed models are rebuilt from their config."""
    from torchstrategy.keras import models

    cache = kwargs.pop("cache", None)
    if kwargs:
        raise ValueError(f"Unexpected keyword argument(s): {tuple(kwargs.keys())}")
    if isinstance(model, models.Sequential):
        if call_function is not None:
            raise ValueError("`call_function` argument is not supported with Sequential models. In a Sequential model, "
                             "layers aren't called at model-construction time (they're merely listed). Use "
                             "`call_function` with Functional models only. Received model of type "
                             f"'{type(model).__name__}', with call_function={call_function}")
        wrapped = _wrap_clone_function(clone_function, call_function, recursive, cache)
        return _clone_sequential(model, wrapped, input_tensors)
    if isinstance(model, models.Functional):
        wrapped = _wrap_clone_function(clone_function, call_function, recursive, cache)
        return _clone_functional(model, wrapped, input_tensors, call_function)
    if clone_function is not None or input_tensors is not None:
        raise ValueError("Arguments `clone_function` and `input_tensors` are only supported for Sequential models or "
                         f"Functional models. Received model of type '{type(model).__name__}', with "
                         f"clone_function={clone_function} and input_tensors={input_tensors}")
    if call_function is not None:
        raise ValueError("Argument `call_function` is only supported for Functional models. Received model of type "
                         f"'{type(model).__name__}', with call_function={call_function}")
    from torchstrategy.keras import saving

    return saving.model_from_config(saving.serialize_layer(model), custom_objects={type(model).__name__: type(model)})


def _default_clone(layer: Any) -> Any:
    return layer.__class__.from_config(layer.get_config())


def _wrap_clone_function(clone_function: Optional[Callable], call_function: Optional[Callable], recursive: bool,
                         cache: Optional[dict]) -> Callable:
    """`clone_function` made to clone each layer once (shared layers stay shared) and, with `recursive`, to walk
    into nested models."""
    from torchstrategy.keras import models

    clone_function = clone_function or _default_clone
    cache = {} if cache is None else cache

    def wrapped(layer: Any) -> Any:
        if id(layer) in cache:
            return cache[id(layer)]
        if recursive and isinstance(layer, models.Sequential):
            clone = clone_model(layer, clone_function=clone_function, recursive=True, cache=cache)
        elif recursive and isinstance(layer, models.Functional):
            clone = clone_model(layer, clone_function=clone_function, call_function=call_function, recursive=True,
                                cache=cache)
        else:
            clone = clone_function(layer)
        cache[id(layer)] = clone
        return clone

    return wrapped


def _copy_compile(model: Any, clone: Any) -> Any:
    if model.get_compile_config() is not None:
        from torchstrategy.keras import keras_files

        keras_files.compile_from_config(clone, keras_files.compile_config(model))
    return clone


def _input_like(layer: Any) -> Any:
    from torchstrategy.keras.layers.input_layer import Input

    return Input(batch_shape=layer._batch_input_shape, dtype=layer.dtype, name=layer.name)


def _clone_sequential(model: Any, clone_function: Callable, input_tensors: Any) -> Any:
    from torchstrategy.keras import models
    from torchstrategy.keras.layers.input_layer import KerasTensor

    new_layers = [clone_function(layer) for layer in model.layers]
    if input_tensors is not None:
        if isinstance(input_tensors, (list, tuple)):
            if len(input_tensors) != 1:
                raise ValueError("Argument `input_tensors` must contain a single tensor.")
            input_tensors = input_tensors[0]
        if not isinstance(input_tensors, KerasTensor):
            raise ValueError(f"Argument `input_tensors` must be a KerasTensor. Received invalid value: "
                             f"input_tensors={input_tensors}")
        new_layers = [input_tensors] + new_layers
    elif model._input_layer is not None:
        new_layers = [_input_like(model._input_layer)] + new_layers
    return _copy_compile(model, models.Sequential(new_layers, name=model.name, trainable=model.trainable))


def _clone_functional(model: Any, clone_function: Callable, input_tensors: Any,
                      call_function: Optional[Callable]) -> Any:
    from torchstrategy.keras import models
    from torchstrategy.keras.layers.input_layer import KerasTensor

    if input_tensors is not None:
        if not all(isinstance(x, KerasTensor) for x in flatten(input_tensors)):
            raise ValueError(f"All entries in `input_tensors` must be KerasTensors. Received invalid values: "
                             f"inputs_tensors={input_tensors}")
        try:
            assert_same_structure(input_tensors, model.input)
        except ValueError as error:
            raise ValueError(f"`input_tensors` must have the same structure as model.input\nReference structure: "
                             f"{model.input}\nReceived structure: {input_tensors}") from error
    else:
        input_tensors = map_structure(lambda x: _input_like(x.node.layer), model.input)
    computed = {id(old): new for old, new in zip(flatten(model.input), flatten(input_tensors))}

    def lookup(item: Any) -> Any:
        return computed.get(id(item), item) if isinstance(item, KerasTensor) else item

    for node in model._nodes:  # the graph again, each layer (and keras.ops step) replaced by its copy
        layer = clone_function(node.layer)
        inputs, args, kwargs = map_structure(lookup, node.inputs), map_structure(lookup, node.args), \
            map_structure(lookup, node.kwargs)
        result = call_function(layer, inputs, *args, **kwargs) if call_function else layer(inputs, *args, **kwargs)
        for old, new in zip(flatten(node.outputs), flatten(result)):
            computed[id(old)] = new
    outputs = map_structure(lookup, model._outputs)
    cls = type(model) if _init_args(type(model)) == _init_args(models.Functional) else models.Functional
    return _copy_compile(model, cls(input_tensors, outputs, name=model.name))


def model_from_json(json_string: str, custom_objects: Optional[dict] = None) -> Any:
    """Rebuilds a model (fresh weights) from `model.to_json()`."""
    from torchstrategy.keras import saving

    try:
        config = json.loads(json_string)
    except (TypeError, ValueError) as error:
        raise ValueError(f"model_from_json needs the JSON string written by model.to_json(); it could not be "
                         f"parsed: {error}") from None
    if not isinstance(config, dict) or "class_name" not in config or "config" not in config:
        raise ValueError("model_from_json needs the JSON string written by model.to_json(): an object with "
                         "'class_name' and 'config'.")
    return saving.model_from_config(config, custom_objects)
