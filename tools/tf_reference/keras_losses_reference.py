"""Freezes Keras's numbers for the losses torchstrategy adds (run under the TF reference env, outside the suite):
/work/tf-venv/bin/python tools/tf_reference/keras_losses_reference.py  ->  tests/keras/losses/keras_losses_reference.json"""
import json
import os

import keras
import numpy as np

rng = np.random.RandomState(7)
probs = rng.uniform(0.05, 0.95, (4, 3)).astype("float32")
soft = probs / probs.sum(-1, keepdims=True)
logits = rng.normal(size=(4, 3)).astype("float32")
binary = np.array([[0, 1, 1], [1, 0, 0], [0, 0, 1], [1, 1, 0]], "float32")
onehot = np.eye(3, dtype="float32")[[0, 2, 1, 2]]
sparse = np.array([0, 2, 1, 2], "int64")
reg_true = rng.uniform(0, 3, (4, 3)).astype("float32")
reg_pred = rng.uniform(0.1, 3, (4, 3)).astype("float32")
signs = np.array([[-1, 1, 1], [1, -1, -1], [-1, -1, 1], [1, 1, -1]], "float32")
weights = np.array([0.5, 1.0, 2.0, 0.0], "float32")
emb = rng.normal(size=(6, 4)).astype("float32")
emb /= np.linalg.norm(emb, axis=-1, keepdims=True)
emb_labels = np.array([0, 1, 0, 1, 2, 0], "int64")
seg_true = (rng.uniform(size=(2, 4, 4, 1)) > 0.5).astype("float32")
seg_pred = rng.uniform(size=(2, 4, 4, 1)).astype("float32")
ctc_labels = np.array([[1, 2, 0], [3, 3, 1], [2, 0, 0]], "int64")
ctc_logits = rng.normal(size=(3, 7, 4)).astype("float32")

inputs = {name: value.tolist() for name, value in dict(
    probs=probs, soft=soft, logits=logits, binary=binary, onehot=onehot, sparse=sparse, reg_true=reg_true,
    reg_pred=reg_pred, signs=signs, weights=weights, emb=emb, emb_labels=emb_labels, seg_true=seg_true,
    seg_pred=seg_pred, ctc_labels=ctc_labels, ctc_logits=ctc_logits).items()}
L = keras.losses
# (case name, class name, constructor kwargs, y_true key, y_pred key, use weights)
cases = [
    ("squared_hinge", "SquaredHinge", {}, "binary", "logits", True),
    ("squared_hinge_signs", "SquaredHinge", {}, "signs", "logits", False),
    ("categorical_hinge", "CategoricalHinge", {}, "onehot", "logits", True),
    ("poisson", "Poisson", {}, "reg_true", "reg_pred", True),
    ("log_cosh", "LogCosh", {}, "reg_true", "reg_pred", True),
    ("bfce", "BinaryFocalCrossentropy", {}, "binary", "probs", True),
    ("bfce_balanced_logits", "BinaryFocalCrossentropy",
     dict(apply_class_balancing=True, alpha=0.3, gamma=1.5, from_logits=True, label_smoothing=0.1), "binary",
     "logits", True),
    ("cfce", "CategoricalFocalCrossentropy", {}, "onehot", "soft", True),
    ("cfce_logits", "CategoricalFocalCrossentropy", dict(alpha=0.5, gamma=3.0, from_logits=True, label_smoothing=0.2),
     "onehot", "logits", True),
    ("gce", "CategoricalGeneralizedCrossEntropy", dict(q=0.7), "sparse", "soft", True),
    ("dice", "Dice", {}, "seg_true", "seg_pred", False),
    ("dice_axis", "Dice", dict(axis=(1, 2, 3)), "seg_true", "seg_pred", False),
    ("tversky", "Tversky", dict(alpha=0.3, beta=0.7), "seg_true", "seg_pred", False),
    ("tversky_axis", "Tversky", dict(alpha=0.3, beta=0.7, axis=(1, 2, 3)), "seg_true", "seg_pred", False),
    ("circle", "Circle", {}, "emb_labels", "emb", False),
    ("circle_keep_diag", "Circle", dict(gamma=10.0, margin=0.25, remove_diagonal=False), "emb_labels", "emb", False),
    ("ctc", "CTC", {}, "ctc_labels", "ctc_logits", False),
]
functions = {"SquaredHinge": "squared_hinge", "CategoricalHinge": "categorical_hinge", "Poisson": "poisson",
             "LogCosh": "log_cosh", "BinaryFocalCrossentropy": "binary_focal_crossentropy",
             "CategoricalFocalCrossentropy": "categorical_focal_crossentropy",
             "CategoricalGeneralizedCrossEntropy": "categorical_generalized_cross_entropy", "Dice": "dice",
             "Tversky": "tversky", "Circle": "circle", "CTC": "ctc"}
raw = {k: np.asarray(v) for k, v in inputs.items()}
raw = {k: v.astype("float32") if v.dtype == np.float64 else v for k, v in raw.items()}
out = []
for case, cls, kwargs, yt, yp, weighted in cases:
    loss = getattr(L, cls)(**kwargs)
    entry = dict(case=case, cls=cls, kwargs=kwargs, y_true=yt, y_pred=yp,
                 value=float(loss(raw[yt], raw[yp])), config=loss.get_config())
    fn_kwargs = {k: v for k, v in kwargs.items()}
    entry["per_sample"] = np.asarray(getattr(L, functions[cls])(raw[yt], raw[yp], **fn_kwargs)).tolist()
    if weighted:
        entry["weighted_sum"] = float(getattr(L, cls)(reduction="sum", **kwargs)(raw[yt], raw[yp],
                                                                               sample_weight=raw["weights"]))
        entry["weighted_mean"] = float(loss(raw[yt], raw[yp], sample_weight=raw["weights"]))
    out.append(entry)
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "losses", "keras_losses_reference.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump({"keras_version": keras.__version__, "inputs": inputs, "cases": out}, f)
print("wrote", path)
