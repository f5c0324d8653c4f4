"""The TF parameter-server tutorial with `import torchstrategy as tf`: an in-process cluster of 2 workers
and 2 ps tasks (child processes on 127.0.0.1), a custom loop through a ClusterCoordinator, then `fit`.

    python examples/parameter_server.py --epochs 3
"""
from __future__ import annotations

import argparse
import socket

import numpy as np

import torchstrategy as tf


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def create_in_process_cluster(num_workers: int, num_ps: int) -> tf.distribute.cluster_resolver.SimpleClusterResolver:
    ports = free_ports(num_workers + num_ps)
    cluster = tf.train.ClusterSpec({"worker": [f"127.0.0.1:{p}" for p in ports[:num_workers]],
                                    "ps": [f"127.0.0.1:{p}" for p in ports[num_workers:]]})
    for job, count in (("worker", num_workers), ("ps", num_ps)):
        for index in range(count):
            tf.distribute.Server(cluster, job_name=job, task_index=index, protocol="grpc")
    return tf.distribute.cluster_resolver.SimpleClusterResolver(cluster, rpc_layer="grpc")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps-per-epoch", type=int, default=20)
    args = parser.parse_args()

    strategy = tf.distribute.ParameterServerStrategy(
        create_in_process_cluster(num_workers=2, num_ps=2),
        variable_partitioner=tf.distribute.experimental.partitioners.MinSizePartitioner(
            min_shard_bytes=256 << 10, max_shards=2))
    rng = np.random.default_rng(0)
    features = rng.integers(0, 1000, size=(2048, 3)).astype("int64")
    labels = (features.sum(axis=1) % 2).astype("float32")[:, None]

    def dataset_fn(input_context):
        batch = input_context.get_per_replica_batch_size(64)
        return tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(2048).repeat().batch(batch)

    with strategy.scope():
        inputs = tf.keras.Input((3,), dtype="int64")
        embedded = tf.keras.layers.Flatten()(tf.keras.layers.Embedding(1000, 128)(inputs))  # split over the ps
        outputs = tf.keras.layers.Dense(1, activation="sigmoid")(tf.keras.layers.Dense(32, activation="relu")(embedded))
        model = tf.keras.Model(inputs, outputs)
        optimizer = tf.keras.optimizers.RMSprop(learning_rate=0.01)
        accuracy = tf.keras.metrics.BinaryAccuracy()

    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)

    @tf.function
    def per_worker_dataset_fn():
        return strategy.distribute_datasets_from_function(dataset_fn)

    per_worker_iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))

    @tf.function
    def step_fn(iterator):
        def replica_fn(x, y):
            with tf.GradientTape() as tape:
                pred = model(x, training=True)
                per_example = tf.keras.losses.BinaryCrossentropy(reduction=tf.keras.losses.Reduction.NONE)(y, pred)
                loss = tf.nn.compute_average_loss(per_example)
            gradients = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))
            accuracy.update_state(y, pred)
            return loss

        x, y = next(iterator)
        return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(replica_fn, args=(x, y)), axis=None)

    for epoch in range(args.epochs):
        accuracy.reset_states()
        for _ in range(args.steps_per_epoch):
            coordinator.schedule(step_fn, args=(per_worker_iterator,))
        coordinator.join()
        print(f"Finished epoch {epoch}, accuracy is {float(accuracy.result()):.4f}.")
    loss = coordinator.schedule(step_fn, args=(per_worker_iterator,))
    print(f"Final loss is {float(loss.fetch()):.4f}")
    print("embedding shards:", [(s.device, s.start, s.stop) for s in strategy.variable_shards(model.layers[1].embeddings)])

    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy"],
                  steps_per_execution=5)
    model.fit(tf.keras.utils.experimental.DatasetCreator(dataset_fn), epochs=args.epochs,
              steps_per_epoch=args.steps_per_epoch, verbose=2)


if __name__ == "__main__":
    main()
