"""Freezes keras.distillation's loss values, Distiller.compute_loss on fixed weights, fit's log keys, configs
and messages (run under the TF reference env, TF 2.21 / Keras 3.15):
/work/tf-venv/bin/python tools/tf_reference/keras_distillation_reference.py -> tests/keras/keras_distillation_reference.json"""
import json
import os

import keras
import numpy as np

rng = np.random.default_rng(11)
T = rng.normal(size=(4, 5)).astype("float32")
S = rng.normal(size=(4, 5)).astype("float32")
X = rng.normal(size=(6, 3)).astype("float32")
Y = rng.integers(0, 5, size=(6,)).astype("int32")
D = keras.distillation


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


def models():
    teacher = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="relu", name="t_hidden"),
                                keras.layers.Dense(5, name="t_out")], name="teacher")
    student = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="tanh", name="s_hidden"),
                                keras.layers.Dense(5, name="s_out")], name="student")
    for model in (teacher, student):
        for layer in model.layers:
            kernel, bias = layer.get_weights()
            layer.set_weights([rng.normal(size=kernel.shape).astype("float32") * 0.5,
                               rng.normal(size=bias.shape).astype("float32") * 0.1])
    return teacher, student


out = {"keras_version": keras.__version__, "T": T.tolist(), "S": S.tolist(), "X": X.tolist(), "Y": Y.tolist()}
out["logits"] = {
    "default": float(D.LogitsDistillation().compute_loss(T, S)),
    "t5_cce": float(D.LogitsDistillation(temperature=5.0, loss="categorical_crossentropy").compute_loss(T, S)),
    "list": float(D.LogitsDistillation(temperature=2, loss=["kl_divergence", None]).compute_loss([T, S], [S, T])),
}
out["features"] = {
    "mse": float(D.FeatureDistillation().compute_loss(T, S)),
    "cosine": float(D.FeatureDistillation(loss="cosine_similarity").compute_loss(T, S)),
    "mae_list": float(D.FeatureDistillation(loss=["mae", "mse"]).compute_loss([T, S], [S, S * 2])),
}
teacher, student = models()
out["weights"] = {m.name: [[w.tolist() for w in layer.get_weights()] for layer in m.layers]
                  for m in (teacher, student)}
cases = {
    "logits": dict(distillation_losses=D.LogitsDistillation(temperature=2.0), student_loss_weight=0.3),
    "features": dict(distillation_losses=[D.LogitsDistillation(), D.FeatureDistillation(
        teacher_layer_name="t_hidden", student_layer_name="s_hidden")], distillation_loss_weights=[0.7, 0.2]),
    "student_only": dict(distillation_losses=D.LogitsDistillation(), student_loss_weight=1.0),
}
out["distiller"] = {}
for key, kwargs in cases.items():
    distiller = D.Distiller(teacher=teacher, student=student, **kwargs)
    distiller.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    loss = distiller.compute_loss(X, Y, distiller(X))
    out["distiller"][key] = {"loss": float(loss), "student_loss": float(distiller.student_loss_tracker.result()),
                             "distillation_loss": float(distiller.distillation_loss_tracker.result()),
                             "metrics_names": [m.name for m in distiller.metrics]}
distiller = D.Distiller(teacher=teacher, student=student, distillation_losses=D.LogitsDistillation())
distiller.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
history = distiller.fit(X, Y, epochs=1, batch_size=6, verbose=0)
out["fit_log_keys"] = sorted(history.history)
out["evaluate_keys"] = sorted(distiller.evaluate(X, Y, verbose=0, return_dict=True))
out["teacher_trainable"] = teacher.trainable
config = distiller.get_config()
out["config_keys"] = sorted(config)
out["config"] = {k: config[k] for k in ("name", "distillation_loss_weights", "student_loss_weight")}
out["distillation_loss_configs"] = config["distillation_losses"]
out["feature_config"] = D.FeatureDistillation(loss="mae", teacher_layer_name="a").get_config()
out["errors"] = {
    "bad_weight": raises(lambda: D.Distiller(teacher, student, D.LogitsDistillation(), student_loss_weight=1.5)),
    "none_losses": raises(lambda: D.Distiller(teacher, student, None)),
    "weights_len": raises(lambda: D.Distiller(teacher, student, [D.LogitsDistillation()], [0.5, 0.5])),
    "not_model": raises(lambda: D.Distiller(teacher.layers[0], student, D.LogitsDistillation())),
    "temperature": raises(lambda: D.LogitsDistillation(temperature=0)),
    "all_none": raises(lambda: D.LogitsDistillation(loss=[None])),
    "feature_all_none": raises(lambda: D.FeatureDistillation(loss=None)),
    "no_layer": raises(lambda: D.Distiller(teacher, student, D.FeatureDistillation(teacher_layer_name="nope"))),
    "compile_no_loss": raises(lambda: D.Distiller(teacher, student, D.LogitsDistillation()).compile()),
    "shape_mismatch": raises(lambda: D.Distiller(
        teacher, keras.Sequential([keras.Input((3,)), keras.layers.Dense(4)]), D.LogitsDistillation())),
}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_distillation_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
