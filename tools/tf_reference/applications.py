"""Freezes Keras 3.15.1 (TF 2.21) keras.applications facts for tests/keras/applications: per architecture
and configuration the parameter counts, layer count, output shape and a digest of the weighted layers
(name and weight shapes, in model.layers order), the outputs of one model on formula weights, and the
preprocess_input numbers. Run with /work/tf-venv/bin/python from the repository root (outside the suite):

    /work/tf-venv/bin/python tools/tf_reference/applications.py [--dump DIR] [NAME ...]
"""
import hashlib
import json
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402

OUT = "tests/keras/applications/applications_reference.json"

# (architecture, kwargs) built with weights=None; small inputs where the count does not depend on the size
SMALL = {
    "ResNet50": 32, "ResNet101": 32, "ResNet152": 32, "ResNet50V2": 32, "ResNet101V2": 32, "ResNet152V2": 32,
    "VGG16": 32, "VGG19": 32, "MobileNet": 32, "MobileNetV2": 32, "MobileNetV3Small": 32, "MobileNetV3Large": 32,
    "DenseNet121": 32, "DenseNet169": 32, "DenseNet201": 32,
    "EfficientNetB0": 32, "EfficientNetB1": 32, "EfficientNetB2": 32, "EfficientNetB3": 32, "EfficientNetB4": 32,
    "EfficientNetB5": 32, "EfficientNetB6": 32, "EfficientNetB7": 32,
    "EfficientNetV2B0": 32, "EfficientNetV2B1": 32, "EfficientNetV2B2": 32, "EfficientNetV2B3": 32,
    "EfficientNetV2S": 32, "EfficientNetV2M": 32, "EfficientNetV2L": 32,
    "InceptionV3": 75, "InceptionResNetV2": 75, "Xception": 71,
    "ConvNeXtTiny": 32, "ConvNeXtSmall": 32, "ConvNeXtBase": 32, "ConvNeXtLarge": 32, "ConvNeXtXLarge": 32,
    "NASNetMobile": 32, "NASNetLarge": 32,
}
EXTRA = [  # family arguments
    ("MobileNet", {"alpha": 0.25, "depth_multiplier": 2, "include_top": True, "input_shape": [32, 32, 3]}),
    ("MobileNetV2", {"alpha": 0.35, "include_top": True, "input_shape": [32, 32, 3]}),
    ("MobileNetV2", {"alpha": 1.4, "include_top": False, "pooling": "max"}),
    ("MobileNetV3Small", {"alpha": 0.75, "minimalistic": True, "include_top": True, "input_shape": [32, 32, 3]}),
    ("MobileNetV3Large", {"include_top": False, "include_preprocessing": False, "pooling": "avg"}),
    ("ResNet50", {"include_top": True, "classes": 10, "input_shape": [32, 32, 3], "classifier_activation": None}),
    ("ConvNeXtTiny", {"include_top": False, "include_preprocessing": False, "pooling": "max"}),
    ("EfficientNetV2B0", {"include_top": False, "include_preprocessing": False}),
]


def configs():
    for name, size in SMALL.items():
        yield name, {"include_top": True, "input_shape": [size, size, 3]}
        yield name, {"include_top": False, "pooling": "avg"}
    yield from EXTRA


def signature(model):
    weighted = [f"{layer.name}:" + ";".join(str(tuple(w.shape)) for w in layer.weights)
                for layer in model.layers if layer.weights]
    return hashlib.sha1("\n".join(weighted).encode()).hexdigest(), weighted


def count(weights):
    return int(sum(int(np.prod(w.shape)) for w in weights))


def main():
    args = sys.argv[1:]
    dump = None
    if args[:1] == ["--dump"]:
        dump, args = args[1], args[2:]
    only = set(args)
    table = json.load(open(OUT)) if os.path.exists(OUT) else {}
    entries = table.get("architectures", [])
    entries = [e for e in entries if only and e["name"] not in only]
    for name, kwargs in configs():
        if only and name not in only:
            continue
        keras.backend.clear_session()
        model = getattr(keras.applications, name)(weights=None, **dict(
            kwargs, input_shape=tuple(kwargs["input_shape"]) if "input_shape" in kwargs else None))
        digest, weighted = signature(model)
        entries.append({"name": name, "kwargs": kwargs, "total": count(model.weights),
                        "trainable": count(model.trainable_weights), "layers": len(model.layers),
                        "weighted_layers": len(weighted), "digest": digest,
                        "output_shape": list(model.output_shape), "model_name": model.name})
        if dump:
            os.makedirs(dump, exist_ok=True)
            tag = "_".join(f"{k}={v}" for k, v in sorted(kwargs.items())).replace(" ", "").replace("/", "")
            with open(os.path.join(dump, f"{name}__{tag}.txt"), "w") as handle:
                handle.write("\n".join(weighted))
        print(name, kwargs, entries[-1]["total"], flush=True)
    table["keras_version"] = keras.__version__
    table["architectures"] = entries
    with open(OUT, "w") as handle:
        json.dump(table, handle, indent=0)


if __name__ == "__main__":
    main()
