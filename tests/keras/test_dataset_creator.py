"""tf.keras.utils.experimental.DatasetCreator: its checks (TF 2.21's semantics), fit/evaluate on it equal
to fit/evaluate on the same dataset passed directly, and 2 MirroredStrategy replicas in real processes."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf
from tests import _multiprocess as mp


def _data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, 5)).astype(np.float32)
    y = (x @ np.arange(1, 6, dtype=np.float32).reshape(5, 1) / 15).astype(np.float32)
    return x, y


def _model():
    tf.random.set_seed(1)
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(5,)),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.Adam(5e-2), loss="mse", metrics=["mae"])
    return model


def _dataset():
    x, y = _data()
    return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(64, seed=2).batch(16).repeat()


def test_creator_calls_the_function_and_checks_what_it_returns():
    contexts = []

    def dataset_fn(context):
        contexts.append(context)
        return tf.data.Dataset.range(4)

    creator = tf.keras.utils.experimental.DatasetCreator(dataset_fn)
    context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=2)
    assert list(creator(context)) == [0, 1, 2, 3]
    assert contexts == [context]
    assert creator.input_options is None
    with pytest.raises(TypeError, match="must return a tf.data.Dataset; it returned list"):
        tf.keras.utils.experimental.DatasetCreator(lambda context: [1, 2])(context)


def test_creator_refuses_a_non_callable_and_options_of_another_type():
    with pytest.raises(TypeError, match="needs a callable `dataset_fn`.*got RangeDataset"):
        tf.keras.utils.experimental.DatasetCreator(tf.data.Dataset.range(3))
    with pytest.raises(TypeError, match="must be a tf.distribute.InputOptions or None; got dict"):
        tf.keras.utils.experimental.DatasetCreator(lambda c: tf.data.Dataset.range(3), input_options={"a": 1})
    options = tf.distribute.InputOptions(experimental_fetch_to_device=False)
    assert tf.keras.utils.experimental.DatasetCreator(lambda c: None, input_options=options).input_options is options


def test_fit_and_evaluate_on_a_creator_equal_the_same_dataset_passed_directly():
    contexts = []

    def dataset_fn(context):
        contexts.append(context)
        return _dataset()

    direct, created = _model(), _model()
    np.testing.assert_array_equal(direct.get_weights()[0], created.get_weights()[0])
    direct_history = direct.fit(_dataset(), steps_per_epoch=3, epochs=3, verbose=0)
    created_history = created.fit(tf.keras.utils.experimental.DatasetCreator(dataset_fn), steps_per_epoch=3,
                                  epochs=3, verbose=0)
    # one InputContext for the one pipeline of the default strategy, and one iterator across the epochs
    assert [(c.input_pipeline_id, c.num_input_pipelines, c.num_replicas_in_sync) for c in contexts] == [(0, 1, 1)]
    assert created.optimizer.iterations == 9
    for ours, expected in zip(created.get_weights(), direct.get_weights()):
        np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(created_history.history["loss"], direct_history.history["loss"], rtol=1e-6)
    assert created_history.history["loss"][-1] < created_history.history["loss"][0]  # it trained
    evaluated = created.evaluate(tf.keras.utils.experimental.DatasetCreator(lambda c: _dataset()), steps=4,
                                 verbose=0, return_dict=True)
    expected = created.evaluate(_dataset(), steps=4, verbose=0, return_dict=True)
    assert evaluated.keys() == expected.keys() == {"loss", "mae"}
    for name in expected:
        np.testing.assert_allclose(evaluated[name], expected[name], rtol=1e-6)
    predicted = created.predict(tf.keras.utils.experimental.DatasetCreator(lambda c: _dataset()), steps=2, verbose=0)
    assert predicted.shape == (32, 1)
    np.testing.assert_allclose(predicted, created.predict(_dataset(), steps=2, verbose=0), rtol=1e-6)


def test_a_creator_needs_steps_and_takes_no_separate_targets():
    model = _model()
    creator = tf.keras.utils.experimental.DatasetCreator(lambda context: _dataset())
    with pytest.raises(ValueError, match="pass `steps_per_epoch` to Model.fit"):
        model.fit(creator, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="`steps` to Model.evaluate"):
        model.evaluate(creator, verbose=0)
    with pytest.raises(ValueError, match="`y` and `sample_weight` are not supported with a DatasetCreator"):
        model.fit(creator, np.zeros((4, 1), np.float32), steps_per_epoch=2, verbose=0)
    with pytest.raises(ValueError, match="positive integer; got 0"):
        model.fit(creator, steps_per_epoch=0, verbose=0)


# Each replica process builds its own shard through the DatasetCreator; the chief writes the weights.
# argv: output folder, replica count, "creator" or "direct" (the dataset of global batches, split by fit).
MIRRORED = r'''
import json, os, sys
import numpy as np
import torchstrategy as tf

out, replicas, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
rng = np.random.default_rng(0)
x = rng.random((64, 5)).astype(np.float32)
y = (x @ np.arange(1, 6, dtype=np.float32).reshape(5, 1)).astype(np.float32)
x[:, 0] = np.arange(64)  # sample id, read back from the batches each replica sees
seen, contexts = [], []
GLOBAL_BATCH = 16

def dataset_fn(context):
    contexts.append([context.input_pipeline_id, context.num_input_pipelines, context.num_replicas_in_sync])
    batch = context.get_per_replica_batch_size(GLOBAL_BATCH)
    # the replica of pipeline p takes rows p, p + n, ... of each global batch, as the direct split would
    # give it the matching half: rows [p * batch, (p + 1) * batch) of every global batch
    ids = np.concatenate([np.arange(start, start + GLOBAL_BATCH)[context.input_pipeline_id * batch:
                                                                 (context.input_pipeline_id + 1) * batch]
                          for start in range(0, 64, GLOBAL_BATCH)])
    return tf.data.Dataset.from_tensor_slices((x[ids], y[ids])).batch(batch).repeat()

class Recording(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.body = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(1)])

    def call(self, inputs, training=False):
        if training:
            seen.extend(int(v) for v in inputs[:, 0].tolist())
        return self.body(inputs * 0.05)

tf.random.set_seed(0)
with strategy.scope():
    model = Recording()
    model.build((None, 5))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
    if mode == "creator":
        data = tf.keras.utils.experimental.DatasetCreator(dataset_fn)
    else:
        data = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH).repeat()
    history = model.fit(data, steps_per_epoch=4, epochs=2, verbose=0)
rank = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
with open(os.path.join(out, f"replica_{rank}.json"), "w") as f:
    json.dump({"contexts": contexts, "seen": seen, "loss": history.history["loss"]}, f)
if strategy.extended.should_checkpoint:
    np.savez(os.path.join(out, "weights.npz"), *model.get_weights())
'''


def _run_mirrored(tmp_path, mode, replicas):
    out = tmp_path / f"{mode}_{replicas}"
    out.mkdir()
    script = mp.write_script(tmp_path, MIRRORED, name="mirrored_creator.py")
    result = mp.run_python([script, str(out), str(replicas), mode], timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    weights = np.load(out / "weights.npz")
    reports = [mp.read_json(out / f"replica_{rank}.json") for rank in range(replicas)]
    return [weights[f"arr_{i}"] for i in range(len(weights.files))], reports


@pytest.mark.slow
def test_two_mirrored_replicas_each_build_their_pipeline_and_train_as_the_split_global_batches(tmp_path):
    weights, reports = _run_mirrored(tmp_path, "creator", 2)
    # each replica process called the function once, with its own pipeline id
    assert [r["contexts"] for r in reports] == [[[0, 2, 2]], [[1, 2, 2]]]
    # every sample trained twice (2 epochs of 4 global batches of 16 = all 64 rows per epoch)
    counts = np.bincount(np.array(reports[0]["seen"] + reports[1]["seen"]), minlength=64)
    assert counts.tolist() == [2] * 64
    assert reports[0]["loss"] == reports[1]["loss"]
    assert reports[0]["loss"][-1] < reports[0]["loss"][0]  # it trained
    # the shards were built to hold each replica's half of the global batches: the same training as
    # fit on the dataset of global batches, which the strategy splits itself
    reference, _ = _run_mirrored(tmp_path, "direct", 2)
    for ours, expected in zip(weights, reference):
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)
