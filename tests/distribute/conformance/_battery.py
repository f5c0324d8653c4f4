"""The conformance battery: every behaviour the suite checks, run under ONE strategy in one launch, through the
public API only; `python _battery.py OUT EXPRESSION` has each process write OUT/results/<tag>.json."""
from __future__ import annotations

import json
import os
import socket
import sys
import time
import traceback

import numpy as np

import torchstrategy as tf

ROWS, FEATURES, HIDDEN, CLASSES, BATCH = 64, 6, 8, 3, 16  # BATCH is the global batch
STEPS = ROWS // BATCH  # steps per epoch
EPOCHS = 3
INTERRUPTED_AT = (1, 1)  # (epoch, batch) where the BackupAndRestore run raises
INTERRUPTION = "interrupted on purpose"

_servers: list = []  # parameter-server tasks started by ps_cluster (kept alive with the coordinator)


# ---- shared model and data helpers (the distribute tests' copies of "a small model on fixed data") --------------

def data() -> tuple:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(ROWS, FEATURES)).astype("float32")
    y = rng.integers(0, CLASSES, ROWS).astype("int64")
    return x, y


def initial_weights(seed: int = 1) -> list:
    """Fixed starting weights (Keras order: kernel, bias per Dense), the same under every strategy."""
    rng = np.random.default_rng(seed)
    shapes = [(FEATURES, HIDDEN), (HIDDEN,), (HIDDEN, CLASSES), (CLASSES,)]
    return [(rng.normal(size=shape) * 0.5).astype("float32") for shape in shapes]


def build(strategy, optimizer=None, seed: int = 1):
    """A compiled 6 -> 8 (relu) -> 3 classifier with `initial_weights(seed)`, created in `strategy.scope()`."""
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((FEATURES,)), tf.keras.layers.Dense(HIDDEN, activation="relu"),
                                     tf.keras.layers.Dense(CLASSES)])
        model.set_weights(initial_weights(seed))
        model.compile(optimizer=optimizer() if optimizer else tf.keras.optimizers.Adam(0.01),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def images(rows: int = 96) -> tuple:
    """`rows` random 8x8x3 images (float32) and integer labels of 10 classes, from seed 0."""
    rng = np.random.default_rng(0)
    return rng.standard_normal((rows, 8, 8, 3)).astype("float32"), rng.integers(0, 10, rows)


def cnn(strategy, optimizer="sgd", seed: int = 1, steps_per_execution: int = 1, metrics=("accuracy",)):
    """The small image classifier of the strategy tests (Conv2D, MaxPooling2D, Flatten, Dense(10) on 8x8x3),
    seeded by set_random_seed(seed), compiled in `strategy.scope()` with a from-logits crossentropy."""
    tf.keras.utils.set_random_seed(seed)
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.Input((8, 8, 3)), tf.keras.layers.Conv2D(4, 3, activation="relu"), tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
        model.compile(optimizer=optimizer, loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=list(metrics), steps_per_execution=steps_per_execution)
    return model


def weights(model) -> list:
    return [w.tolist() for w in model.get_weights()]


def is_parameter_server(strategy) -> bool:
    return isinstance(strategy, tf.distribute.ParameterServerStrategy)


def dataset():
    x, y = data()
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)


def training_input(strategy) -> tuple:
    """What fit takes under `strategy`, and its extra arguments. ParameterServerStrategy wants TF's form there:
    a DatasetCreator of an endless dataset and steps_per_epoch (one pass over the rows per epoch, in order)."""
    if is_parameter_server(strategy):
        x, y = data()

        def dataset_fn(context):
            per_replica = context.get_per_replica_batch_size(BATCH)
            return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(per_replica)

        return tf.keras.utils.experimental.DatasetCreator(dataset_fn), {"steps_per_epoch": STEPS}
    return dataset(), {}


def evaluation_input(strategy) -> tuple:
    data_, extra = training_input(strategy)
    return data_, ({"steps": STEPS} if extra else {})


def validation_arguments(strategy) -> dict:
    data_, extra = training_input(strategy)
    return {"validation_data": data_, **({"validation_steps": STEPS} if extra else {})}


def start_cluster(workers: int = 1, ps: int = 1, ports=None, partitioner=None) -> tuple:
    """TF's in-process cluster (create_in_process_cluster): each task a tf.distribute.Server (a child process) on
    127.0.0.1, on `ports` (worker ports first) or free ones; returns the ParameterServerStrategy over them and the
    servers. The one copy of this helper: tests/distribute/test_parameter_server.py's scripts import it."""
    if ports is None:
        sockets = [socket.socket() for _ in range(workers + ps)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        ports = [sock.getsockname()[1] for sock in sockets]
        for sock in sockets:
            sock.close()
    cluster = tf.train.ClusterSpec({"worker": [f"127.0.0.1:{p}" for p in ports[:workers]],
                                    "ps": [f"127.0.0.1:{p}" for p in ports[workers:workers + ps]]})
    servers = [tf.distribute.Server(cluster, job_name=job, task_index=index, protocol="grpc")
               for job, count in (("worker", workers), ("ps", ps)) for index in range(count)]
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(cluster, rpc_layer="grpc")
    return tf.distribute.ParameterServerStrategy(resolver, variable_partitioner=partitioner), servers


def ps_cluster(workers: int = 1, ps: int = 1):
    """start_cluster's strategy; its servers stay alive with this process (the conformance table's expression)."""
    strategy, servers = start_cluster(workers, ps)
    _servers.extend(servers)
    return strategy


def tag(strategy) -> str:
    """'chief' in the process that should write files, else a name only this process uses."""
    return "chief" if strategy.extended.should_checkpoint else f"worker-{os.getpid()}"


# ---- the behaviours ---------------------------------------------------------------------------------------------

def fit(strategy, out, state):
    model = build(strategy)
    data_, extra = training_input(strategy)
    history = model.fit(data_, epochs=EPOCHS, verbose=0, **extra)
    state["fitted"] = model
    return {"history": history.history, "weights": weights(model), "iterations": int(model.optimizer.iterations)}


def evaluate(strategy, out, state):
    data_, extra = evaluation_input(strategy)
    return {"evaluate": state["fitted"].evaluate(data_, verbose=0, return_dict=True, **extra)}


def predict(strategy, out, state):
    x, _ = data()
    return {"predict": state["fitted"].predict(x, batch_size=BATCH, verbose=0).tolist()}


def custom_loop(strategy, out, state):
    """The tutorials' loop: GradientTape in strategy.run, compute_average_loss, apply_gradients, reduce(SUM).
    Under ParameterServerStrategy it is TF's form there: the step is scheduled through a ClusterCoordinator."""
    model = build(strategy)
    with strategy.scope():
        optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def replica_step(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_object(labels, model(features, training=True)),
                                              global_batch_size=BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    losses = []
    if is_parameter_server(strategy):
        coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
        iterator = iter(coordinator.create_per_worker_dataset(dataset().repeat()))

        def step_fn(iterator):
            batch = next(iterator)
            return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(replica_step, args=(batch,)), axis=None)

        scheduled = [coordinator.schedule(step_fn, args=(iterator,)) for _ in range(EPOCHS * STEPS)]
        coordinator.join()
        losses = [float(result.fetch()) for result in scheduled]
    else:
        distributed = strategy.experimental_distribute_dataset(dataset())
        for _ in range(EPOCHS):
            for batch in distributed:
                per_replica = strategy.run(replica_step, args=(batch,))
                losses.append(float(strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)))
    return {"losses": losses, "weights": weights(model), "iterations": int(optimizer.iterations)}


def checkpoint(strategy, out, state):
    """tf.train.Checkpoint of the fitted model (weights, Adam slots, iterations) restored into a fresh model whose
    optimizer was built first (TF's way to restore slots before the first step)."""
    model = state["fitted"]
    path = tf.train.Checkpoint(model=model).save(os.path.join(out, "checkpoint", "ckpt"))
    saved = weights(model)
    fresh = build(strategy, seed=2)
    with strategy.scope():
        fresh.optimizer.build(fresh.trainable_variables)
    tf.train.Checkpoint(model=fresh).restore(path).assert_consumed()
    state["restored"] = fresh
    return {"path": path, "saved": saved, "restored": weights(fresh),
            "iterations": [int(model.optimizer.iterations), int(fresh.optimizer.iterations)]}


def checkpoint_continued(strategy, out, state):
    """The saved model and the one restored from its checkpoint train one more epoch: they agree only if Adam's
    slots and step count came back too."""
    data_, extra = training_input(strategy)
    state["fitted"].fit(data_, epochs=1, verbose=0, **extra)
    state["restored"].fit(data_, epochs=1, verbose=0, **extra)
    return {"continued": weights(state["fitted"]), "continued_restored": weights(state["restored"])}


class _Interrupt(tf.keras.callbacks.Callback):
    """TF's BackupAndRestore example: a callback that raises mid-training (every replica at the same step)."""

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.epoch, batch) == INTERRUPTED_AT:
            raise RuntimeError(INTERRUPTION)


def backup_and_restore(strategy, out, state):
    directory = os.path.join(out, "backup")
    data_, extra = training_input(strategy)
    model = build(strategy)
    interrupted = None
    try:
        model.fit(data_, epochs=EPOCHS, verbose=0, callbacks=[tf.keras.callbacks.BackupAndRestore(directory),
                                                             _Interrupt()], **extra)
    except RuntimeError as error:
        interrupted = str(error)
    resumed = build(strategy)  # a new model, as after a restart: the backup brings back epoch 1's state
    history = resumed.fit(data_, epochs=EPOCHS, verbose=0, callbacks=[tf.keras.callbacks.BackupAndRestore(directory)],
                          **extra)
    return {"interrupted": interrupted, "history": history.history, "weights": weights(resumed),
            "iterations": int(resumed.optimizer.iterations)}


def mixed_precision(strategy, out, state):
    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = build(strategy, optimizer=lambda: tf.keras.optimizers.SGD(0.1))
        data_, extra = training_input(strategy)
        history = model.fit(data_, epochs=2, verbose=0, **extra)
        layer = model.layers[0]
        return {"history": history.history, "weights": weights(model), "compute_dtype": str(layer.compute_dtype),
                "variable_dtype": str(layer.variable_dtype),
                "weight_dtypes": sorted({str(w.dtype) for w in model.get_weights()})}
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")


class _ChiefStops(tf.keras.callbacks.Callback):
    """Sets stop_training on the chief only, after epoch 2: every replica must stop there with it."""

    def __init__(self, strategy):
        super().__init__()
        self.strategy = strategy

    def on_epoch_end(self, epoch, logs=None):
        if epoch == 1 and self.strategy.extended.should_checkpoint:
            self.model.stop_training = True


def callbacks(strategy, out, state):
    files = os.path.join(out, "files")
    os.makedirs(files, exist_ok=True)
    name = tag(strategy)  # each process names its own files: the test checks that only the chief's exist
    data_, extra = training_input(strategy)
    model = build(strategy)
    history = model.fit(data_, epochs=5, verbose=0, **extra, **validation_arguments(strategy), callbacks=[
        tf.keras.callbacks.CSVLogger(os.path.join(files, f"{name}.csv")),
        tf.keras.callbacks.ModelCheckpoint(os.path.join(files, name + "-{epoch}.weights.h5"), save_weights_only=True),
        _ChiefStops(strategy)])
    early = build(strategy)
    stopper = tf.keras.callbacks.EarlyStopping(monitor="loss", min_delta=100.0, patience=1, restore_best_weights=True)
    early_history = early.fit(data_, epochs=5, verbose=0, callbacks=[stopper], **extra)
    return {"history": history.history, "weights": weights(model), "early_history": early_history.history,
            "early_weights": weights(early), "stopped_epoch": stopper.stopped_epoch}


class _KerasMetric(tf.keras.metrics.Metric):
    """A Keras 3 style metric of add_variable states, set with assign_add and assign: rows and label sum seen
    ('sum'), argmax hits, batches per replica ('mean': the same on every replica of a data-parallel job) and the
    replica id + 7 ('only_first_replica': 7). `report` names the state (or ratio) that result() gives."""

    def __init__(self, report, **kwargs):
        super().__init__(name=report, **kwargs)
        self.report = report
        self.rows = self.add_variable(shape=(), initializer="zeros", name="rows")
        self.labels = self.add_variable(shape=(), initializer="zeros", name="labels")
        self.hits = self.add_variable(shape=(), initializer="zeros", name="hits")
        self.batches = self.add_variable(shape=(), initializer="zeros", name="batches", aggregation="mean")
        self.first = self.add_variable(shape=(), initializer="zeros", name="first", aggregation="only_first_replica")

    def update_state(self, y_true, y_pred, sample_weight=None):
        labels = tf.keras.ops.cast(tf.keras.ops.reshape(y_true, (-1,)), "float32")
        self.rows.assign_add(tf.keras.ops.cast(tf.keras.ops.size(labels), "float32"))
        self.labels.assign(self.labels + tf.keras.ops.sum(labels))
        guesses = tf.keras.ops.cast(tf.keras.ops.argmax(y_pred, axis=-1), "float32")
        self.hits.assign_add(tf.keras.ops.sum(tf.keras.ops.cast(tf.keras.ops.equal(guesses, labels), "float32")))
        self.batches.assign_add(1.0)
        replica = tf.distribute.get_replica_context()
        self.first.assign(7.0 + (replica.replica_id_in_sync_group if replica is not None else 0))

    def result(self):
        if self.report == "hit_rate":
            return self.hits / self.rows
        return getattr(self, self.report)


def keras_metrics(strategy, out, state):
    """fit and evaluate with Keras 3 style metrics (add_variable states of every aggregation) next to accuracy."""
    model = build(strategy)
    with strategy.scope():
        model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"] + [_KerasMetric(report) for report in
                                              ("rows", "labels", "hit_rate", "batches", "first")])
    data_, extra = training_input(strategy)
    history = model.fit(data_, epochs=EPOCHS, verbose=0, **extra)
    data_, extra = evaluation_input(strategy)
    return {"history": history.history, "evaluate": model.evaluate(data_, verbose=0, return_dict=True, **extra)}


class _Counting(tf.keras.Model):
    """A classifier of features 1.. that appends the ids of the rows it trains on (feature 0) to a file of the
    process running it (the replica's process, or a parameter-server worker's)."""

    def __init__(self, folder: str):
        super().__init__()
        self.folder = folder
        self.head = tf.keras.layers.Dense(CLASSES)

    def call(self, inputs, training=False):
        if training:
            with open(os.path.join(self.folder, f"{os.getpid()}.txt"), "a", encoding="utf-8") as handle:
                handle.write(" ".join(str(int(row)) for row in np.asarray(inputs[:, 0])) + "\n")
        return self.head(inputs[:, 1:])


def samples_seen(strategy, out, state):
    """fit over shuffled rows whose feature 0 is the row id: the test counts the ids every process trained on."""
    folder = os.path.join(out, "seen")
    os.makedirs(folder, exist_ok=True)
    x, y = data()
    x[:, 0] = np.arange(ROWS)
    with strategy.scope():
        model = _Counting(folder)
        model.build((None, FEATURES))
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    if is_parameter_server(strategy):
        def dataset_fn(context):
            return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(context.get_per_replica_batch_size(BATCH))

        model.fit(tf.keras.utils.experimental.DatasetCreator(dataset_fn), epochs=EPOCHS, steps_per_epoch=STEPS,
                  verbose=0)
    else:
        model.fit(tf.data.Dataset.from_tensor_slices((x, y)).shuffle(ROWS, seed=3).batch(BATCH), epochs=EPOCHS,
                  verbose=0)
    return {"file": os.path.join(folder, f"{os.getpid()}.txt")}


def outside_scope(strategy, out, state):
    """A model built and compiled outside strategy.scope(), fit on NumPy arrays: refused (with the message) on a
    process of a multi-process job, where each process would train its own copy; else it trains as in TF."""
    model = tf.keras.Sequential([tf.keras.Input((FEATURES,)), tf.keras.layers.Dense(CLASSES)])
    model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = data()
    try:
        model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
    except ValueError as error:
        return {"refused": str(error)}
    return {"refused": None, "iterations": int(model.optimizer.iterations)}


def distributed_api(strategy, out, state):
    """TF's lower-level calls of a custom loop: ReplicaContext.merge_call inside strategy.run, extended.reduce_to /
    batch_reduce_to / update, experimental_distribute_values_from_function (ValueContext) and
    DistributedDataset.reduce. Under ParameterServerStrategy the replica function runs in scheduled closures."""
    SUM = tf.distribute.ReduceOp.SUM

    def local_sum(batch):
        return tf.reduce_sum(batch[0])

    def replica_fn(batch):
        context = tf.distribute.get_replica_context()
        return context.merge_call(lambda s, value: s.reduce(SUM, value, axis=None), args=(local_sum(batch),))

    facts = {"worker_devices": [str(d) for d in strategy.extended.worker_devices],
             "should_checkpoint": bool(strategy.extended.should_checkpoint)}
    if is_parameter_server(strategy):
        coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
        iterator = iter(coordinator.create_per_worker_dataset(dataset()))

        def step_fn(iterator):
            return strategy.run(replica_fn, args=(next(iterator),))

        scheduled = [coordinator.schedule(step_fn, args=(iterator,)) for _ in range(STEPS)]
        indices = [coordinator.schedule(tf.distribute.coordinator.experimental_get_current_worker_index)
                   for _ in range(STEPS)]
        coordinator.join()
        return {**facts, "merged": sorted(float(r.fetch()) for r in scheduled),
                "worker_indices": sorted({int(r.fetch()) for r in indices})}
    merged, reduced, batch_reduced = [], [], []
    distributed = strategy.experimental_distribute_dataset(dataset())
    for batch in distributed:
        step_merged, local = strategy.run(replica_fn, args=(batch,)), strategy.run(local_sum, args=(batch,))
        merged.append(float(strategy.experimental_local_results(step_merged)[0]))
        reduced.append(float(strategy.extended.reduce_to(SUM, local, destinations="/cpu:0")))
        batch_reduced.append([float(v) for v in strategy.extended.batch_reduce_to(
            SUM, [(local, "/cpu:0"), (local, "/cpu:0")])])
    total = strategy.experimental_distribute_dataset(dataset()).reduce(
        0.0, lambda sum_, batch: sum_ + float(strategy.reduce(SUM, strategy.run(local_sum, args=(batch,)), axis=None)))
    ids = strategy.experimental_distribute_values_from_function(
        lambda context: tf.constant(float(context.replica_id_in_sync_group) + 100 * context.num_replicas_in_sync))
    id_sum = float(strategy.reduce(SUM, strategy.run(lambda v: v * 1.0, args=(ids,)), axis=None))
    with strategy.scope():
        variable = tf.Variable(1.0)
    strategy.extended.update(variable, lambda v, delta: v.assign_add(delta), args=(2.0,))
    return {**facts, "merged": merged, "reduced": reduced, "batch_reduced": batch_reduced, "total": total,
            "id_sum": id_sum, "updated": float(variable.numpy())}


def uneven_split(strategy, out, state):
    """`strategy.extended.allow_uneven_split` (torchstrategy's switch; off by default): fit with a global batch of
    BATCH - 1 rows, refused when it does not divide over the replicas, then again once the switch is on. Parameter
    servers take per-worker datasets and fit on arrays only through a DatasetCreator: the switch alone there."""
    facts = {"default": strategy.extended.allow_uneven_split}
    strategy.extended.allow_uneven_split = True
    facts["after_set"] = strategy.extended.allow_uneven_split
    strategy.extended.allow_uneven_split = False
    try:
        strategy.extended.allow_uneven_split = "yes"
    except TypeError as error:
        facts["bad_value"] = str(error)
    if is_parameter_server(strategy):
        return facts
    x, y = data()
    try:
        build(strategy).fit(x, y, batch_size=BATCH - 1, epochs=1, verbose=0, shuffle=False)
        facts["refused"] = None
    except ValueError as error:
        facts["refused"] = str(error)
    strategy.extended.allow_uneven_split = True
    try:
        model = build(strategy)
        history = model.fit(x, y, batch_size=BATCH - 1, epochs=1, verbose=0, shuffle=False)
    finally:
        strategy.extended.allow_uneven_split = False
    return {**facts, "loss": history.history["loss"], "weights": weights(model),
            "iterations": int(model.optimizer.iterations)}


BEHAVIOURS = [fit, evaluate, predict, custom_loop, checkpoint, checkpoint_continued, backup_and_restore,
              mixed_precision, callbacks, samples_seen, keras_metrics, outside_scope, distributed_api, uneven_split]


def run(strategy, out: str) -> dict:
    """Runs every behaviour under `strategy`; one that raises is recorded with its traceback (the others go on)."""
    os.makedirs(out, exist_ok=True)
    state, results = {}, {}
    for behaviour in BEHAVIOURS:
        start = time.monotonic()
        try:
            results[behaviour.__name__] = behaviour(strategy, out, state)
        except Exception:  # noqa: BLE001 - reported to the test that checks this behaviour
            results[behaviour.__name__] = {"error": traceback.format_exc()}
        results[behaviour.__name__]["seconds"] = round(time.monotonic() - start, 3)
    results["process"] = {"tag": tag(strategy), "pid": os.getpid(), "strategy": type(strategy).__name__,
                          "replicas": strategy.num_replicas_in_sync, "threads": _intra_op_threads()}
    return results


def _intra_op_threads() -> int:
    import torch

    return torch.get_num_threads()


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return float(value)


def write(results: dict, out: str) -> str:
    folder = os.path.join(out, "results")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, results["process"]["tag"] + ".json")
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(results, handle, default=_json_default)
    os.replace(path + ".tmp", path)
    return path


if __name__ == "__main__":
    out_dir, expression = sys.argv[1], sys.argv[2]
    made = eval(expression, globals())  # noqa: S307 - the suite's own table of strategy constructors
    write(run(made, out_dir), out_dir)
    print("battery done", tag(made), flush=True)
