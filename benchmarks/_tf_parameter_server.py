"""TensorFlow's side of benchmarks/parameter_server.py: the tasks of a TF 2.21 ParameterServerStrategy job (run
with the TF venv's python; imports no torch), speaking the same stdin/stdout protocol as torchstrategy's side.

    python _tf_parameter_server.py --role task|chief --steps N --data DIR   (started by parameter_server.py)

The chief runs TF's tutorial step: a Keras model and optimizer made in `strategy.scope()`, a per-worker dataset from
`distribute_datasets_from_function`, and a `tf.function` whose `strategy.run` computes the loss under a
GradientTape and applies the gradients; closures are `coordinator.schedule(step_fn, args=(iterator,))`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

BATCH = 64  # as parameter_server.py


def _session_config():
    import tensorflow as tf

    # one thread per op, as torchstrategy's tasks compute on one; 2 inter-op threads (this machine's default):
    # with 1, TF 2.21's parameter-server job hangs before its first closure ends
    return tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=2)


def serve_task() -> None:
    """A worker or ps task named by TF_CONFIG: a tf.distribute.Server that serves until it is killed."""
    import tensorflow as tf

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type, task_index=resolver.task_id,
                                  protocol="grpc", config=_session_config(), start=True)
    server.join()


def _commands():
    for line in sys.stdin:
        if line.strip() == "quit":
            return
        yield int(line.split()[1])


def chief(steps: int, data: str) -> None:
    """Per command line 'run MODE' (0/1: training closures, 2: empty closures), schedules `steps` closures,
    joins, and prints 'RESULT {json}'."""
    import collections

    import numpy as np
    import tensorflow as tf
    from vs_tensorflow import build_model

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(2)
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    arrays = np.load(os.path.join(data, "data.npz"))
    images, labels = arrays["images"], arrays["labels"]
    saved = np.load(os.path.join(data, "weights_seed.npz"))
    with strategy.scope():
        model = build_model(tf.keras, "seed")
        model.set_weights([saved[f"w{index}"] for index in range(len(saved.files))])
        optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def dataset_fn(input_context):
        batch = input_context.get_per_replica_batch_size(BATCH)
        return tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(len(images)).repeat().batch(batch)

    @tf.function
    def per_worker_dataset_fn():
        return strategy.distribute_datasets_from_function(dataset_fn)

    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))

    @tf.function
    def step_fn(iterator):
        def replica_fn(x, y):
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(loss_object(y, model(x, training=True)))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        x, y = next(iterator)
        strategy.run(replica_fn, args=(x, y))
        return tf.distribute.coordinator.experimental_get_current_worker_index()

    @tf.function
    def empty_fn():  # a closure's round trip alone: no variable read, no update
        return tf.distribute.coordinator.experimental_get_current_worker_index()

    for _ in range(2 * len(resolver.cluster_spec().job_tasks("worker"))):  # warm-up: tracing, first steps
        coordinator.schedule(step_fn, args=(iterator,))
        coordinator.schedule(empty_fn)
    coordinator.join()
    print("READY", flush=True)
    for mode in _commands():
        start = time.perf_counter()
        if mode == 2:
            results = [coordinator.schedule(empty_fn) for _ in range(steps)]
        else:
            results = [coordinator.schedule(step_fn, args=(iterator,)) for _ in range(steps)]
        coordinator.join()
        seconds = time.perf_counter() - start
        by_worker = collections.Counter(f"worker:{int(r.fetch())}" for r in results)
        print("RESULT " + json.dumps({"seconds": seconds, "steps": steps,
                                      "samples": steps * (1 if mode == 2 else BATCH),
                                      "by_task": dict(by_worker)}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--role", choices=("task", "chief"), required=True)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--data", default="")
    args = parser.parse_args()
    if args.role == "task":
        serve_task()
    else:
        chief(args.steps, args.data)


if __name__ == "__main__":
    main()
