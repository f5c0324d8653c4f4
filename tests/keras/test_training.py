"""fit / evaluate / predict and the *_on_batch calls, each checked against a hand-written
torch computation over the same data and weights."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import torchstrategy as tf

layers = tf.keras.layers


def small_cnn():
    return tf.keras.Sequential([
        layers.Conv2D(8, (3, 3), activation="relu", input_shape=(8, 8, 3)),
        layers.MaxPooling2D((2, 2)),
        layers.Flatten(),
        layers.Dense(16, activation="relu"),
        layers.Dense(4),
    ])


def toy_images(n=96, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, size=(n, 1)).astype(np.uint8)
    images = rng.random((n, 8, 8, 3)).astype(np.float32) * 0.2
    images[..., 0] += labels.reshape(-1, 1, 1) * 0.25  # learnable: class shifts the red channel
    return images, labels


def test_fit_gives_the_same_weights_as_a_hand_written_torch_loop():
    x, y = toy_images()
    model = small_cnn()
    twin = small_cnn()
    twin.set_weights(model.get_weights())
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-2),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)
    model.fit(dataset, epochs=3, verbose=0)

    optimizer = tf.keras.optimizers.Adam(1e-2)
    optimizer.build(twin.trainable_variables)
    for _ in range(3):
        for start in range(0, len(x), 32):
            xb = torch.from_numpy(x[start:start + 32])
            yb = torch.from_numpy(y[start:start + 32]).long().squeeze(-1)
            loss = F.cross_entropy(twin(xb, training=True), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    for ours, reference in zip(model.get_weights(), twin.get_weights()):
        np.testing.assert_allclose(ours, reference, rtol=1e-6, atol=1e-6)


def test_history_keys_and_values_match_an_independent_computation():
    x, y = toy_images(64)
    model = small_cnn()
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.0),  # frozen weights: logs are exact means
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, y, batch_size=16, epochs=2, validation_split=0.25, shuffle=True, verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert all(len(v) == 2 for v in history.history.values()) and history.epoch == [0, 1]
    with torch.no_grad():
        logits = model(torch.from_numpy(x))
    labels = torch.from_numpy(y).long().squeeze(-1)
    train, val = slice(0, 48), slice(48, 64)  # Keras takes the LAST 25% for validation
    assert history.history["loss"][0] == pytest.approx(float(F.cross_entropy(logits[train], labels[train])), rel=1e-5)
    assert history.history["val_loss"][1] == pytest.approx(float(F.cross_entropy(logits[val], labels[val])), rel=1e-5)
    expected_acc = float((logits[val].argmax(-1) == labels[val]).float().mean())
    assert history.history["val_accuracy"][0] == pytest.approx(expected_acc)


def test_accuracy_rises_when_training_on_learnable_data():
    x, y = toy_images(256)
    model = small_cnn()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=6, verbose=0)
    assert history.history["accuracy"][-1] > history.history["accuracy"][0]
    assert history.history["accuracy"][-1] > 0.6


def test_evaluate_and_predict_match_direct_computation():
    x, y = toy_images(50)
    model = small_cnn()
    model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    with torch.no_grad():
        logits = model(torch.from_numpy(x))
    labels = torch.from_numpy(y).long().squeeze(-1)
    loss, acc = model.evaluate(x, y, batch_size=16, verbose=0)  # uneven last batch of 2
    assert loss == pytest.approx(float(F.cross_entropy(logits, labels)), rel=1e-5)
    assert acc == pytest.approx(float((logits.argmax(-1) == labels).float().mean()))
    assert model.evaluate(x, y, verbose=0, return_dict=True).keys() == {"loss", "accuracy"}
    predictions = model.predict(x, batch_size=7, verbose=0)
    assert isinstance(predictions, np.ndarray) and predictions.shape == (50, 4)
    np.testing.assert_allclose(predictions, logits.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict_on_batch(x[:5]), logits[:5].numpy(), rtol=1e-5, atol=1e-6)


def test_train_on_batch_and_test_on_batch():
    x, y = toy_images(16)
    model = small_cnn()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    labels = torch.from_numpy(y).long().squeeze(-1)
    with torch.no_grad():
        before = float(F.cross_entropy(model(torch.from_numpy(x)), labels))
    loss, _ = model.train_on_batch(x, y)
    assert loss == pytest.approx(before, rel=1e-5)
    after = model.test_on_batch(x, y, return_dict=True)
    with torch.no_grad():
        expected_after = float(F.cross_entropy(model(torch.from_numpy(x)), labels))
    assert after["loss"] == pytest.approx(expected_after, rel=1e-5) and after["loss"] < before


def test_on_batch_logs_are_that_batchs_alone_as_in_keras3():
    # Keras 3.15 (TF 2.21), SGD(0), Dense(1, kernel ones, no bias), mse + mae: x=[1, 1], y=0 gives
    # {'loss': 4.0, 'mae': 2.0}; then x=[0, 0], y=0 gives {'loss': 0.0, 'mae': 0.0} (no running mean), for
    # train_on_batch and test_on_batch alike. Keras 3 has no `reset_metrics` keyword.
    model = tf.keras.Sequential([tf.keras.Input((2,)),
                                 tf.keras.layers.Dense(1, kernel_initializer="ones", use_bias=False)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss="mse", metrics=["mae"])
    ones, zeros, target = np.ones((1, 2), np.float32), np.zeros((1, 2), np.float32), np.zeros((1, 1), np.float32)
    for on_batch in (model.train_on_batch, model.test_on_batch):
        assert on_batch(ones, target, return_dict=True) == pytest.approx({"loss": 4.0, "mae": 2.0})
        assert on_batch(zeros, target, return_dict=True) == pytest.approx({"loss": 0.0, "mae": 0.0})
    with pytest.raises(TypeError, match="reset_metrics"):
        model.train_on_batch(ones, target, reset_metrics=False)


def test_fit_accepts_a_torch_dataloader_and_a_torch_dataset():
    x, y = toy_images(64)
    tensors = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y).long())
    for source, kwargs in ((torch.utils.data.DataLoader(tensors, batch_size=16), {}), (tensors, {"batch_size": 16})):
        model = small_cnn()
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(source, epochs=2, verbose=0, **kwargs)
        assert len(history.history["loss"]) == 2 and history.history["loss"][1] < history.history["loss"][0]


def test_steps_per_epoch_with_an_infinite_dataset():
    x, y = toy_images(32)
    model = small_cnn()
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    batches = []
    counter = tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: batches.append(batch))
    model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat(), epochs=2, steps_per_epoch=3,
              callbacks=[counter], verbose=0)
    assert batches == [0, 1, 2, 0, 1, 2]
    with pytest.raises(ValueError, match="infinite dataset"):
        model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat(), epochs=1, verbose=0)


def test_fit_before_compile_is_a_clear_error():
    with pytest.raises(RuntimeError, match="must compile your model before training"):
        small_cnn().fit(*toy_images(8), verbose=0)


def test_labels_of_the_wrong_shape_for_the_loss_are_refused_before_training():
    x, y = toy_images(16)
    model = small_cnn()
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = model.get_weights()
    with pytest.raises(ValueError, match="CategoricalCrossentropy"):
        model.fit(x, tf.keras.utils.to_categorical(y, 4), epochs=1, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))


def test_unknown_optimizer_loss_and_metric_names_list_the_valid_ones():
    model = small_cnn()
    with pytest.raises(ValueError, match="adam"):
        model.compile(optimizer="adamm", loss="mse")
    with pytest.raises(ValueError, match="mean_squared_error"):
        model.compile(optimizer="adam", loss="mean_squared_eror")
    with pytest.raises(ValueError, match="accuracy"):
        model.compile(optimizer="adam", loss="mse", metrics=["acuracy"])


def test_terminate_on_nan_stops_training():
    x, y = toy_images(64)
    x[:] = np.nan
    model = small_cnn()
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    seen = []
    history = model.fit(x, y, batch_size=16, epochs=5, verbose=0, callbacks=[
        tf.keras.callbacks.TerminateOnNaN(),
        tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: seen.append(b))])
    assert seen == [0] and model.stop_training and len(history.history["loss"]) == 1


def test_early_stopping_with_restore_best_weights_inside_fit():
    x, y = toy_images(64)
    model = small_cnn()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.5), loss=tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True))
    snapshots = []
    keep = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: snapshots.append(model.get_weights()))
    stopper = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=1, restore_best_weights=True,
                                               min_delta=10.0)  # no epoch improves by 10: stops after 2
    history = model.fit(x, y, epochs=10, verbose=0, callbacks=[keep, stopper])
    assert len(history.history["loss"]) == 2
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), snapshots[0]))


def test_progress_bar_prints_keras_style_epoch_lines(capsys):
    x, y = toy_images(64)
    model = small_cnn()
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x, y, batch_size=16, epochs=2, verbose=2, validation_data=(x, y))
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out
    assert "loss:" in out and "accuracy:" in out and "val_loss:" in out
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    assert capsys.readouterr().out == ""


def test_class_weight_scales_each_sample_loss_like_sample_weight():
    x, y = toy_images(32)
    class_weight = {0: 1.0, 1: 3.0, 2: 0.5, 3: 2.0}
    per_sample = np.array([class_weight[int(c)] for c in y[:, 0]], dtype=np.float32)
    results = []
    for kwargs in ({"class_weight": class_weight}, {"sample_weight": per_sample}):
        tf.random.set_seed(3)
        model = small_cnn()
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0, **kwargs)
        results.append((history.history["loss"], model.get_weights()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="class_weight must be a non-empty dict"):
        model.fit(x, y, class_weight=[1.0, 2.0], verbose=0)


def test_multi_input_multi_output_fit_logs_per_output_losses_like_keras():
    a = tf.keras.Input(shape=(3,), name="a")
    b = tf.keras.Input(shape=(2,), name="b")
    hidden = layers.Concatenate()([layers.Dense(4, activation="relu")(a), b])
    model = tf.keras.Model([a, b], [layers.Dense(1, name="reg")(hidden), layers.Dense(3, name="cls")(hidden)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.0),
                  loss={"reg": "mse", "cls": tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
                  metrics={"cls": ["accuracy"]}, loss_weights={"reg": 0.5, "cls": 1.0})
    rng = np.random.default_rng(0)
    xa, xb = rng.random((40, 3)).astype(np.float32), rng.random((40, 2)).astype(np.float32)
    y_reg, y_cls = rng.random((40, 1)).astype(np.float32), rng.integers(0, 3, (40,))
    history = model.fit([xa, xb], [y_reg, y_cls], batch_size=8, epochs=1, verbose=0)
    assert set(history.history) == {"loss", "reg_loss", "cls_loss", "cls_accuracy"}
    with torch.no_grad():
        reg, cls = model([torch.from_numpy(xa), torch.from_numpy(xb)])
    reg_loss = float(((reg - torch.from_numpy(y_reg)) ** 2).mean())
    cls_loss = float(F.cross_entropy(cls, torch.from_numpy(y_cls)))
    assert history.history["reg_loss"][0] == pytest.approx(reg_loss, rel=1e-5)
    assert history.history["cls_loss"][0] == pytest.approx(cls_loss, rel=1e-5)
    assert history.history["loss"][0] == pytest.approx(0.5 * reg_loss + cls_loss, rel=1e-5)
    by_name = model.evaluate({"a": xa, "b": xb}, (y_reg, y_cls), verbose=0, return_dict=True)
    assert by_name["cls_loss"] == pytest.approx(cls_loss, rel=1e-5)
    predictions = model.predict([xa, xb], verbose=0)
    assert [p.shape for p in predictions] == [(40, 1), (40, 3)]


def test_validation_split_needs_arrays():
    x, y = toy_images(16)
    model = small_cnn()
    model.compile(optimizer="adam", loss="mse")
    with pytest.raises(ValueError, match="validation_split is only supported for NumPy arrays"):
        model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(4), validation_split=0.2, verbose=0)


def test_verbose_2_epoch_line_times_the_whole_epoch(capsys):
    import re
    import time

    model = tf.keras.Sequential([layers.Lambda(lambda t: (time.sleep(0.01), t)[1], input_shape=(2,)), layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.zeros((64, 2), np.float32), np.zeros((64, 1), np.float32), batch_size=16, epochs=1, verbose=2)
    line = [row for row in capsys.readouterr().out.splitlines() if row.startswith("4/4")][0]
    per_step = re.search(r"(\d+)ms/step", line)
    assert per_step and int(per_step.group(1)) >= 10, line  # each of the 4 steps sleeps 10 ms



REPEATED_CALLS = r'''
import collections, json, os, sys
import numpy as np
import torch.distributed as dist
import torchstrategy as tf

out, replicas = sys.argv[1], int(sys.argv[2])
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
rank = strategy.process_rank
rng = np.random.default_rng(0)
x = rng.random((32, 4)).astype("float32")
y = (rng.random((32, 3)) > 0.5).astype("float32")
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="sigmoid")])
    # a multi-label AUC makes its state at its first update: the processes compare state shapes once
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="binary_crossentropy",
                  metrics=["mae", tf.keras.metrics.AUC(multi_label=True, name="auc")])
report = {"initial": [w.tolist() for w in model.get_weights()]}
calls = collections.Counter()
for name in ("all_gather", "all_gather_single", "all_reduce", "broadcast", "all_gather_object",
             "broadcast_object_list"):
    def counted(*args, _original=getattr(dist, name), _name=name, **kwargs):
        calls[_name] += 1
        return _original(*args, **kwargs)
    setattr(dist, name, counted)
from torchstrategy.distribute.parts import local_exchange
def exchanged(self, local, _original=local_exchange.SharedMemoryExchange.gather):
    calls["shared memory"] += 1  # a small gather between the processes of this machine
    return _original(self, local)
local_exchange.SharedMemoryExchange.gather = exchanged
for call in range(2):
    for name, fn in (("fit", lambda: model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0).history),
                     ("evaluate", lambda: model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)),
                     ("predict", lambda: model.predict(x, batch_size=8, verbose=0).tolist())):
        calls.clear()
        report[f"{name} {call}"] = {"value": fn(), "calls": dict(calls)}


class StopAfterTwo(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if epoch == 1:
            self.model.stop_training = True


# a callback on the chief only: every process still agrees to stop with it
calls.clear()
history = model.fit(x, y, batch_size=8, epochs=5, shuffle=False, verbose=0,
                    callbacks=[StopAfterTwo()] if rank == 0 else [])
report["stopped"] = {"loss": history.history["loss"], "calls": dict(calls)}
report["final"] = [w.tolist() for w in model.get_weights()]
with open(os.path.join(out, f"report_{rank}.json"), "w") as f:
    json.dump(report, f)
'''


STEPS = 4  # 32 rows in global batches of 8


@pytest.mark.slow
def test_repeated_calls_on_two_replicas_take_few_collectives_and_match_one_process(tmp_path):
    from tests import _multiprocess as mp

    reports = mp.run_replica_reports(tmp_path, REPEATED_CALLS, replicas=2)
    assert reports[0] == reports[1]  # every replica logs, evaluates and predicts the same
    report = reports[0]
    rng = np.random.default_rng(0)
    x = rng.random((32, 4)).astype("float32")
    y = (rng.random((32, 3)) > 0.5).astype("float32")
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="sigmoid")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="binary_crossentropy",
                  metrics=["mae", tf.keras.metrics.AUC(multi_label=True, name="auc")])
    model.set_weights([np.array(w, dtype="float32") for w in report["initial"]])
    for call in range(2):
        history = model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0).history
        for key, values in history.items():
            np.testing.assert_allclose(report[f"fit {call}"]["value"][key], values, rtol=1e-5, err_msg=key)
        logs = model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
        assert set(report[f"evaluate {call}"]["value"]) == set(logs) == {"loss", "mae", "auc"}
        for key, value in logs.items():
            assert report[f"evaluate {call}"]["value"][key] == pytest.approx(value, rel=1e-5), key
        np.testing.assert_allclose(report[f"predict {call}"]["value"], model.predict(x, batch_size=8, verbose=0),
                                   atol=1e-6)
    class StopAfterTwo(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                self.model.stop_training = True

    history = model.fit(x, y, batch_size=8, epochs=5, shuffle=False, verbose=0, callbacks=[StopAfterTwo()]).history
    np.testing.assert_allclose(report["stopped"]["loss"], history["loss"], rtol=1e-5)
    assert len(history["loss"]) == 2
    # a process with a callback of its own: stop_training is agreed in a collective of its own each epoch (small
    # sums and agreements travel as small gathers, through shared memory between processes of one machine, as
    # every small collective of a call does)
    # (plus, in every step, the gradient bucket's average: DDP's communication hook takes the exchange too)
    assert report["stopped"]["calls"] == {"shared memory": 5 + 2 * STEPS}
    for got, want in zip(report["final"], model.get_weights()):
        np.testing.assert_allclose(np.array(got), want, atol=1e-6)
    # per call: one small gather of the arrays' fingerprints and the pipeline's state; one gathered sum of every
    # metric state, which in fit also agrees on stop_training (DDP's gradient buckets go through its own reducer).
    # The metric state shapes are compared once, at the first reduction (the AUC's state exists by then).
    assert report["fit 0"]["calls"] == {"shared memory": 3 + STEPS}
    assert report["fit 1"]["calls"] == {"shared memory": 2 + STEPS}
    for call in range(2):
        assert report[f"evaluate {call}"]["calls"] == {"shared memory": 2}
        assert report[f"predict {call}"]["calls"] == {"shared memory": 3}  # the arrays, the row counts, rows


# ----- fit's step without logs: when no callback reads a step's logs, the metrics are not read per step --
class _CountingMean(tf.keras.metrics.Mean):
    """The mean of |y_pred - y_true| that counts how often its result is read."""

    def __init__(self, name="counted", **kwargs):
        super().__init__(name=name, **kwargs)
        self.reads = 0

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(torch.abs(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        self.reads += 1
        return super().result()


def _regression(steps=6, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((16 * steps, 5)).astype(np.float32)
    return x, (x @ rng.normal(size=(5, 2))).astype(np.float32)


def _counting_model(cls=tf.keras.Sequential):
    tf.random.set_seed(0)
    model = cls([layers.Dense(2, input_shape=(5,))])
    metric = _CountingMean()
    model.compile(optimizer="adam", loss="mse", metrics=["mae", metric])
    return model, metric


def test_fit_reads_the_metrics_per_step_only_when_a_callback_takes_the_step_logs():
    x, y = _regression()
    quiet, quiet_metric = _counting_model()
    quiet_history = quiet.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    assert quiet_metric.reads <= 2 * 2  # the epochs' logs only, not 6 steps x 2 epochs

    batch_logs = []
    logged, logged_metric = _counting_model()
    logged_history = logged.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0, callbacks=[
        tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: batch_logs.append(dict(logs)))])
    assert logged_metric.reads >= 12 and len(batch_logs) == 12
    assert set(batch_logs[-1]) == {"loss", "mae", "counted"}
    # the same numbers either way: the step's updates are the same, only the per-step reads are skipped
    assert quiet_history.history == logged_history.history
    for ours, theirs in zip(quiet.get_weights(), logged.get_weights()):
        np.testing.assert_array_equal(ours, theirs)
    assert batch_logs[-1]["mae"] == pytest.approx(logged_history.history["mae"][-1])


def test_fit_runs_an_overridden_compute_metrics_every_step_without_batch_callbacks():
    seen = []

    class Custom(tf.keras.Sequential):
        def compute_metrics(self, x, y, y_pred, sample_weight=None):
            seen.append(int(y.shape[0]))
            return super().compute_metrics(x, y, y_pred, sample_weight)

    x, y = _regression()
    model, metric = _counting_model(Custom)
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    assert seen == [16] * 6 and metric.reads >= 6  # Keras's contract: the override runs, its results are read


@pytest.mark.parametrize("per_execution", [1, 3])
def test_executions_take_exactly_the_steps_asked_for_from_an_endless_iterator(per_execution):
    import itertools

    from torchstrategy.keras import training

    source = itertools.count()
    groups = list(training._executions(source, 7, per_execution))
    assert [item for group in groups for item in group] == list(range(7))
    assert all(len(group) == per_execution for group in groups[:-1])
    assert next(source) == 7  # nothing read past the last step
    assert list(training._executions(iter(range(4)), None, per_execution)) == \
        [list(range(4))[i:i + per_execution] for i in range(0, 4, per_execution)]
    assert list(training._executions(iter(range(4)), 0, per_execution)) == []
