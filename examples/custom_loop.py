"""The TF custom-training-loop pattern (GradientTape + strategy.run + compute_average_loss)
with `import torchstrategy as tf`: the same CIFAR-10 CNN, trained step by step.

    python examples/custom_loop.py --epochs 2 --synthetic
"""
from __future__ import annotations

import argparse
import os
import sys

import torchstrategy as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cifar10 import load  # noqa: E402  (same data loading and --synthetic handling)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=256, help="global batch size")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--fallback-synthetic", action="store_true")
    parser.add_argument("--train-samples", type=int, default=None)
    parser.add_argument("--device", default="/cpu:0")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> list[float]:
    args = parse_args(argv)
    tf.random.set_seed(args.seed)
    ((train_images, train_labels), (test_images, test_labels)), _ = load(args)
    if args.train_samples:
        train_images, train_labels = train_images[:args.train_samples], train_labels[:args.train_samples]
    train_images, test_images = train_images / 255.0, test_images / 255.0

    strategy = tf.distribute.OneDeviceStrategy(args.device)
    global_batch = args.batch_size
    train_ds = strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((train_images, train_labels)).shuffle(10000).batch(global_batch))
    test_ds = strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(global_batch))

    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.layers.Conv2D(32, 3, activation="relu", input_shape=(32, 32, 3)),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Conv2D(64, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Conv2D(64, 3, activation="relu"),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(10),
        ])
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE)
        optimizer = tf.keras.optimizers.Adam()
        train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
        test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")

    def compute_loss(labels, predictions):
        per_example_loss = loss_object(labels, predictions)
        return tf.nn.compute_average_loss(per_example_loss, global_batch_size=global_batch)

    def train_step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = compute_loss(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_accuracy.update_state(labels, predictions)
        return loss

    def test_step(inputs):
        images, labels = inputs
        test_accuracy.update_state(labels, model(images, training=False))

    @tf.function
    def distributed_train_step(dataset_inputs):
        per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    losses = []
    for epoch in range(args.epochs):
        total_loss, num_batches = 0.0, 0
        for batch in train_ds:
            total_loss += float(distributed_train_step(batch))
            num_batches += 1
        for batch in test_ds:
            strategy.run(test_step, args=(batch,))
        losses.append(total_loss / num_batches)
        print(f"Epoch {epoch + 1}, Loss: {losses[-1]:.4f}, Accuracy: {float(train_accuracy.result()) * 100:.2f}, "
              f"Test Accuracy: {float(test_accuracy.result()) * 100:.2f}", flush=True)
        train_accuracy.reset_state()
        test_accuracy.reset_state()
    return losses


if __name__ == "__main__":
    main()
