"""int8 `quantize()` of Dense, EinsumDense and Embedding against Keras 3.15 (TF 2.21): quantized weights,
outputs, the inputs' gradient, the errors, Model.quantize and .keras files (ours and one Keras wrote), all
frozen in keras_quantize_reference.json by tools/tf_reference/keras_quantize_reference.py."""
from __future__ import annotations

import json
import os
import warnings
import zipfile

import h5py
import numpy as np
import pytest
import torch

import torchstrategy as tf

keras = tf.keras
HERE = os.path.dirname(__file__)
REF = json.load(open(os.path.join(HERE, "..", "keras_quantize_reference.json")))
FIXTURE = os.path.join(HERE, "..", "..", "formats", "fixtures", "quantized_int8.keras")
X = np.asarray(REF["X"], dtype="float32")


def arr(key):
    return np.asarray(REF[key], dtype="float32")


def dense():
    layer = keras.layers.Dense(5, activation="relu")
    layer.build((None, 4))
    layer.set_weights([arr("K"), arr("B")])
    return layer


def einsum():
    layer = keras.layers.EinsumDense("ab,bcd->acd", output_shape=(2, 3), bias_axes="cd")
    layer.build((None, 4))
    layer.set_weights([arr("KE"), arr("BE")])
    return layer


def embedding():
    layer = keras.layers.Embedding(7, 4)
    layer.build()
    layer.set_weights([arr("E")])
    return layer


CASES = {"dense": (dense, lambda: torch.tensor(X)), "einsum": (einsum, lambda: torch.tensor(X)),
         "embedding": (embedding, lambda: torch.tensor(REF["IDS"]))}


@pytest.mark.parametrize("key", sorted(CASES))
def test_int8_weights_policy_and_outputs_match_keras(key):
    make, inputs = CASES[key]
    want = REF["quantized"][f"{key}_int8"]
    layer = make()
    layer.quantize("int8")
    assert layer.quantization_mode == "int8" and layer.dtype_policy.name == want["dtype_policy"]
    assert type(layer.dtype_policy).__name__ == want["policy_class"]
    assert layer.get_config()["dtype"] == want["config_dtype"]
    weights = layer.weights
    assert len(weights) == len(want["weights"])
    for weight, expected in zip(weights, want["weights"]):  # Keras's order: trainable (bias) first
        assert str(weight.dtype).replace("torch.", "") == expected["dtype"]
        assert list(weight.shape) == expected["shape"] and weight.requires_grad == expected["trainable"]
        np.testing.assert_array_equal(weight.detach().numpy(), np.asarray(expected["value"], expected["dtype"]))
    out = layer(inputs())
    np.testing.assert_allclose(out.numpy(), np.asarray(want["output"]), rtol=1e-6, atol=1e-6)


def test_int8_dense_gradient_reaches_inputs_through_the_dequantized_kernel_and_trains_the_bias():
    layer = dense()
    layer.quantize("int8")
    x = torch.tensor(X, requires_grad=True)
    layer(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.asarray(REF["int8_input_grad"]), rtol=1e-5, atol=1e-6)
    assert layer.bias.grad is not None and not layer.kernel.requires_grad


def test_int8_einsum_on_a_three_d_input_equals_the_dequantized_product_within_quantization_error():
    layer = keras.layers.EinsumDense("abc,cd->abd", output_shape=(None, 6), bias_axes="d")
    x = torch.randn(2, 3, 5, generator=torch.Generator().manual_seed(0))
    float_out = layer(x)
    layer.quantize("int8")
    assert list(layer.kernel_scale.shape) == [1, 1, 6]
    out = layer(x)
    assert out.shape == float_out.shape
    assert float(torch.max(torch.abs(out - float_out))) < 0.05 * float(torch.max(torch.abs(float_out)))


@pytest.mark.parametrize("key", ["twice", "unbuilt", "bad_mode", "gptq_no_config", "base_layer"])
def test_quantize_errors_match_keras(key):
    want = REF["quantize_errors"][key]
    layer = {"twice": dense, "unbuilt": lambda: keras.layers.Dense(3, name="dense_3"), "bad_mode": dense,
             "gptq_no_config": dense, "base_layer": lambda: keras.layers.Dropout(0.5)}[key]()
    if key == "twice":
        layer.quantize("int8")
    mode = {"bad_mode": "int3", "gptq_no_config": "gptq"}.get(key, "int8")
    with pytest.raises(Exception) as error:
        layer.quantize(mode)
    assert type(error.value).__name__ == want["raises"]
    message = want["message"].replace("dense_2", layer.name).replace("dense_3", layer.name)
    assert str(error.value) == message


def test_modes_not_provided_raise_naming_what_to_use():
    with pytest.raises(NotImplementedError, match="Use quantize\\('int8'\\)"):
        dense().quantize("float8")
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    with pytest.raises(NotImplementedError, match="float8"):
        model.quantize("float8")
    assert model.layers[1].quantization_mode is None  # nothing changed before the error


@pytest.mark.parametrize("key", ["dense", "einsum", "embedding"])
def test_int4_weights_policy_and_outputs_match_keras(key, tmp_path):
    make, inputs = CASES[key]
    want = REF["quantized"][f"{key}_int4"]
    layer = make()
    layer.quantize("int4")
    assert layer.dtype_policy.name == want["dtype_policy"] and type(layer.dtype_policy).__name__ == want["policy_class"]
    assert layer.get_config()["dtype"] == want["config_dtype"]
    for weight, expected in zip(layer.weights, want["weights"]):
        assert str(weight.dtype).replace("torch.", "") == expected["dtype"] and list(weight.shape) == expected["shape"]
        np.testing.assert_array_equal(weight.detach().numpy(), np.asarray(expected["value"], expected["dtype"]))
    np.testing.assert_allclose(layer(inputs()).numpy(), np.asarray(want["output"]), rtol=1e-6, atol=1e-6)
    symbolic = keras.Input((3,), dtype="int32") if key == "embedding" else keras.Input((4,))
    model = keras.Model(symbolic, layer(symbolic))
    model.save(str(tmp_path / "int4.keras"))
    again = keras.models.load_model(str(tmp_path / "int4.keras"))
    np.testing.assert_array_equal(again.predict(inputs().numpy(), verbose=0), model.predict(inputs().numpy(),
                                                                                          verbose=0))


def test_int4_per_row_embedding_is_close_to_its_float_layer():
    layer = keras.layers.Embedding(5, 6)
    ids = torch.tensor([[0, 4, 2]])
    float_out = layer(ids)
    layer.quantize(config=keras.quantizers.Int4QuantizationConfig(block_size=-1))
    assert list(layer.embeddings_scale.shape) == [5] and layer.dtype_policy.name == "int4/-1_from_float32"
    assert float(torch.max(torch.abs(layer(ids) - float_out))) < 0.25 * float(torch.max(torch.abs(float_out)))


def test_int4_per_channel_dense_is_close_to_its_float_layer():
    layer = keras.layers.Dense(6)
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(1))
    float_out = layer(x)
    layer.quantize(config=keras.quantizers.Int4QuantizationConfig(block_size=-1))
    assert layer.dtype_policy.name == "int4/-1_from_float32" and list(layer.kernel_scale.shape) == [6]
    assert not hasattr(layer, "kernel_zero")
    error = float(torch.max(torch.abs(layer(x) - float_out)))
    assert 0 < error < 0.25 * float(torch.max(torch.abs(float_out)))


def test_model_quantize_gptq_and_awq_say_calibration_is_missing():
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    with pytest.raises(ValueError, match="GPTQConfig"):
        model.quantize("gptq")

    class Config(keras.quantizers.QuantizationConfig):
        @property
        def mode(self):
            return "awq"

    with pytest.raises(NotImplementedError, match="calibration"):
        model.quantize(config=Config())
    assert model.get_quantization_layer_structure("gptq") is None


def test_setting_a_quantized_policy_on_a_built_layer_quantizes_it():
    layer = dense()
    layer.dtype_policy = "int8_from_float32"
    assert layer.kernel.dtype == torch.int8 and layer.quantization_mode == "int8"


def test_model_quantize_filters_and_warns_for_layers_without_quantize():
    inputs = keras.Input((4,))
    hidden = keras.layers.Dense(5, name="keep")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(3, name="quant")(keras.layers.Dropout(0.1)(hidden)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.quantize("int8", filters=["quant", "dropout"])
    assert [str(w.message) for w in caught] == ["Layer Dropout does not have a `quantize` method implemented."]
    assert model.get_layer("keep").quantization_mode is None and model.get_layer("quant").quantization_mode == "int8"
    with pytest.raises(ValueError, match="filters"):
        model.quantize("int8", filters=3)


def _keras_model():
    inputs = keras.Input((4,))
    hidden = dense()(inputs)
    hidden = keras.layers.EinsumDense("ab,bc->ac", output_shape=4, bias_axes="c", name="mix")(hidden)
    return keras.Model(inputs, keras.layers.Dense(3, name="head")(hidden))


def test_keras_written_int8_model_loads_and_predicts_as_keras():
    model = keras.models.load_model(FIXTURE)
    assert [layer.dtype_policy.name for layer in model.layers[1:]] == ["int8_from_float32"] * 3
    np.testing.assert_allclose(model.predict(X, verbose=0), np.asarray(REF["model_file"]["output"]),
                               rtol=1e-6, atol=1e-6)


def test_our_int8_model_file_stores_what_keras_stores_and_reloads(tmp_path):
    model = keras.models.load_model(FIXTURE)  # Keras's int8 weights, so the file is comparable
    path = str(tmp_path / "q.keras")
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
        archive.extract("model.weights.h5", str(tmp_path))
    stored = {}
    with h5py.File(str(tmp_path / "model.weights.h5")) as f:
        f.visititems(lambda n, o: stored.__setitem__(n, [str(o.dtype), list(o.shape)])
                     if isinstance(o, h5py.Dataset) else None)
    assert stored == REF["model_file"]["stored"]
    assert [layer["config"]["dtype"] for layer in config["config"]["layers"]][1:] == \
        REF["model_file"]["layer_dtypes"][1:]
    again = keras.models.load_model(path)
    np.testing.assert_array_equal(again.predict(X, verbose=0), model.predict(X, verbose=0))


@pytest.mark.filterwarnings("ignore:Layer InputLayer does not have")
def test_a_quantized_model_trains_its_biases_through_fit():
    model = _keras_model()
    model.quantize("int8")
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    kernel = model.get_layer("head").kernel.clone()
    bias = model.get_layer("head").bias.detach().clone()
    history = model.fit(X, np.ones((3, 3), "float32"), epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert torch.equal(model.get_layer("head").kernel, kernel)
    assert not torch.equal(model.get_layer("head").bias.detach(), bias)
    assert model.predict(X, verbose=0).shape == (3, 3)


def test_quantization_config_argument_is_read_and_other_modes_refused():
    config = keras.quantizers.Int8QuantizationConfig()
    layer = keras.layers.Dense(2, quantization_config=config)
    assert layer.quantization_config is config and layer.get_config()["quantization_config"]["class_name"] == \
        "Int8QuantizationConfig"
    with pytest.raises(NotImplementedError, match="float8"):
        keras.layers.Dense(2, quantization_config=keras.quantizers.Float8QuantizationConfig())
    with pytest.raises(TypeError, match="QuantizationConfig"):
        keras.layers.EinsumDense("ab,bc->ac", 2, quantization_config=3)
    with pytest.raises(NotImplementedError, match="lora_rank"):
        keras.layers.Dense(2, lora_rank=4)


def test_int4_per_channel_einsum_is_close_to_its_float_layer_and_passes_gradients():
    layer = keras.layers.EinsumDense("abc,cd->abd", output_shape=(None, 6), bias_axes="d")
    x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(2), requires_grad=True)
    float_out = layer(x)
    layer.quantize(config=keras.quantizers.Int4QuantizationConfig(block_size=-1))
    assert list(layer.kernel.shape) == [8, 3] and list(layer.kernel_scale.shape) == [6]
    out = layer(x)
    assert float(torch.max(torch.abs(out - float_out))) < 0.25 * float(torch.max(torch.abs(float_out)))
    out.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape
