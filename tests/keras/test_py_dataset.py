"""keras.utils.PyDataset / Sequence fed to fit/evaluate/predict: batch order (shuffled per epoch with
fit's shuffle), on_epoch_begin/end, threads and worker processes, errors; and under a 2-replica
MirroredStrategy with 2 worker processes each, every row is trained exactly once per epoch."""
import numpy as np
import pytest

from tests import _multiprocess as mp
from torchstrategy import keras
from torchstrategy.keras.py_dataset import PyDatasetBatches


class Rows(keras.utils.PyDataset):
    """5 batches of 4 rows; x's first column is the row id."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.x = np.stack([np.arange(20.0), np.ones(20)], axis=1).astype("float32")
        self.y = (self.x[:, :1] * 0.1).astype("float32")
        self.events = []

    def __len__(self):
        return 5

    def __getitem__(self, index):
        return self.x[4 * index:4 * index + 4], self.y[4 * index:4 * index + 4]

    def on_epoch_begin(self):
        self.events.append("begin")

    def on_epoch_end(self):
        self.events.append("end")


def _ids(batches):
    return [int(row) for batch in batches for row in np.asarray(batch[0])[:, 0]]


@pytest.mark.parametrize("kwargs", [{}, {"workers": 3, "max_queue_size": 2}], ids=["inline", "threads"])
def test_batches_in_order_or_shuffled_each_epoch(kwargs):
    data = Rows(**kwargs)
    plain = PyDatasetBatches(data)
    assert _ids(plain) == list(range(20)) and data.events == ["begin", "end"]
    shuffled = PyDatasetBatches(data, shuffle=True, seed=4)
    first, second = _ids(shuffled), _ids(shuffled)
    assert sorted(first) == sorted(second) == list(range(20))
    assert first != second  # a new batch order each epoch...
    assert _ids(PyDatasetBatches(data, shuffle=True, seed=4)) == first  # ...fixed by the seed
    assert [first[i:i + 4] for i in range(0, 20, 4)] == [sorted(first[i:i + 4]) for i in range(0, 20, 4)]


@pytest.mark.slow
def test_worker_processes_give_the_same_batches():
    data = Rows(workers=2, use_multiprocessing=True)
    assert _ids(PyDatasetBatches(data)) == list(range(20))


def test_fit_evaluate_predict_and_epoch_hooks():
    data = Rows()
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.001), "mse")
    history = model.fit(data, epochs=3, verbose=0)
    assert len(history.history["loss"]) == 3
    assert data.events == ["begin", "end"] * 3
    loss = model.evaluate(data, verbose=0)
    assert np.isfinite(loss)
    assert model.predict(data, verbose=0).shape == (20, 1)
    assert keras.utils.Sequence is keras.utils.PyDataset


def test_bad_uses_are_explained():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="`y` is not supported"):
        model.fit(Rows(), np.zeros(20), verbose=0)

    class NoSuper(keras.utils.PyDataset):
        def __init__(self):
            pass

    with pytest.warns(UserWarning, match="super"):
        assert NoSuper().workers == 1

    class Bad(Rows):
        def __getitem__(self, index):
            return "not a batch"

    with pytest.raises(ValueError, match="must return a tuple or a dict"):
        model.fit(Bad(), verbose=0)


MIRRORED = r'''
import json, os, sys
import numpy as np, torch
import torchstrategy as tf

out, replicas = sys.argv[1], int(sys.argv[2])
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
N = 48
seen = []


class Rows(tf.keras.utils.PyDataset):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.x = np.stack([np.arange(N), np.ones(N)], axis=1).astype("float32")

    def __len__(self):
        return N // 8

    def __getitem__(self, index):
        rows = self.x[8 * index:8 * index + 8]
        return rows, rows[:, :1] * 0.01


class Seen(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)

    def call(self, inputs, training=False):
        if training:
            seen.extend(int(v) for v in inputs[:, 0].tolist())
        return self.dense(inputs)


class EpochMark(tf.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        seen.append(-1)


with strategy.scope():
    model = Seen()
    model.build((None, 2))
    model.compile(tf.keras.optimizers.SGD(0.001), "mse")
model.fit(Rows(workers=2, use_multiprocessing=True), epochs=2, verbose=0, callbacks=[EpochMark()])

# the new metrics reduce across the replicas (an int64 confusion matrix summed beside float states)
rng = np.random.default_rng(1)
x = rng.random((64, 3)).astype("float32")
y = (x @ np.array([[1.0, -1.0], [0.5, 2.0], [-1.0, 0.3]]) > 0.2).astype("float32")
with strategy.scope():
    scorer = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, activation="sigmoid")])
    scorer.set_weights([np.array([[3.0, 0.0], [0.0, 3.0], [-2.0, -2.0]], "float32"), np.zeros(2, "float32")])
    scorer.compile(loss="binary_crossentropy", metrics=[
        tf.keras.metrics.F1Score(average="macro", threshold=0.5), tf.keras.metrics.R2Score(),
        tf.keras.metrics.OneHotMeanIoU(num_classes=2, name="iou"),
        tf.keras.metrics.SensitivityAtSpecificity(0.5, name="sens")])
logs = scorer.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
rank = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
with open(os.path.join(out, f"report_{rank}.json"), "w") as f:
    json.dump({"seen": seen, "metrics": {k: float(v) for k, v in logs.items()}}, f)
'''


def _metrics_over_all_data():
    from torchstrategy.keras import metrics

    rng = np.random.default_rng(1)
    x = rng.random((64, 3)).astype("float32")
    y = (x @ np.array([[1.0, -1.0], [0.5, 2.0], [-1.0, 0.3]]) > 0.2).astype("float32")
    pred = 1 / (1 + np.exp(-(x @ np.array([[3.0, 0.0], [0.0, 3.0], [-2.0, -2.0]]))))
    expected = {}
    for name, metric in (("f1_score", metrics.F1Score(average="macro", threshold=0.5)),
                         ("r2_score", metrics.R2Score()), ("iou", metrics.OneHotMeanIoU(2)),
                         ("sens", metrics.SensitivityAtSpecificity(0.5))):
        for start in range(0, 64, 16):
            metric.update_state(y[start:start + 16], pred[start:start + 16])
        expected[name] = float(metric.result())
    return expected


@pytest.mark.slow
def test_mirrored_two_replicas_with_worker_processes_train_each_row_once_per_epoch(tmp_path):
    """Also: F1Score, R2Score (built on the first batch), OneHotMeanIoU and SensitivityAtSpecificity reduce across
    the two replicas to the values over all the data in one process."""
    reports = mp.run_replica_reports(tmp_path, MIRRORED, replicas=2)
    epochs = [[], []]
    for report in reports:
        marks = [i for i, v in enumerate(report["seen"]) if v == -1]
        assert len(marks) == 2
        epochs[0] += report["seen"][marks[0] + 1:marks[1]]
        epochs[1] += report["seen"][marks[1] + 1:]
    for ids in epochs:
        assert sorted(ids) == list(range(48))
    assert all(len(r["seen"]) == 2 + 48 for r in reports)  # each replica trained half the rows per epoch
    expected = _metrics_over_all_data()
    for report in reports:
        for name, value in expected.items():
            assert report["metrics"][name] == pytest.approx(value, rel=1e-5, abs=1e-6), name
