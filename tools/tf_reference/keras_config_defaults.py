"""Writes torchstrategy/keras/_keras_config_defaults.py: for every Keras class torchstrategy has (layers,
losses, optimizers), Keras 3's config keys with their default values and the class's module path.

Run with the TF reference environment (tensorflow-cpu 2.21.0, Keras 3.15.1), outside the test suite:
    /work/tf-venv/bin/python tools/tf_reference/keras_config_defaults.py
"""
from __future__ import annotations

import json
import os
import pprint

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402

L = keras.layers
# required constructor arguments (the smallest valid values); their "defaults" are not used as defaults
REQUIRED = {
    "Dense": (1,), "Activation": ("linear",), "Conv1D": (1, 1), "Conv2D": (1, 1), "Conv3D": (1, 1),
    "Conv1DTranspose": (1, 1), "Conv2DTranspose": (1, 1), "Conv3DTranspose": (1, 1), "SeparableConv2D": (1, 1),
    "DepthwiseConv2D": (1,), "Embedding": (1, 1), "LSTM": (1,), "GRU": (1,), "SimpleRNN": (1,), "LSTMCell": (1,),
    "GRUCell": (1,), "SimpleRNNCell": (1,), "MultiHeadAttention": (1, 1), "Reshape": ((1,),), "Permute": ((1,),),
    "Rescaling": (1.0,), "Resizing": (1, 1), "CenterCrop": (1, 1), "RandomCrop": (1, 1), "RandomRotation": (0.1,),
    "RandomTranslation": (0.1, 0.1), "RandomZoom": (0.1,), "RandomContrast": (0.1,), "RandomBrightness": (0.1,),
    "Bidirectional": (None,), "TimeDistributed": (None,), "Lambda": (None,),
}
LAYERS = ["Activation", "Add", "Average", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D",
          "BatchNormalization", "Bidirectional", "CenterCrop", "Concatenate", "Conv1D", "Conv1DTranspose", "Conv2D",
          "Conv2DTranspose", "Conv3D", "Conv3DTranspose", "Cropping1D", "Cropping2D", "Dense", "DepthwiseConv2D", "Dot",
          "Dropout", "ELU", "Embedding", "Flatten", "GRU", "GRUCell", "GlobalAveragePooling1D", "GlobalAveragePooling2D",
          "GlobalAveragePooling3D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D", "IntegerLookup",
          "LSTM", "LSTMCell", "Lambda", "LayerNormalization", "LeakyReLU", "Masking", "MaxPooling1D", "MaxPooling2D",
          "MaxPooling3D", "Maximum", "Minimum", "MultiHeadAttention", "Multiply", "Normalization", "Permute",
          "RandomBrightness", "RandomContrast", "RandomCrop", "RandomFlip", "RandomRotation", "RandomTranslation",
          "RandomZoom", "ReLU", "Rescaling", "Reshape", "Resizing", "SeparableConv2D", "SimpleRNN", "SimpleRNNCell",
          "Softmax", "StringLookup", "Subtract", "TextVectorization", "TimeDistributed", "UpSampling1D",
          "UpSampling2D", "ZeroPadding2D"]
LOSSES = ["BinaryCrossentropy", "CategoricalCrossentropy", "CosineSimilarity", "Hinge", "Huber", "KLDivergence",
          "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanSquaredError", "MeanSquaredLogarithmicError",
          "SparseCategoricalCrossentropy"]
OPTIMIZERS = ["Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "Nadam", "RMSprop", "SGD"]


def _plain(value):
    return json.loads(json.dumps(value, default=lambda v: None))


def _layer(name):
    cls = getattr(L, name)
    args = REQUIRED.get(name)
    if args is None:  # e.g. the pooling layers' pool_size
        import inspect

        needed = [p for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
                  if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
        args = tuple(0.5 if p.name == "rate" else 2 for p in needed)
    if name in ("Bidirectional", "TimeDistributed"):
        args = (L.LSTM(1) if name == "Bidirectional" else L.Dense(1),)
    if name == "Lambda":
        args = (lambda x: x,)
    layer = cls(*args)
    config = layer.get_config()
    config.pop("name", None)
    if isinstance(config.get("dtype"), dict):
        config["dtype"] = config["dtype"]["config"]["name"]
    return {"module": cls.__module__ if not cls.__module__.startswith("keras.src") else "keras.layers",
            "required": list(__import__("inspect").signature(cls.__init__).parameters)[1:1 + len(args)],
            "config": _plain(config)}


def main() -> None:
    table = {"layers": {name: _layer(name) for name in LAYERS}}
    table["losses"] = {}
    for name in LOSSES:
        config = getattr(keras.losses, name)().get_config()
        config.pop("name", None)
        table["losses"][name] = {"module": "keras.losses", "required": [], "config": _plain(config)}
    table["optimizers"] = {}
    for name in OPTIMIZERS:
        config = getattr(keras.optimizers, name)().get_config()
        config.pop("name", None)
        table["optimizers"][name] = {"module": "keras.optimizers", "required": [], "config": _plain(config)}
    here = os.path.dirname(os.path.abspath(__file__))
    target = os.path.join(here, "..", "..", "torchstrategy", "keras", "_keras_config_defaults.py")
    with open(target, "w") as handle:
        handle.write('"""Keras 3.15.1\'s config keys and default values for the classes torchstrategy has (layers, losses,\n'
                     'optimizers): what a `.keras`/`.h5` config holds. Generated by tools/tf_reference/keras_config_defaults.py."""\n'
                     "# flake8: noqa\n"
                     "KERAS_DEFAULTS = ")
        handle.write("{\n")
        for kind in sorted(table):
            handle.write(f"    {kind!r}: {{\n")
            for name in sorted(table[kind]):
                handle.write(f"        {name!r}: {pprint.pformat(table[kind][name], width=100000, compact=True)},\n")
            handle.write("    },\n")
        handle.write("}\n")


if __name__ == "__main__":
    main()
