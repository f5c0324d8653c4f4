"""keras.applications against Keras 3.15.1 (TF 2.21) facts frozen by tools/tf_reference/applications*.py:
parameter counts, layer order and weight shapes of every architecture, outputs on formula weights,
preprocess_input numbers, Keras's file names and the errors for bad arguments."""
from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest
import torch

from torchstrategy import keras

HERE = os.path.dirname(__file__)
REFERENCE = json.load(open(os.path.join(HERE, "applications_reference.json")))
NUMBERS = json.load(open(os.path.join(HERE, "applications_numbers.json")))
# Building the big ones on CPU takes tens of seconds each: by default the slow run checks the smallest
# member of each family; TORCHSTRATEGY_TEST_ALL_APPLICATIONS=1 checks all of them.
ALL = os.environ.get("TORCHSTRATEGY_TEST_ALL_APPLICATIONS") == "1"
FAST = {("MobileNetV2", '{"alpha": 0.35, "include_top": true, "input_shape": [32, 32, 3]}'),
        ("MobileNet", '{"alpha": 0.25, "depth_multiplier": 2, "include_top": true, "input_shape": [32, 32, 3]}')}
SMALLEST = {"ResNet50", "ResNet50V2", "VGG16", "MobileNet", "MobileNetV2", "MobileNetV3Small", "MobileNetV3Large",
            "DenseNet121", "EfficientNetB0", "EfficientNetV2B0", "InceptionV3", "InceptionResNetV2", "Xception",
            "ConvNeXtTiny", "NASNetMobile"}


def _entries():
    for entry in REFERENCE["architectures"]:
        key = (entry["name"], json.dumps(entry["kwargs"], sort_keys=True))
        if key in FAST:
            marks = []
        elif entry["name"] in SMALLEST and ("input_shape" in entry["kwargs"] or entry["name"] == "MobileNetV3Small") \
                or ALL:  # (MobileNetV3Small without input_shape: unknown image sizes through a whole model)
            marks = [pytest.mark.slow]
        else:
            marks = [pytest.mark.slow, pytest.mark.skip(reason="large architecture: set "
                                                                 "TORCHSTRATEGY_TEST_ALL_APPLICATIONS=1")]
        yield pytest.param(entry, marks=marks, id=f"{entry['name']}-{'-'.join(f'{k}={v}' for k, v in entry['kwargs'].items())}")


def _build(entry):
    keras.backend.clear_session()
    kwargs = dict(entry["kwargs"])
    if "input_shape" in kwargs:
        kwargs["input_shape"] = tuple(kwargs["input_shape"])
    return getattr(keras.applications, entry["name"])(weights=None, **kwargs)


@pytest.mark.parametrize("entry", list(_entries()))
def test_parameter_counts_layer_order_and_weight_shapes_equal_keras(entry):
    model = _build(entry)
    weighted = [f"{layer.name}:" + ";".join(str(tuple(w.shape)) for w in layer.weights)
                for layer in model.layers if layer.weights]
    assert sum(w.numel() for w in model.weights) == entry["total"]
    assert sum(w.numel() for w in model.trainable_weights) == entry["trainable"]
    assert len(model.layers) == entry["layers"]
    assert len(weighted) == entry["weighted_layers"]
    # names and shapes of the weighted layers, in Keras's order: what loading Keras's files relies on
    assert hashlib.sha1("\n".join(weighted).encode()).hexdigest() == entry["digest"]
    assert list(model.output_shape) == entry["output_shape"]
    assert model.name == entry["model_name"]


def _hash(count, index):
    k = np.arange(count, dtype=np.float64)
    return np.modf(np.abs(np.sin(k * 12.9898 + index * 78.233)) * 43758.5453)[0] - 0.5


def _formula_weight(index, shape, kind):
    """Same formula as tools/tf_reference/applications_numbers.py."""
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


def _images(shape):
    k = np.arange(int(np.prod(shape)), dtype=np.float64)
    return (127.5 + 127.5 * np.sin(0.11 * k)).reshape(shape).astype(np.float32)


def test_mobilenet_v2_outputs_equal_keras_on_the_same_weights():
    expected = NUMBERS["mobilenet_v2_035_32_classes10"]
    keras.backend.clear_session()
    model = keras.applications.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=10,
                                           classifier_activation=None)
    model.set_weights([_formula_weight(i, tuple(w.shape), w.name) for i, w in enumerate(model.weights)])
    x = keras.applications.mobilenet_v2.preprocess_input(_images((2, 32, 32, 3)))
    out = model.predict(x, verbose=0)
    np.testing.assert_allclose(out, np.array(expected["outputs"]), rtol=1e-4, atol=1e-5)
    # a sub-model on an intermediate output shares the weights and gives Keras's numbers
    features = keras.Model(model.input, model.get_layer("block_3_project_BN").output)
    values = features.predict(x, verbose=0)
    assert list(values.shape) == expected["block_3_project_BN_shape"]
    np.testing.assert_allclose(values.sum(), expected["block_3_project_BN_sum"], rtol=1e-4)


@pytest.mark.parametrize("mode", ["caffe", "tf", "torch"])
def test_preprocess_input_modes_equal_keras(mode):
    expected = np.array(NUMBERS["preprocess_input"][mode])
    pixels = _images(tuple(NUMBERS["preprocess_input"]["pixels_shape"]))
    np.testing.assert_allclose(keras.applications.imagenet_utils.preprocess_input(pixels.copy(), mode=mode),
                               expected, rtol=1e-6, atol=1e-5)
    tensor = torch.tensor(pixels)
    out = keras.applications.imagenet_utils.preprocess_input(tensor, mode=mode)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(tensor.numpy(), pixels)  # a tensor input is not changed in place


def test_preprocess_input_channels_first_and_family_modes():
    pixels = _images(tuple(NUMBERS["preprocess_input"]["pixels_shape"]))
    first = keras.applications.imagenet_utils.preprocess_input(pixels.transpose(0, 3, 1, 2).copy(),
                                                               data_format="channels_first", mode="caffe")
    np.testing.assert_allclose(first, NUMBERS["preprocess_input"]["caffe_channels_first"], rtol=1e-6, atol=1e-5)
    single = keras.applications.imagenet_utils.preprocess_input(pixels[0].transpose(2, 0, 1).copy(),
                                                                data_format="channels_first", mode="torch")
    np.testing.assert_allclose(single, NUMBERS["preprocess_input"]["torch_channels_first_3d"], rtol=1e-6, atol=1e-5)
    expected = NUMBERS["preprocess_input"]
    apps = keras.applications
    for module, mode in ((apps.resnet, "caffe"), (apps.vgg16, "caffe"), (apps.resnet_v2, "tf"),
                         (apps.mobilenet, "tf"), (apps.xception, "tf"), (apps.densenet, "torch")):
        np.testing.assert_allclose(module.preprocess_input(pixels.copy()), expected[mode], rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(apps.efficientnet.preprocess_input(pixels), pixels)  # the model rescales itself
    with pytest.raises(ValueError, match="mode"):
        apps.imagenet_utils.preprocess_input(pixels, mode="caffe2")
    with pytest.raises(ValueError, match="data_format"):
        apps.imagenet_utils.preprocess_input(pixels, data_format="nhwc")


def test_names_are_reachable_as_in_keras():
    apps = keras.applications
    assert apps.ResNet50 is apps.resnet.ResNet50 is apps.resnet50.ResNet50
    assert apps.MobileNetV3Small is apps.mobilenet_v3.MobileNetV3Small
    assert apps.EfficientNetV2S is apps.efficientnet_v2.EfficientNetV2S
    import inspect

    assert list(inspect.signature(apps.ResNet50).parameters) == [
        "include_top", "weights", "input_tensor", "input_shape", "pooling", "classes", "classifier_activation", "name"]
    assert list(inspect.signature(apps.MobileNetV3Large).parameters) == [
        "input_shape", "alpha", "minimalistic", "include_top", "weights", "input_tensor", "classes", "pooling",
        "dropout_rate", "classifier_activation", "include_preprocessing", "name"]


def test_bad_arguments_are_clear_errors(tmp_path, monkeypatch):
    apps = keras.applications
    with pytest.raises(ValueError, match="weights"):
        apps.MobileNetV2(weights="imagenet21k", alpha=0.35, input_shape=(32, 32, 3))
    with pytest.raises(ValueError, match="classes"):
        apps.MobileNetV2(weights="imagenet", alpha=0.35, classes=10)
    with pytest.raises(ValueError, match="at least 32x32"):
        apps.MobileNetV2(weights=None, alpha=0.35, input_shape=(16, 16, 3), include_top=False)
    with pytest.raises(ValueError, match="three integers"):
        apps.VGG16(weights=None, include_top=False, input_shape=(32, 32))
    with pytest.raises(ValueError, match="static"):
        apps.VGG16(weights=None, include_top=True, input_shape=(None, None, 3))
    with pytest.raises(ValueError, match="alpha"):
        apps.MobileNetV2(weights="imagenet", alpha=0.4, include_top=False)


@pytest.mark.slow
def test_imagenet_weights_come_from_keras_cache_or_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    apps = keras.applications
    file_name = "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5"  # Keras's name for this one
    with pytest.raises(FileNotFoundError) as error:
        apps.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, include_top=False, weights="imagenet")
    assert file_name in str(error.value) and str(tmp_path / "models") in str(error.value)
    # put a file with that name there: it is what weights='imagenet' loads
    keras.backend.clear_session()
    source = apps.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, include_top=False, weights=None)
    (tmp_path / "models").mkdir()
    source.save_weights(str(tmp_path / "models" / file_name))
    keras.backend.clear_session()
    loaded = apps.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, include_top=False, weights="imagenet")
    for a, b in zip(loaded.get_weights(), source.get_weights()):
        np.testing.assert_array_equal(a, b)
    # weights=<path> loads that file
    keras.backend.clear_session()
    again = apps.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, include_top=False,
                             weights=str(tmp_path / "models" / file_name))
    np.testing.assert_array_equal(again.get_weights()[0], source.get_weights()[0])


@pytest.mark.slow
def test_input_tensor_from_another_graph_becomes_part_of_the_model():
    inputs = keras.Input((32, 32, 3))
    scaled = keras.layers.Rescaling(1 / 255.0)(inputs)
    model = keras.applications.MobileNetV2(input_tensor=scaled, alpha=0.35, weights=None, include_top=False,
                                           pooling="avg")
    assert model.input is inputs
    assert isinstance(model.layers[1], keras.layers.Rescaling)
    assert model.predict(np.zeros((2, 32, 32, 3), np.float32), verbose=0).shape == (2, 1280)


def test_decode_predictions_reads_keras_class_index_from_the_cache(tmp_path, monkeypatch):
    from torchstrategy.keras.applications import imagenet_utils

    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setattr(imagenet_utils, "_class_index", None)
    preds = np.random.default_rng(0).random((2, 1000)).astype(np.float32)
    with pytest.raises(FileNotFoundError, match="imagenet_class_index.json"):
        imagenet_utils.decode_predictions(preds)
    (tmp_path / "models").mkdir()
    index = {str(i): [f"n{i:08d}", f"class_{i}"] for i in range(1000)}
    (tmp_path / "models" / "imagenet_class_index.json").write_text(json.dumps(index))
    decoded = keras.applications.resnet.decode_predictions(preds, top=3)
    for row, result in zip(preds, decoded):
        best = np.argsort(row)[::-1][:3]
        assert [entry[:2] for entry in result] == [(f"n{i:08d}", f"class_{i}") for i in best]
        np.testing.assert_allclose([entry[2] for entry in result], row[best])
    assert len(imagenet_utils.decode_predictions(torch.tensor(preds), top=1)[1]) == 1
    with pytest.raises(ValueError, match=r"\(samples, 1000\)"):
        imagenet_utils.decode_predictions(preds[:, :10])


def test_every_keras_name_exists_with_keras_signature():
    import importlib
    import inspect

    for qualified, expected in NUMBERS["signatures"].items():
        module_name, _, name = qualified.rpartition(".")
        module = importlib.import_module(f"torchstrategy.keras.applications.{module_name}") if module_name \
            else keras.applications
        function = getattr(module, name)
        actual = [[p.name, repr(p.default)] for p in inspect.signature(function).parameters.values()]
        assert actual == expected, qualified
