"""Wrapper, SpectralNormalization (against Keras 3.15 numbers frozen in keras_layers_reference.json, weights in
Keras's order), TorchModuleWrapper training a torch module, and JaxLayer/FlaxLayer's clear refusal."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy import keras
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("SpectralNormalization"))
def test_spectral_normalization_matches_keras(case_id):
    check_case(case_id)


def test_spectral_normalization_weights_order_and_norm():
    layer = layers.SpectralNormalization(layers.Dense(3), power_iterations=20)
    layer(torch.ones(2, 4))
    assert [tuple(w.shape) for w in layer.weights] == [(4, 3), (1, 3), (3,)]
    assert len(layer.trainable_weights) == 2
    layer(torch.ones(2, 4), training=True)
    top = np.linalg.svd(layer.layer.kernel.detach().numpy(), compute_uv=False)[0]
    assert abs(top - 1.0) < 1e-3
    with pytest.raises(ValueError, match="power_iterations"):
        layers.SpectralNormalization(layers.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="nor 'embeddings'"):
        layers.SpectralNormalization(layers.ReLU())(torch.ones(2, 3))


def test_wrapper_base_and_config():
    class Twice(layers.Wrapper):
        def call(self, x):
            return 2 * self.layer(x)

    wrapped = Twice(layers.Dense(3, kernel_initializer="ones", bias_initializer="ones"))
    assert wrapped(torch.ones(1, 2)).tolist() == [[6.0, 6.0, 6.0]]
    config = wrapped.get_config()
    assert config["layer"]["class_name"] == "Dense" and config["layer"]["config"]["units"] == 3
    clone = Twice.from_config(config)
    assert isinstance(clone.layer, layers.Dense) and clone.layer.units == 3
    with pytest.raises(ValueError, match="isn't a supported layer type"):
        layers.Wrapper(torch.nn.Linear(2, 2))
    sn = layers.SpectralNormalization(layers.Dense(2), power_iterations=3).get_config()
    assert sn["power_iterations"] == 3 and layers.SpectralNormalization.from_config(sn).power_iterations == 3


def test_torch_module_wrapper_trains_in_a_model():
    torch.manual_seed(0)
    module = torch.nn.Linear(3, 1)
    model = keras.Sequential([keras.Input((3,)), layers.TorchModuleWrapper(module)])
    assert len(model.trainable_weights) == 2
    x = np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    history = model.fit(x, y, epochs=30, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 1e-3
    np.testing.assert_allclose(module.weight.detach().numpy(), [[1.0, -2.0, 0.5]], atol=0.02)
    with pytest.raises(ValueError, match="torch.nn.Module"):
        layers.TorchModuleWrapper(lambda x: x)


def test_jax_and_flax_layers_say_what_to_use():
    with pytest.raises(NotImplementedError, match="TorchModuleWrapper"):
        layers.JaxLayer(lambda params, x: x)
    with pytest.raises(NotImplementedError, match="TorchModuleWrapper"):
        layers.FlaxLayer(object())


def test_torch_module_wrapper_sets_the_modules_mode_from_training_as_keras():
    # Keras 3.15: TorchModuleWrapper.call(*args, training=None, **kwargs) puts the module in eval mode when
    # training is False and in train mode otherwise; from_config takes (config, custom_objects, safe_mode).
    from torchstrategy.keras.layers import TorchModuleWrapper

    wrapper = TorchModuleWrapper(torch.nn.Dropout(0.5))
    x = torch.ones(4, 100)
    assert torch.equal(wrapper(x, training=False), x) and not wrapper.module.training
    wrapper(x, training=True)
    assert wrapper.module.training
    again = TorchModuleWrapper.from_config(wrapper.get_config(), custom_objects=None, safe_mode=True)
    assert again.module is wrapper.module
