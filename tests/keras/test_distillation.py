"""keras.distillation against Keras 3.15 (TF 2.21 reference env): loss values, Distiller.compute_loss on the
same weights, log keys, configs and messages frozen in keras_distillation_reference.json by
tools/tf_reference/keras_distillation_reference.py; plus a real fit that trains the student only."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.keras import distillation as D

keras = tf.keras
REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_distillation_reference.json")))
T = torch.tensor(REF["T"])
S = torch.tensor(REF["S"])
X = np.asarray(REF["X"], dtype="float32")
Y = np.asarray(REF["Y"], dtype="int32")


def close(a, b):
    assert float(a) == pytest.approx(b, rel=1e-5, abs=1e-6)


def models():
    teacher = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="relu", name="t_hidden"),
                                keras.layers.Dense(5, name="t_out")], name="teacher")
    student = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="tanh", name="s_hidden"),
                                keras.layers.Dense(5, name="s_out")], name="student")
    for model in (teacher, student):
        for layer, weights in zip(model.layers, REF["weights"][model.name]):
            layer.set_weights([np.asarray(w, dtype="float32") for w in weights])
    return teacher, student


def test_logits_distillation_values():
    ref = REF["logits"]
    close(D.LogitsDistillation().compute_loss(T, S), ref["default"])
    close(D.LogitsDistillation(temperature=5.0, loss="categorical_crossentropy").compute_loss(T, S), ref["t5_cce"])
    close(D.LogitsDistillation(temperature=2, loss=["kl_divergence", None]).compute_loss([T, S], [S, T]),
          ref["list"])


def test_feature_distillation_values():
    ref = REF["features"]
    close(D.FeatureDistillation().compute_loss(T, S), ref["mse"])
    close(D.FeatureDistillation(loss="cosine_similarity").compute_loss(T, S), ref["cosine"])
    close(D.FeatureDistillation(loss=["mae", "mse"]).compute_loss([T, S], [S, S * 2]), ref["mae_list"])


@pytest.mark.parametrize("key", ["logits", "features", "student_only"])
def test_distiller_compute_loss_matches_keras(key):
    teacher, student = models()
    kwargs = {
        "logits": dict(distillation_losses=D.LogitsDistillation(temperature=2.0), student_loss_weight=0.3),
        "features": dict(distillation_losses=[D.LogitsDistillation(), D.FeatureDistillation(
            teacher_layer_name="t_hidden", student_layer_name="s_hidden")], distillation_loss_weights=[0.7, 0.2]),
        "student_only": dict(distillation_losses=D.LogitsDistillation(), student_loss_weight=1.0),
    }[key]
    distiller = D.Distiller(teacher=teacher, student=student, **kwargs)
    distiller.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x = torch.from_numpy(X)
    loss = distiller.compute_loss(x, torch.from_numpy(Y), distiller(x))
    ref = REF["distiller"][key]
    close(loss, ref["loss"])
    close(distiller.student_loss_tracker.result(), ref["student_loss"])
    close(distiller.distillation_loss_tracker.result(), ref["distillation_loss"])


def test_fit_trains_the_student_only_and_logs_keras_keys():
    teacher, student = models()
    teacher_before = [w.copy() for w in teacher.get_weights()]
    student_before = [w.copy() for w in student.get_weights()]
    distiller = D.Distiller(teacher=teacher, student=student, distillation_losses=D.LogitsDistillation())
    distiller.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = distiller.fit(X, Y, epochs=3, batch_size=6, verbose=0)
    assert sorted(history.history) == REF["fit_log_keys"]
    assert sorted(distiller.evaluate(X, Y, verbose=0, return_dict=True)) == REF["evaluate_keys"]
    assert teacher.trainable is REF["teacher_trainable"]
    assert all(np.array_equal(a, b) for a, b in zip(teacher_before, teacher.get_weights()))
    assert not all(np.array_equal(a, b) for a, b in zip(student_before, student.get_weights()))
    losses = history.history["total_loss"]
    assert losses[-1] < losses[0]  # plain SGD on one fixed batch: the combined loss goes down
    np.testing.assert_allclose(distiller.predict(X, verbose=0), student.predict(X, verbose=0), rtol=1e-6)


def test_configs_round_trip():
    teacher, student = models()
    distiller = D.Distiller(teacher=teacher, student=student, distillation_losses=D.LogitsDistillation())
    config = distiller.get_config()
    assert sorted(config) == REF["config_keys"]
    assert {k: config[k] for k in ("name", "distillation_loss_weights", "student_loss_weight")} == REF["config"]
    assert json.loads(json.dumps(config["distillation_losses"])) == REF["distillation_loss_configs"]
    assert D.FeatureDistillation(loss="mae", teacher_layer_name="a").get_config() == REF["feature_config"]
    back = D.Distiller.from_config(config)
    assert isinstance(back.distillation_losses[0], D.LogitsDistillation)
    assert back.distillation_losses[0].temperature == 3.0
    # a config carries architectures, not weights (as in Keras): same layers, same output shape
    assert [layer.name for layer in back.student.layers] == [layer.name for layer in student.layers]
    x = torch.from_numpy(X)
    assert back(x).shape == distiller(x).shape == (6, 5)


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return {"raises": type(info.value).__name__, "message": str(info.value)}


@pytest.mark.parametrize("key", ["bad_weight", "none_losses", "weights_len", "not_model", "temperature",
                                 "all_none", "feature_all_none", "no_layer", "compile_no_loss", "shape_mismatch"])
def test_errors_match_keras(key):
    teacher, student = models()
    make = {
        "bad_weight": lambda: D.Distiller(teacher, student, D.LogitsDistillation(), student_loss_weight=1.5),
        "none_losses": lambda: D.Distiller(teacher, student, None),
        "weights_len": lambda: D.Distiller(teacher, student, [D.LogitsDistillation()], [0.5, 0.5]),
        "not_model": lambda: D.Distiller(teacher.layers[0], student, D.LogitsDistillation()),
        "temperature": lambda: D.LogitsDistillation(temperature=0),
        "all_none": lambda: D.LogitsDistillation(loss=[None]),
        "feature_all_none": lambda: D.FeatureDistillation(loss=None),
        "no_layer": lambda: D.Distiller(teacher, student, D.FeatureDistillation(teacher_layer_name="nope")),
        "compile_no_loss": lambda: D.Distiller(teacher, student, D.LogitsDistillation()).compile(),
        "shape_mismatch": lambda: D.Distiller(teacher, keras.Sequential([keras.Input((3,)), keras.layers.Dense(4)]),
                                              D.LogitsDistillation()),
    }[key]
    got, want = _message(make), REF["errors"][key]
    assert got["raises"] == want["raises"]
    if key not in ("not_model", "no_layer"):  # these name Python classes / list layers in our own words
        assert got["message"] == want["message"]
