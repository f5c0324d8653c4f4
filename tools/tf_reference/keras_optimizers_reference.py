"""Freezes Keras's numbers for the optimizers torchstrategy adds (run under the TF reference env, outside the
suite): /work/tf-venv/bin/python tools/tf_reference/keras_optimizers_reference.py
-> tests/keras/optimizers/keras_optimizers_reference.json (3 steps on two variables; slot variable names)."""
import json
import os

import keras
import numpy as np

rng = np.random.RandomState(5)
w0 = rng.normal(size=(2, 3)).astype("float32")
b0 = rng.normal(size=(3,)).astype("float32")
grads = [(rng.normal(size=(2, 3)).astype("float32"), rng.normal(size=(3,)).astype("float32")) for _ in range(3)]
cases = [
    ("lion", "Lion", {}),
    ("lion_wd", "Lion", {"learning_rate": 0.01, "beta_1": 0.8, "beta_2": 0.95, "weight_decay": 0.1}),
    ("lamb", "Lamb", {}),
    ("lamb_lr", "Lamb", {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.9, "epsilon": 1e-5}),
    ("ftrl", "Ftrl", {}),
    ("ftrl_reg", "Ftrl", {"learning_rate": 0.1, "learning_rate_power": -0.7, "initial_accumulator_value": 0.3,
                          "l1_regularization_strength": 0.01, "l2_regularization_strength": 0.02,
                          "l2_shrinkage_regularization_strength": 0.03, "beta": 0.5}),
    ("adafactor", "Adafactor", {}),
    ("adafactor_abs", "Adafactor", {"learning_rate": 0.05, "relative_step": False, "beta_2_decay": -0.5,
                                    "epsilon_2": 1e-2, "clip_threshold": 0.5}),
    ("schedule_free", "ScheduleFreeAdamW", {}),
    ("schedule_free_warmup", "ScheduleFreeAdamW", {"learning_rate": 0.01, "beta_1": 0.8, "warmup_steps": 2,
                                                   "weight_decay": 0.05}),
    ("muon", "Muon", {}),
    ("muon_plain", "Muon", {"learning_rate": 0.02, "nesterov": False, "rms_rate": None, "momentum": 0.9,
                            "adam_lr_ratio": 0.5, "weight_decay": 0.1, "adam_weight_decay": 0.01}),
]
out = []
for case, cls, kwargs in cases:
    w = keras.Variable(w0, name="w")
    b = keras.Variable(b0, name="b")
    opt = getattr(keras.optimizers, cls)(**kwargs)
    steps = []
    for gw, gb in grads:
        opt.apply_gradients([(gw, w), (gb, b)])
        steps.append([np.asarray(w).tolist(), np.asarray(b).tolist()])
    out.append(dict(case=case, cls=cls, kwargs=kwargs, steps=steps,
                    variables=[(v.path, list(v.shape)) for v in opt.variables],
                    config={k: v for k, v in opt.get_config().items() if k != "name"}))
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "optimizers",
                    "keras_optimizers_reference.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump({"keras_version": keras.__version__, "w0": w0.tolist(), "b0": b0.tolist(),
               "grads": [[gw.tolist(), gb.tolist()] for gw, gb in grads], "cases": out}, f)
print("wrote", path)
