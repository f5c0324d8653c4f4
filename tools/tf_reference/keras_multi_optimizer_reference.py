"""Freezes Keras 3.15's MultiOptimizer / OptimizerMap updates, configs and errors (run under the TF reference env,
TF 2.21 / Keras 3.15):
/work/tf-venv/bin/python tools/tf_reference/keras_multi_optimizer_reference.py
-> tests/keras/optimizers/keras_multi_optimizer_reference.json"""
import json
import os

import keras
import numpy as np
import tensorflow as tf

O = keras.optimizers
rng = np.random.default_rng(5)
K1 = rng.normal(size=(4, 3)).astype("float32")
B1 = rng.normal(size=(3,)).astype("float32")
K2 = rng.normal(size=(3, 2)).astype("float32")
B2 = rng.normal(size=(2,)).astype("float32")
GRADS = [[rng.normal(size=w.shape).astype("float32") for w in (K1, B1, K2, B2)] for _ in range(2)]


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


def model():
    inputs = keras.Input((4,))
    hidden = keras.layers.Dense(3, name="encoder_dense")(inputs)
    out = keras.Model(inputs, keras.layers.Dense(2, name="head")(hidden))
    out.set_weights([K1, B1, K2, B2])
    return out


out = {"keras_version": keras.__version__, "tf_version": tf.__version__, "weights": [w.tolist() for w in
                                                                                       (K1, B1, K2, B2)],
       "grads": [[g.tolist() for g in step] for step in GRADS]}
net = model()
sgd, adam = O.SGD(0.1, momentum=0.5), O.Adam(0.01)
multi = O.MultiOptimizer(O.OptimizerMap(sgd, {"encoder.*": adam}))
for step in GRADS:
    multi.apply([tf.constant(g) for g in step], net.trainable_variables)
out["map_after"] = [np.asarray(w).tolist() for w in net.trainable_variables]
out["iterations"] = [int(multi.iterations), int(sgd.iterations), int(adam.iterations)]
out["paths"] = [w.path for w in net.trainable_variables]
out["variables"] = [[v.path, list(v.shape)] for v in multi.variables]
out["config"] = multi.get_config()

net = model()
sgd2, adam2 = O.SGD(0.1), O.Adam(0.01)
callable_multi = O.MultiOptimizer(lambda v: adam2 if "kernel" in v.path else sgd2)
for step in GRADS:
    callable_multi.apply([tf.constant(g) for g in step], net.trainable_variables)
out["callable_after"] = [np.asarray(w).tolist() for w in net.trainable_variables]
out["optimizer_names"] = [o.name for o in callable_multi.optimizers]

m = O.OptimizerMap(O.SGD())
m["a.*"] = O.Adam()
m["ab.*"] = O.RMSprop()
out["errors"] = {
    "default_type": raises(lambda: O.OptimizerMap("sgd")),
    "map_type": raises(lambda: O.OptimizerMap(O.SGD(), [("a", O.SGD())])),
    "duplicate": raises(lambda: m.__setitem__("a.*", O.SGD())),
    "key_type": raises(lambda: m.__setitem__(3, O.SGD())),
    "value_type": raises(lambda: m.__setitem__("z", "sgd")),
    "loss_scale": raises(lambda: m.__setitem__("y", O.LossScaleOptimizer(O.SGD()))),
    "multi": raises(lambda: m.__setitem__("x", O.MultiOptimizer(O.OptimizerMap(O.SGD())))),
    "ambiguous": raises(lambda: m["abc"]),
    "get_lr": raises(lambda: O.MultiOptimizer(O.OptimizerMap(O.SGD())).learning_rate),
    "set_lr": raises(lambda: setattr(O.MultiOptimizer(O.OptimizerMap(O.SGD())), "learning_rate", 0.1)),
}
out["lookups"] = {"b": m["b"].name, "a1": m["a1"].name}
json.dump(out, open(os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "optimizers",
                                 "keras_multi_optimizer_reference.json"), "w"))
print("ok")
