"""Keras 3's serving export: `model.export(path)` (endpoint 'serve', signature 'serving_default'),
`keras.export.ExportArchive`, and `keras.layers.TFSMLayer` running an exported directory as a layer."""
from __future__ import annotations

from typing import Any, Callable, Optional

import torch

from torchstrategy import saved_model
from torchstrategy.keras.layers.base import Layer

_FORMATS = ("tf_saved_model", "onnx", "openvino", "litert", "torch")


def export_model(model: Any, filepath: str, format: str = "tf_saved_model", verbose: Optional[bool] = None,
                 input_signature: Any = None, **kwargs: Any) -> None:
    """Writes `model` for serving (Keras 3 `model.export`): endpoint `serve` and signature `serving_default`.

    >>> model.export("/tmp/exported")                                      # doctest: +SKIP
    >>> tf.saved_model.load("/tmp/exported").serve(x)                      # doctest: +SKIP
    """
    if format != "tf_saved_model":
        known = f" ('{format}' is a Keras format torchstrategy does not write)" if format in _FORMATS else ""
        raise ValueError(f"Unrecognized format={format!r}{known}. Supported formats are: ['tf_saved_model'].")
    if kwargs:
        raise TypeError(f"export() got unexpected keyword arguments {sorted(kwargs)}.")
    archive = ExportArchive()
    archive.track(model)
    archive.add_endpoint("serve", model, input_signature)
    archive.write_out(filepath, verbose=True if verbose is None else verbose)  # Keras: None means True


class ExportArchive:
    """Collects endpoints of tracked models and writes them as one SavedModel (keras.export.ExportArchive).

    >>> archive = ExportArchive()                                          # doctest: +SKIP
    >>> archive.track(model)
    >>> archive.add_endpoint("serve", model.call, [tf.TensorSpec([None, 4], tf.float32)])
    >>> archive.write_out("/tmp/exported")
    """

    def __init__(self, format: str = "saved_model", **kwargs: Any) -> None:
        # Keras 3.15 picks the archive kind by `format` and ignores further keywords.
        if format == "neptune_model":
            raise NotImplementedError("ExportArchive(format='neptune_model') is not available here; use the "
                                      "default format='saved_model'.")
        if format != "saved_model":
            raise ValueError(f"Unsupported format: {format}")
        self._tracked: list = []
        self._endpoints: dict = {}

    def track(self, resource: Any) -> None:
        """Holds `resource` (a layer or model) so the weights its endpoints use are exported."""
        if not isinstance(resource, torch.nn.Module):
            raise ValueError(f"ExportArchive.track takes a Keras layer or model; got {type(resource).__name__}.")
        self._tracked.append(resource)

    def add_endpoint(self, name: str, fn: Any, input_signature: Any = None, **kwargs: Any) -> None:
        """Adds endpoint `name` running `fn` (a built model/layer, or a function) on `input_signature`.
        `kwargs` are Keras's JAX-backend options (`is_static`, `jax2tf_kwargs`), refused as on TF's backend."""
        if name in self._endpoints:
            raise ValueError(f"Endpoint name '{name}' is already taken.")
        if "jax2tf_kwargs" in kwargs or "is_static" in kwargs:
            raise ValueError("'jax2tf_kwargs' and 'is_static' are only supported with the jax backend. "
                             "Current backend: torch (exports as TF's backend does: drop them).")
        if input_signature is None:
            input_signature = getattr(fn, "input_signature", None)
        if input_signature is not None:
            specs = saved_model.specs_from_signature(
                list(input_signature), [f"inputs_{i}" if i else "inputs" for i in range(len(input_signature))])
        elif isinstance(fn, torch.nn.Module):
            if not getattr(fn, "built", True):
                raise ValueError("The model provided has not yet been built. It must be built before export "
                                 "(call it on data, give it a keras.Input / input_shape=, or model.build(shape)).")
            specs = saved_model.model_input_specs(fn, naming="tensor")
            if specs is None:
                raise ValueError(f"The input shape of '{getattr(fn, 'name', fn)}' is unknown; pass "
                                 f"input_signature=[tf.TensorSpec(shape, dtype)] to export it.")
        else:
            raise ValueError(f"Endpoint '{name}': pass input_signature=[tf.TensorSpec(...)] for a plain function.")
        self._endpoints[name] = (_as_call(fn), specs)

    def write_out(self, filepath: str, options: Any = None, verbose: bool = True) -> None:
        """Writes the endpoints; the first one also serves as signature 'serving_default'."""
        if not self._endpoints:
            raise ValueError("No endpoints have been set yet. Call add_endpoint() first.")
        owner = self._tracked[0] if len(self._tracked) == 1 else torch.nn.ModuleList(self._tracked)
        if not self._tracked:
            owner = None
        first = next(iter(self._endpoints))
        # TF 2.21 + Keras 3: every endpoint is also a signature, and the first one is 'serving_default' too
        signatures = {name: name for name in self._endpoints}
        signatures[saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY] = first
        saved_model.write_functions(owner, filepath, signatures,
                                    endpoints=dict(self._endpoints), naming="tensor")
        if verbose and saved_model.is_chief_for(self._tracked[0] if self._tracked else None):
            specs = self._endpoints[first][1]
            print(f"Saved artifact at '{filepath}'. The following endpoints are available:\n\n"
                  f"* Endpoint '{first}'\n  inputs: {[s.to_json() for s in specs]}")


def _as_call(fn: Any) -> Callable:
    if isinstance(fn, torch.nn.Module):
        def call(*tensors: torch.Tensor) -> Any:
            return fn(tensors[0] if len(tensors) == 1 else list(tensors), training=False)

        return call
    python = getattr(fn, "python_function", fn)
    return lambda *tensors: python(*tensors)


def _refuse_tf_written(filepath: str, call_endpoint: str) -> None:
    """A TF-written SavedModel: Keras's error for an unknown endpoint, else why its graphs cannot run here."""
    from torchstrategy.formats.tf_saved_model import is_tf_saved_model
    from torchstrategy.formats.tf_saved_model_objects import weights_route

    if not is_tf_saved_model(filepath):
        return
    loaded = saved_model.load(filepath)
    if isinstance(loaded, saved_model.LoadedSavedModel):
        return
    if call_endpoint not in vars(loaded) and call_endpoint not in loaded.signatures:
        raise ValueError(f"The endpoint '{call_endpoint}' is neither an attribute of the SavedModel at '{filepath}' "
                         f"nor one of its `signatures`; choose another with `call_endpoint`. Its signatures: "
                         f"{sorted(loaded.signatures)}.")
    raise NotImplementedError(f"keras.layers.TFSMLayer cannot run '{filepath}': it is a TensorFlow-written "
                              f"SavedModel, and its endpoint '{call_endpoint}' is a TF graph, which torchstrategy "
                              f"does not execute. {weights_route(filepath)}")


class TFSMLayer(Layer):
    """An exported directory as an inference-only layer (keras.layers.TFSMLayer).

    >>> layer = tf.keras.layers.TFSMLayer("/tmp/exported", call_endpoint="serve")   # doctest: +SKIP
    >>> tf.keras.Sequential([tf.keras.Input((4,)), layer]).predict(x)               # doctest: +SKIP
    """

    def __init__(self, filepath: str, call_endpoint: str = "serve", call_training_endpoint: Optional[str] = None,
                 trainable: bool = True, name: Optional[str] = None, dtype: Any = None) -> None:
        _refuse_tf_written(filepath, call_endpoint)
        # The exported weights are constants of the program here: the layer holds no weights to train,
        # whatever `trainable` says (Keras 3 would train the SavedModel's variables).
        super().__init__(trainable=trainable, name=name, dtype=dtype)
        self.filepath = filepath
        self.call_endpoint = call_endpoint
        self.call_training_endpoint = call_training_endpoint
        self._loaded = saved_model.load(filepath)
        self._call = self._endpoint(call_endpoint)
        self._training_call = self._endpoint(call_training_endpoint) if call_training_endpoint else None

    def _endpoint(self, name: str) -> Any:
        endpoints = dict(self._loaded._endpoints)
        if name in endpoints:
            return endpoints[name]
        if name in self._loaded.signatures:
            return self._loaded.signatures[name]
        raise ValueError(f"The endpoint '{name}' is not among the endpoints {sorted(endpoints)} or signatures "
                         f"{sorted(self._loaded.signatures)} of '{self.filepath}'.")

    def build(self, input_shape: Any) -> None:
        self.built = True

    def call(self, inputs: Any, training: bool = False, **kwargs: Any) -> Any:
        """Runs the training endpoint when `training` and one was given, else the call endpoint; `kwargs` go
        to the endpoint, as in Keras."""
        endpoint = self._training_call if training and self._training_call is not None else self._call
        if isinstance(inputs, (list, tuple)):
            return endpoint(*inputs, **kwargs)
        if isinstance(inputs, dict):
            return endpoint(**inputs, **kwargs)
        return endpoint(inputs, **kwargs)

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None,
                    safe_mode: Optional[bool] = None) -> "TFSMLayer":
        """The layer from `get_config()`. As Keras, `safe_mode=True` refuses to load an external SavedModel;
        None (no global switch here) loads it."""
        if safe_mode:
            raise ValueError("Requested the deserialization of a `TFSMLayer`, which loads an external SavedModel. "
                             "This is disallowed with safe_mode=True; if you trust the artifact, pass "
                             "safe_mode=False.")
        return cls(**config)

    def get_config(self) -> dict:
        return {"name": self.name, "filepath": self.filepath, "call_endpoint": self.call_endpoint,
                "call_training_endpoint": self.call_training_endpoint, "trainable": self.trainable}
