"""keras.utils helpers: get_source_inputs, is_keras_tensor, pack/unpack_x_y_sample_weight, standardize_dtype,
clear_session, Config, Progbar's stateless_metrics, interactive logging, and plot_model / model_to_dot's
messages when pydot or Graphviz is missing (values as Keras 3.15.1 gives them)."""
import numpy as np
import pytest
import torch

from torchstrategy import keras
from torchstrategy.keras import model_visualization, utils


def test_source_inputs_and_keras_tensors():
    a, b = keras.Input((3,)), keras.Input((3,))
    out = keras.layers.Dense(2)(keras.layers.Add()([a, keras.layers.Dense(3)(b)]))
    sources = utils.get_source_inputs(out)
    assert len(sources) == 2 and sources[0] is a and sources[1] is b
    assert utils.get_source_inputs(a) == [a]
    assert utils.is_keras_tensor(out) and not utils.is_keras_tensor(np.zeros(2))


def test_pack_unpack_and_dtypes():
    x, y, w = np.zeros(2), np.ones(2), np.ones(2)
    assert utils.pack_x_y_sample_weight((1, 2)) == ((1, 2),)  # Keras 3.15.1: ((1, 2),)
    assert utils.pack_x_y_sample_weight(x, y)[1] is y and len(utils.pack_x_y_sample_weight(x, y, w)) == 3
    assert utils.unpack_x_y_sample_weight((x, y)) == (x, y, None)
    assert utils.unpack_x_y_sample_weight(x)[0] is x
    with pytest.raises(ValueError, match="format"):
        utils.unpack_x_y_sample_weight((1, 2, 3, 4))
    assert utils.standardize_dtype("int") == "int64" and utils.standardize_dtype(float) == "float32"
    assert utils.standardize_dtype(torch.bfloat16) == "bfloat16" and utils.standardize_dtype(np.int8) == "int8"


def test_config_and_clear_session():
    config = utils.Config(learning_rate=0.1)
    config.momentum = 0.9
    assert config["momentum"] == 0.9 and config.as_dict() == {"learning_rate": 0.1, "momentum": 0.9}
    config.freeze()
    with pytest.raises(AttributeError, match="frozen"):
        config.learning_rate = 1.0
    keras.layers.Dense(1)
    utils.clear_session()
    assert keras.layers.Dense(1).name == "dense"


def test_progbar_stateless_metrics_and_logging_switch(capsys):
    bar = utils.Progbar(2, verbose=2, stateless_metrics=["loss"])
    bar.update(1, [("loss", 1.0), ("lr", 0.1)])
    bar.update(2, [("loss", 3.0), ("lr", 0.2)])
    line = capsys.readouterr().out
    assert "loss: 2.0000" in line and "lr: 0.2000" in line
    with pytest.raises(ValueError, match="Only one of"):
        utils.Progbar(2, stateful_metrics=["a"], stateless_metrics=["b"])
    assert utils.is_interactive_logging_enabled()
    utils.disable_interactive_logging()
    try:
        assert not utils.is_interactive_logging_enabled()
    finally:
        utils.enable_interactive_logging()


@pytest.mark.skipif(model_visualization.check_pydot(), reason="checks the message shown without pydot")
def test_plot_model_without_pydot_gives_keras_message(tmp_path):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    with pytest.raises(ImportError, match=r"You must install pydot \(`pip install pydot`\) for `plot_model`"):
        utils.plot_model(model, to_file=str(tmp_path / "m.png"))
    with pytest.raises(ImportError, match="for model_to_dot to work"):
        utils.model_to_dot(model)
