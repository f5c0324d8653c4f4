"""Freezes Keras 3.15.1 (TF 2.21) numbers for tests/keras/applications: MobileNetV2(alpha=0.35, 32x32,
classes=10, logits) outputs on formula weights and inputs, and imagenet_utils.preprocess_input in every mode.
Run with /work/tf-venv/bin/python from the repository root (outside the suite):

    /work/tf-venv/bin/python tools/tf_reference/applications_numbers.py
"""
import json
import os

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402

OUT = "tests/keras/applications/applications_numbers.json"


def _hash(count, index):
    k = np.arange(count, dtype=np.float64)
    return np.modf(np.abs(np.sin(k * 12.9898 + index * 78.233)) * 43758.5453)[0] - 0.5  # in [-0.5, 0.5)


def formula_weight(index, shape, kind):
    """The test's deterministic weights (kept in step with tests/keras/applications/test_applications.py);
    `kind`: 'gamma', 'beta', 'moving_mean', 'moving_variance', or anything else (a kernel or a bias)."""
    h = _hash(int(np.prod(shape)), index)
    if kind == "gamma":
        value = 1.0 + 0.2 * h
    elif kind == "moving_variance":
        value = 1.0 + h ** 2
    elif kind in ("beta", "moving_mean") or len(shape) < 2:
        value = 0.2 * h
    else:
        fan_in = int(np.prod(shape[:2])) * (shape[2] if shape[-1] != 1 else 1) if len(shape) == 4 else shape[0]
        value = h * np.sqrt(12.0 / fan_in)
    return value.reshape(shape).astype(np.float32)


def kind_of(path):
    return path.rsplit("/", 1)[-1]


def images(shape):
    k = np.arange(int(np.prod(shape)), dtype=np.float64)
    return (127.5 + 127.5 * np.sin(0.11 * k)).reshape(shape).astype(np.float32)


def main():
    keras.backend.clear_session()
    model = keras.applications.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=10,
                                             classifier_activation=None)
    model.set_weights([formula_weight(i, tuple(w.shape), kind_of(w.path))
                       for i, w in enumerate(model.weights)])
    x = keras.applications.mobilenet_v2.preprocess_input(images((2, 32, 32, 3)))
    outputs = np.asarray(model(x, training=False))
    features = keras.Model(model.input, model.get_layer("block_3_project_BN").output)(x, training=False)
    pixels = images((2, 2, 3, 3))
    pre = {mode: keras.applications.imagenet_utils.preprocess_input(pixels.copy(), mode=mode).tolist()
           for mode in ("caffe", "tf", "torch")}
    pre["caffe_channels_first"] = keras.applications.imagenet_utils.preprocess_input(
        pixels.transpose(0, 3, 1, 2).copy(), data_format="channels_first", mode="caffe").tolist()
    pre["torch_channels_first_3d"] = keras.applications.imagenet_utils.preprocess_input(
        pixels[0].transpose(2, 0, 1).copy(), data_format="channels_first", mode="torch").tolist()
    import inspect

    signatures = {}
    for module_name in ("convnext", "densenet", "efficientnet", "efficientnet_v2", "imagenet_utils",
                        "inception_resnet_v2", "inception_v3", "mobilenet", "mobilenet_v2", "mobilenet_v3", "nasnet",
                        "resnet", "resnet50", "resnet_v2", "vgg16", "vgg19", "xception"):
        module = getattr(keras.applications, module_name)
        for name in dir(module):
            if not name.startswith("_"):
                signatures[f"{module_name}.{name}"] = [
                    [p.name, repr(p.default)] for p in inspect.signature(getattr(module, name)).parameters.values()]
    for name in dir(keras.applications):
        if not name.startswith("_") and callable(getattr(keras.applications, name)):
            signatures[name] = [[p.name, repr(p.default)]
                                for p in inspect.signature(getattr(keras.applications, name)).parameters.values()]
    table = {"keras_version": keras.__version__, "signatures": signatures,
             "mobilenet_v2_035_32_classes10": {"outputs": outputs.tolist(),
                                              "block_3_project_BN_sum": float(np.sum(features)),
                                              "block_3_project_BN_shape": list(features.shape)},
             "preprocess_input": {"pixels_shape": list(pixels.shape), **pre}}
    with open(OUT, "w") as handle:
        json.dump(table, handle, indent=0)


if __name__ == "__main__":
    main()
