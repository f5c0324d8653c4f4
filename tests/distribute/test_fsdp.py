"""FSDPStrategy with real processes on 127.0.0.1 (gloo): sharded fit and custom loops give
MirroredStrategy's numbers; Keras files hold whole tensors and move between strategies."""
from __future__ import annotations

import os

import numpy as np
import pytest

from tests import _multiprocess as mp

# argv: strategy kind (fsdp | mirrored), output folder. Both modes (fit, then a custom loop) run in one launch,
# each on a model built afresh from the same seed; each rank writes what it holds and the chief writes the
# weights, History (or losses), evaluate and predict results, into out/<mode>/.
TRAIN = r'''
import json, os, sys
import numpy as np, torch
import torchstrategy as tf

kind, out = sys.argv[1], sys.argv[2]
devices = ["/cpu:0", "/cpu:1"]
strategy = {"fsdp": lambda: tf.distribute.experimental.FSDPStrategy(devices),
            "mirrored": lambda: tf.distribute.MirroredStrategy(devices)}[kind]()
rng = np.random.default_rng(0)
x = rng.standard_normal((96, 8, 8, 3)).astype("float32")
y = rng.integers(0, 10, 96)


def train(mode):
    tf.keras.utils.set_random_seed(1)
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.Input((8, 8, 3)), tf.keras.layers.Conv2D(8, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(), tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Conv2D(6, 2, activation="relu"), tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(10, kernel_regularizer=tf.keras.regularizers.L2(1e-2))])
    result = {}
    if mode == "fit":
        with strategy.scope():
            model.compile(optimizer=tf.keras.optimizers.Adam(1e-2, global_clipnorm=0.5),
                          loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        # EarlyStopping keeps the best weights: get_weights gathers the shards on every replica each epoch
        keep_best = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=3, restore_best_weights=True)
        history = model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False, callbacks=[keep_best])
        result["history"] = history.history
        result["evaluate"] = model.evaluate(x, y, batch_size=32, verbose=0)
        result["predict"] = model.predict(x[:20], batch_size=8, verbose=0).tolist()
    else:
        global_batch = 16
        dataset = strategy.experimental_distribute_dataset(
            tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch))
        with strategy.scope():
            loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
            optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9, clipnorm=0.3)

        def step(inputs):
            images, labels = inputs
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(loss_object(labels, model(images, training=True)),
                                                  global_batch_size=global_batch)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        losses = []
        for epoch in range(2):
            for batch in dataset:
                losses.append(float(strategy.reduce("SUM", strategy.run(step, args=(batch,)), axis=None)))
        result["history"] = {"loss": losses}
    folder = os.path.join(out, mode)
    os.makedirs(folder, exist_ok=True)
    held = [(type(v).__name__, int(v.to_local().numel()) if hasattr(v, "to_local") else int(v.numel()),
             int(v.numel())) for v in model.trainable_variables]
    with open(os.path.join(folder, f"held_{strategy.process_rank}.json"), "w") as handle:
        json.dump(held, handle)
    result["weights"] = [w.tolist() for w in model.get_weights()]
    if strategy.is_chief:
        with open(os.path.join(folder, "result.json"), "w") as handle:
            json.dump(result, handle)


for mode in ("fit", "loop"):
    train(mode)
'''


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    # one launch per strategy kind runs both modes: {kind: {mode: (result, held per rank)}}
    runs = {}
    for kind in ("fsdp", "mirrored"):
        out = tmp_path_factory.mktemp(kind)
        script = mp.write_script(out, TRAIN, name="fsdp_train.py")
        result = mp.run_python([script, kind, str(out)], timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        runs[kind] = {mode: (mp.read_json(out / mode / "result.json"),
                             [mp.read_json(out / mode / f"held_{rank}.json") for rank in range(2)])
                      for mode in ("fit", "loop")}
    return runs


def _assert_weights_equal(left: list, right: list, atol: float) -> None:
    assert len(left) == len(right)
    for index, (a, b) in enumerate(zip(left, right)):
        np.testing.assert_allclose(np.array(a), np.array(b), atol=atol, rtol=0, err_msg=f"weight #{index}")


def _assert_sharded(held: list) -> None:
    """Every trainable variable is a DTensor; the two ranks' shards add up to it, none holds all of it, and
    each holds exactly half where some dimension is even (a (3, 3, 3, 8) Conv2D kernel is split on its last)."""
    for (kind0, local0, full0), (kind1, local1, full1) in zip(*held):
        assert kind0 == kind1 == "DTensor"
        assert local0 + local1 == full0 == full1
        assert max(local0, local1) < full0
        if full0 % 2 == 0:
            assert local0 == local1, (local0, local1)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fit", "loop"])
def test_fsdp_trains_like_mirrored_with_every_variable_sharded(trained, mode):
    fsdp, held = trained["fsdp"][mode]
    mirrored, _ = trained["mirrored"][mode]
    _assert_sharded(held)
    _assert_weights_equal(fsdp["weights"], mirrored["weights"], atol=1e-6)
    for key, values in mirrored["history"].items():
        np.testing.assert_allclose(fsdp["history"][key], values, atol=1e-6, rtol=0, err_msg=key)
    if mode == "fit":
        np.testing.assert_allclose(fsdp["evaluate"], mirrored["evaluate"], atol=1e-6, rtol=0)
        np.testing.assert_allclose(fsdp["predict"], mirrored["predict"], atol=1e-5, rtol=0)
        assert fsdp["history"]["loss"][1] < fsdp["history"]["loss"][0]


# argv: kind (fsdp | one), action (save | load), folder. `save` trains one epoch and writes a Keras model file,
# a weights file and what it holds; `load` reads the other kind's files and reports what it restored.
SAVING = r'''
import json, os, sys
import numpy as np, torch
import torchstrategy as tf

kind, action, folder = sys.argv[1], sys.argv[2], sys.argv[3]
strategy = (tf.distribute.experimental.FSDPStrategy(["/cpu:0", "/cpu:1"]) if kind == "fsdp"
            else tf.distribute.OneDeviceStrategy("/cpu:0"))
from torchstrategy.keras import backend
rng = np.random.default_rng(0)
x = rng.standard_normal((32, 6, 6, 3)).astype("float32")
y = rng.integers(0, 5, 32)

def slots(model):
    optimizer = model.optimizer
    return [backend.full_value(optimizer.state[p][key]).tolist() for p in model.trainable_variables
            for key in ("momentum", "velocity")] + [int(optimizer.iterations)]

def report(name, model):
    held = {"weights": [w.tolist() for w in model.get_weights()], "slots": slots(model)}  # gathers: every rank
    if strategy.is_chief:
        with open(os.path.join(folder, f"{kind}_{name}.json"), "w") as handle:
            json.dump(held, handle)

with strategy.scope():
    if action == "save":
        tf.keras.utils.set_random_seed(2 if kind == "fsdp" else 3)
        model = tf.keras.Sequential([tf.keras.Input((6, 6, 3)), tf.keras.layers.Conv2D(4, 3, activation="relu"),
                                     tf.keras.layers.Flatten(), tf.keras.layers.Dense(5)])
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        every_epoch = tf.keras.callbacks.ModelCheckpoint(os.path.join(folder, f"{kind}_callback.keras"))
        model.fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=[every_epoch])
        model.save(os.path.join(folder, f"{kind}.keras"))
        model.save_weights(os.path.join(folder, f"{kind}.weights.h5"))
        report("saved", model)
    else:
        other = "one" if kind == "fsdp" else "fsdp"
        model = tf.keras.models.load_model(os.path.join(folder, f"{other}.keras"))
        model.fit(x[:8], y[:8], batch_size=8, epochs=1, verbose=0)  # sets the model up: sharded under FSDP
        model.load_weights(os.path.join(folder, f"{other}.weights.h5"))
        fresh = tf.keras.models.load_model(os.path.join(folder, f"{other}.keras"))
        fresh.optimizer.build(fresh.trainable_variables)
        report("after_load_weights", model)
        report("loaded", fresh)
        report("callback", tf.keras.models.load_model(os.path.join(folder, f"{other}_callback.keras")))
'''


@pytest.mark.slow
def test_keras_files_hold_whole_tensors_and_move_between_fsdp_and_one_process(tmp_path):
    script = mp.write_script(tmp_path, SAVING, name="saving.py")
    for kind, action in (("fsdp", "save"), ("one", "save"), ("fsdp", "load"), ("one", "load")):
        result = mp.run_python([script, kind, action, str(tmp_path)], timeout=240)
        assert result.returncode == 0, f"{kind} {action}:\n" + result.stdout + result.stderr
    for kind, other in (("fsdp", "one"), ("one", "fsdp")):
        saved = mp.read_json(os.path.join(str(tmp_path), f"{other}_saved.json"))
        loaded = mp.read_json(os.path.join(str(tmp_path), f"{kind}_loaded.json"))
        after_weights = mp.read_json(os.path.join(str(tmp_path), f"{kind}_after_load_weights.json"))
        _assert_weights_equal(loaded["weights"], saved["weights"], atol=0)
        _assert_weights_equal(loaded["slots"][:-1], saved["slots"][:-1], atol=0)
        assert loaded["slots"][-1] == saved["slots"][-1] == 4  # iterations: 32 samples / batch 8
        _assert_weights_equal(after_weights["weights"], saved["weights"], atol=0)
        callback = mp.read_json(os.path.join(str(tmp_path), f"{kind}_callback.json"))  # ModelCheckpoint's file
        _assert_weights_equal(callback["weights"], saved["weights"], atol=0)
    one_saved = mp.read_json(os.path.join(str(tmp_path), "one_saved.json"))
    fsdp_saved = mp.read_json(os.path.join(str(tmp_path), "fsdp_saved.json"))
    assert not np.allclose(np.array(one_saved["weights"][0]), np.array(fsdp_saved["weights"][0]))  # seeds differ


OUTSIDE_SCOPE = r'''
import torchstrategy as tf
strategy = tf.distribute.experimental.FSDPStrategy(["/cpu:0", "/cpu:1"])
model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
with strategy.scope():
    model.compile(optimizer="adam", loss="mse")
'''


@pytest.mark.slow
def test_a_model_created_outside_the_scope_is_refused_naming_the_strategy(tmp_path):
    script = mp.write_script(tmp_path, OUTSIDE_SCOPE, name="outside.py")
    result = mp.run_python([script], timeout=120)
    assert result.returncode != 0
    assert "created outside strategy.scope(), but FSDPStrategy needs its variables created inside it" in result.stderr


# argv: output file. One launch tries the three sources one after another, each with a strategy and model of its
# own: the Keras mixed_bfloat16 and mixed_float16 policies, and float32 layers with FSDP options alone.
MIXED = r'''
import json, sys
import numpy as np, torch
import torchstrategy as tf

rng = np.random.default_rng(0)
x = rng.standard_normal((64, 12)).astype("float32")
y = rng.integers(0, 3, 64)
reports = {}
for source in ("mixed_bfloat16", "mixed_float16", "options"):
    if source.startswith("mixed_"):
        tf.keras.mixed_precision.set_global_policy(source)
        strategy = tf.distribute.experimental.FSDPStrategy(["/cpu:0", "/cpu:1"])
    else:  # float32 layers; the options alone gather in bfloat16
        tf.keras.mixed_precision.set_global_policy("float32")
        strategy = tf.distribute.experimental.FSDPStrategy(["/cpu:0", "/cpu:1"], options=(
            tf.distribute.experimental.ShardingOptions(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)))
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((12,)), tf.keras.layers.Dense(16, activation="relu"),
                                     tf.keras.layers.Dense(3)])
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, batch_size=16, epochs=3, verbose=0)
    policy = model.layers[0]._get_fsdp_state()._fsdp_param_group.mp_policy
    reports[source] = {"param_dtype": str(policy.param_dtype), "reduce_dtype": str(policy.reduce_dtype),
                       "variable_dtype": str(model.trainable_variables[0].dtype), "loss": history.history["loss"],
                       "optimizer": type(model.optimizer).__name__}
if strategy.is_chief:
    json.dump(reports, open(sys.argv[1], "w"))
'''


@pytest.fixture(scope="module")
def mixed_reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mixed")
    script = mp.write_script(folder, MIXED, name="mixed.py")
    out = os.path.join(str(folder), "mixed.json")
    result = mp.run_python([script, out], timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return mp.read_json(out)


@pytest.mark.slow
@pytest.mark.parametrize("source", ["mixed_bfloat16", "mixed_float16", "options"])
def test_the_keras_mixed_policy_or_the_options_gather_in_half_precision_and_reduce_in_float32(mixed_reports, source):
    report = mixed_reports[source]
    half = "torch.float16" if source == "mixed_float16" else "torch.bfloat16"
    assert report["param_dtype"] == half and report["reduce_dtype"] == "torch.float32"
    # mixed_float16 compiles with Keras's dynamic loss scaling, over sharded gradients
    assert report["optimizer"] == ("LossScaleOptimizer" if source == "mixed_float16" else "Adam")
    assert report["variable_dtype"] == "torch.float32"  # the sharded variables stay float32
    assert report["loss"][-1] < report["loss"][0]


def test_one_replica_fsdp_trains_unsharded_in_one_process():
    import torchstrategy as tf

    strategy = tf.distribute.experimental.FSDPStrategy(["/cpu:0"])
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 4)).astype("float32"), rng.standard_normal((32, 1)).astype("float32")
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
    history = model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    assert strategy.num_replicas_in_sync == 1
    assert history.history["loss"][1] < history.history["loss"][0]


def test_bad_arguments_are_refused_with_what_to_pass():
    import torchstrategy as tf

    with pytest.raises(TypeError, match="ShardingOptions"):
        tf.distribute.experimental.FSDPStrategy(["/cpu:0"], options={"reshard_after_forward": False})
    with pytest.raises(ValueError, match="not both"):
        tf.distribute.experimental.FSDPStrategy(["/cpu:0"], cluster_resolver=object())
    with pytest.raises(ValueError, match="No duplicates"):
        tf.distribute.experimental.FSDPStrategy(["/cpu:0", "/cpu:0"])


# argv: output folder, then "one" (the 1-process reference) or "cluster" (torchrun / TF_CONFIG decides)
CLUSTER = r'''
import json, os, sys
import numpy as np
import torchstrategy as tf

out, how = sys.argv[1], sys.argv[2]
strategy = (tf.distribute.experimental.FSDPStrategy(["/cpu:0"]) if how == "one"
            else tf.distribute.experimental.FSDPStrategy())
rng = np.random.default_rng(0)
x, y = rng.standard_normal((64, 5)).astype("float32"), rng.integers(0, 3, 64)
tf.keras.utils.set_random_seed(4)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Dense(7, activation="relu"),
                                 tf.keras.layers.Dense(3)])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
weights = [w.tolist() for w in model.get_weights()]
if strategy.is_chief:
    json.dump({"replicas": strategy.num_replicas_in_sync, "weights": weights}, open(os.path.join(out, "w.json"), "w"))
'''


@pytest.mark.slow
def test_fsdp_joins_torchrun_and_tf_config_clusters_with_the_numbers_of_one_process(tmp_path):
    import contextlib
    import json
    import sys

    script = mp.write_script(tmp_path, CLUSTER, name="cluster.py")
    outs = {name: tmp_path / name for name in ("one", "torchrun", "tf_config")}
    for folder in outs.values():
        folder.mkdir()
    one = mp.run_python([script, str(outs["one"]), "one"], timeout=180)
    assert one.returncode == 0, one.stdout + one.stderr
    port = mp.free_port()
    launched = mp.run_torchrun(
        ["--nnodes=1", "--nproc_per_node=2", "--rdzv-backend=c10d", f"--rdzv-endpoint={mp.LOOPBACK}:{port}",
         f"--local-addr={mp.LOOPBACK}", "--max-restarts=0"], [script, str(outs["torchrun"]), "cluster"], timeout=240)
    assert launched.returncode == 0, launched.stdout + launched.stderr
    chief, worker = mp.free_port(), mp.free_port()
    cluster = {"chief": [f"{mp.LOOPBACK}:{chief}"], "worker": [f"{mp.LOOPBACK}:{worker}"]}
    with contextlib.ExitStack() as stack:
        procs = [stack.enter_context(mp.process_group(
            [sys.executable, script, str(outs["tf_config"]), "cluster"],
            env=mp.clean_env(TF_CONFIG=json.dumps({"cluster": cluster, "task": task}))))
            for task in ({"type": "chief", "index": 0}, {"type": "worker", "index": 0})]
        results = [proc.communicate(timeout=240) for proc in procs]
        assert all(proc.returncode == 0 for proc in procs), results
    reference = mp.read_json(outs["one"] / "w.json")
    assert reference["replicas"] == 1
    for name in ("torchrun", "tf_config"):
        report = mp.read_json(outs[name] / "w.json")
        assert report["replicas"] == 2
        _assert_weights_equal(report["weights"], reference["weights"], atol=1e-5)
