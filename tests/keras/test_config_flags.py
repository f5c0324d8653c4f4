"""keras.config's switches (flash attention, traceback filtering, epoch/step caps, dtype policy, backend):
defaults as Keras 3.15 has them, and the caps applied by a real fit/evaluate/predict."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf
from torchstrategy.keras import config_flags

config = tf.keras.config


@pytest.fixture(autouse=True)
def _restore():
    yield
    config.set_max_epochs(None)
    config.set_max_steps_per_epoch(None)
    config.enable_flash_attention()
    config.enable_traceback_filtering()
    config.set_dtype_policy(None)


def test_defaults_match_keras():
    # Keras 3.15: flash attention None (automatic), traceback filtering on, no caps, no NNX
    assert config.is_flash_attention_enabled() is None
    assert config.is_traceback_filtering_enabled() is True
    assert config.max_epochs() is None and config.max_steps_per_epoch() is None
    assert config.is_nnx_enabled() is False
    assert config.dtype_policy().name == "float32"


def test_switches_round_trip():
    config.disable_flash_attention()
    assert config.is_flash_attention_enabled() is False
    config.enable_flash_attention()
    assert config.is_flash_attention_enabled() is None
    config.disable_traceback_filtering()
    assert config.is_traceback_filtering_enabled() is False
    config.set_dtype_policy("mixed_bfloat16")
    assert config.dtype_policy().name == "mixed_bfloat16"
    assert tf.keras.layers.Dense(2).dtype_policy.name == "mixed_bfloat16"
    config.disable_interactive_logging()
    assert config.is_interactive_logging_enabled() is False
    config.enable_interactive_logging()
    assert config.is_interactive_logging_enabled() is True


def test_bad_values_are_refused():
    with pytest.raises(ValueError, match="positive integer"):
        config.set_max_epochs(0)
    with pytest.raises(ValueError, match="'tensorflow' backend only"):
        config.set_backend("jax")
    config.set_backend("tensorflow")


def _model():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_caps_limit_fit_evaluate_and_predict():
    x, y = np.ones((40, 2), "float32"), np.zeros((40, 1), "float32")
    seen = []
    counter = tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(batch))
    config.set_max_epochs(2)
    config.set_max_steps_per_epoch(3)
    with pytest.warns(UserWarning, match="Limiting epochs to 2"):
        history = _model().fit(x, y, batch_size=4, epochs=5, verbose=0, callbacks=[counter])
    assert history.epoch == [0, 1]
    assert seen == [0, 1, 2, 0, 1, 2]  # 3 of the 10 batches per epoch
    model = _model()
    with pytest.warns(UserWarning, match="Limiting steps_per_epoch to 3"):
        assert model.predict(x, batch_size=4, verbose=0).shape == (12, 1)
    config.set_max_steps_per_epoch(None)
    assert model.predict(x, batch_size=4, verbose=0).shape == (40, 1)
    assert config_flags.capped_epochs(1) == 1
