"""The classic TensorFlow CIFAR-10 CNN tutorial, with `import tensorflow as tf` changed to
`import torchstrategy as tf`: Sequential CNN, compile, a tf.data pipeline, fit, evaluate.

    python examples/cifar10.py --epochs 10                 # real CIFAR-10 (searched / downloaded)
    python examples/cifar10.py --epochs 2 --synthetic      # learnable synthetic CIFAR-shaped data
    python examples/cifar10.py --strategy mirrored --replicas 2   # 2 replicas (GPUs, else CPU processes)
    python examples/cifar10.py --strategy fsdp --replicas 2       # the same, weights and Adam state sharded
    python examples/cifar10.py --dtype-policy mixed_bfloat16      # bfloat16 compute, float32 weights
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import torchstrategy as tf


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=256, help="global batch size")
    parser.add_argument("--data-dir", default=None, help="folder holding cifar-10-batches-py/ "
                        "(default: $TORCHSTRATEGY_DATA, ~/.keras/datasets, ./data)")
    parser.add_argument("--synthetic", action="store_true", help="train on generated, learnable CIFAR-shaped data")
    parser.add_argument("--fallback-synthetic", action="store_true",
                        help="use synthetic data only if real CIFAR-10 cannot be found or downloaded")
    parser.add_argument("--train-samples", type=int, default=None, help="use only the first N training images")
    parser.add_argument("--strategy", choices=["default", "one_device", "mirrored", "multi_worker", "fsdp"],
                        default="one_device")
    parser.add_argument("--device", default="/cpu:0", help="device for --strategy one_device, e.g. /gpu:0")
    parser.add_argument("--replicas", type=int, default=None,
                        help="replicas for --strategy mirrored/fsdp: that many GPUs, or CPU processes where there is no "
                             "GPU (default: every GPU, else 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype-policy", default="float32",
                        help="Keras mixed-precision policy, e.g. mixed_bfloat16 (CPUs with AMX/AVX512-BF16) or "
                             "mixed_float16 (GPUs)")
    parser.add_argument("--verbose", default="auto")
    return parser.parse_args(argv)


def synthetic_cifar10(num_train: int = 10000, num_test: int = 2000):
    """Writes generated CIFAR-10 files in the real format and loads them through load_data()."""
    from torchstrategy.keras.datasets import testing

    # load_data() reads the files into memory, so the folder goes as soon as it returns.
    with tempfile.TemporaryDirectory(prefix="synthetic-cifar10-") as folder:
        testing.write_cifar10(folder, num_train=num_train, num_test=num_test, learnable=True, seed=0)
        previous = os.environ.get("TORCHSTRATEGY_DATA")
        os.environ["TORCHSTRATEGY_DATA"] = folder
        try:
            return tf.keras.datasets.cifar10.load_data()
        finally:
            if previous is None:
                del os.environ["TORCHSTRATEGY_DATA"]
            else:
                os.environ["TORCHSTRATEGY_DATA"] = previous


def make_strategy(args: argparse.Namespace):
    if args.strategy == "one_device":
        return tf.distribute.OneDeviceStrategy(args.device)
    if args.strategy == "mirrored":
        if args.replicas is None:
            return tf.distribute.MirroredStrategy()
        kind = "gpu" if tf.config.list_physical_devices("GPU") else "cpu"
        return tf.distribute.MirroredStrategy([f"/{kind}:{i}" for i in range(args.replicas)])
    if args.strategy == "multi_worker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    if args.strategy == "fsdp":  # under torchrun (or TF_CONFIG) without --replicas: every process of the job
        if args.replicas is None:
            return tf.distribute.experimental.FSDPStrategy()
        kind = "gpu" if tf.config.list_physical_devices("GPU") else "cpu"
        return tf.distribute.experimental.FSDPStrategy([f"/{kind}:{i}" for i in range(args.replicas)])
    return tf.distribute.get_strategy()


def load(args: argparse.Namespace, chief: bool = True):
    if args.data_dir:
        os.environ["TORCHSTRATEGY_DATA"] = args.data_dir
    if not args.synthetic:
        try:
            return tf.keras.datasets.cifar10.load_data(), False
        except FileNotFoundError as error:
            if not args.fallback_synthetic:
                raise SystemExit(f"{error}\n\nOr run with --synthetic to train on generated data.")
            if chief:
                print(f"CIFAR-10 is not available here:\n{error}\n", file=sys.stderr)
    banner = "#" * 78
    if chief:
        print(f"{banner}\n# SYNTHETIC DATA: generated CIFAR-shaped images (class = mean colour + noise),\n"
              f"# NOT the real CIFAR-10. Accuracy figures below say nothing about CIFAR-10.\n{banner}", flush=True)
    return synthetic_cifar10(), True


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    strategy = make_strategy(args)  # first: a multi-replica strategy starts the other replicas here
    chief = strategy.extended.should_checkpoint
    tf.random.set_seed(args.seed)
    ((train_images, train_labels), (test_images, test_labels)), synthetic = load(args, chief)
    if args.train_samples:
        train_images, train_labels = train_images[:args.train_samples], train_labels[:args.train_samples]
    # Normalize pixel values to be between 0 and 1
    train_images, test_images = train_images / 255.0, test_images / 255.0

    tf.keras.mixed_precision.set_global_policy(args.dtype_policy)
    if chief:
        print(f"Strategy: {type(strategy).__name__}, replicas in sync: {strategy.num_replicas_in_sync}, "
              f"dtype policy: {args.dtype_policy}")

    with strategy.scope():
        model = tf.keras.models.Sequential([
            tf.keras.layers.Conv2D(32, (3, 3), activation="relu", input_shape=(32, 32, 3)),
            tf.keras.layers.MaxPooling2D((2, 2)),
            tf.keras.layers.Conv2D(64, (3, 3), activation="relu"),
            tf.keras.layers.MaxPooling2D((2, 2)),
            tf.keras.layers.Conv2D(64, (3, 3), activation="relu"),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(10),
        ])
        model.compile(optimizer="adam",
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
    model.summary()

    train_ds = (tf.data.Dataset.from_tensor_slices((train_images, train_labels))
                .shuffle(10000).batch(args.batch_size).prefetch(tf.data.AUTOTUNE))
    test_ds = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(args.batch_size)

    timer = TrainingTimer()
    start = time.perf_counter()
    history = model.fit(train_ds, epochs=args.epochs, validation_data=test_ds, callbacks=[timer],
                        verbose=int(args.verbose) if args.verbose.isdigit() else args.verbose)
    seconds = time.perf_counter() - start
    test_loss, test_acc = model.evaluate(test_ds, verbose=0)
    samples = len(train_images) * args.epochs
    if chief:
        print(f"{'Synthetic-data' if synthetic else 'CIFAR-10'} test accuracy: {test_acc:.4f} (loss {test_loss:.4f}); "
              f"{samples / seconds:.0f} samples/s over the whole fit(), "
              f"{timer.samples_per_second(len(train_images)):.0f} training samples/s "
              f"(training steps only{', first epoch left out' if args.epochs > 1 else ''})")
    return history.history


class TrainingTimer(tf.keras.callbacks.Callback):
    """Times each epoch's training steps (validation excluded), as a benchmark times fit()."""

    def __init__(self) -> None:
        super().__init__()
        self.epoch_seconds: list[float] = []

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self._last = time.perf_counter()  # the epoch's last batch leaves its end time here

    def on_epoch_end(self, epoch, logs=None):
        self.epoch_seconds.append(self._last - self._start)

    def samples_per_second(self, samples_per_epoch: int) -> float:
        timed = self.epoch_seconds[1:] or self.epoch_seconds  # the first epoch warms up
        return samples_per_epoch * len(timed) / sum(timed)


if __name__ == "__main__":
    main()
