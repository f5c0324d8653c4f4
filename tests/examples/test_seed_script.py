"""The seed-style TF script, verbatim but for the import, on CIFAR-10 files in the real format
(generated, learnable), and the two example programs run as a user runs them."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import torchstrategy as tf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def cifar_files(tmp_path, monkeypatch):
    from torchstrategy.keras.datasets import testing

    testing.write_cifar10(str(tmp_path), num_train=2048, num_test=512, learnable=True, seed=3)
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path))
    return tmp_path


def test_seed_style_script_trains_and_accuracy_rises(cifar_files):
    (train_images, train_labels), (test_images, test_labels) = tf.keras.datasets.cifar10.load_data()
    assert train_images.shape == (2048, 32, 32, 3) and train_labels.shape == (2048, 1)
    train_images, test_images = train_images / 255.0, test_images / 255.0

    strategy = tf.distribute.OneDeviceStrategy("cpu")
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
        train_ds = (tf.data.Dataset.from_tensor_slices((train_images, train_labels))
                    .shuffle(10000).batch(256).prefetch(tf.data.AUTOTUNE))
        test_ds = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(256)
        history = model.fit(train_ds, epochs=2, validation_data=test_ds, verbose=0)
    assert model.distribute_strategy is strategy
    accuracy = history.history["accuracy"]
    assert accuracy[1] > accuracy[0]
    assert history.history["val_accuracy"][-1] > 0.3  # chance is 0.1
    test_loss, test_acc = model.evaluate(test_ds, verbose=0)
    assert test_acc == pytest.approx(history.history["val_accuracy"][-1])


def _run_example(script, *args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    env["TORCHSTRATEGY_OFFLINE"] = "1"
    return subprocess.run([sys.executable, os.path.join(ROOT, "examples", script), *args], capture_output=True,
                          text=True, env=env, timeout=600, cwd=str(ROOT))


@pytest.mark.slow
def test_cifar10_example_with_synthetic_data_says_so_and_learns(tmp_path):
    result = _run_example("cifar10.py", "--epochs", "1", "--synthetic", "--train-samples", "1024", "--verbose", "2",
                          env_extra={"HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert "SYNTHETIC DATA" in result.stdout and "Total params: 122,570" in result.stdout
    accuracy = float(result.stdout.split("test accuracy: ")[1].split()[0])
    assert accuracy > 0.3


@pytest.mark.slow
def test_cifar10_example_without_data_gives_the_loaders_error_and_a_hint(tmp_path):
    result = _run_example("cifar10.py", "--epochs", "1", env_extra={"HOME": str(tmp_path)})
    assert result.returncode != 0
    assert "cifar-10-batches-py" in result.stderr and "--synthetic" in result.stderr


@pytest.mark.slow
def test_custom_loop_example_runs_and_loss_falls(tmp_path):
    result = _run_example("custom_loop.py", "--epochs", "2", "--synthetic", "--train-samples", "1024",
                          env_extra={"HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    losses = [float(line.split("Loss: ")[1].split(",")[0]) for line in result.stdout.splitlines()
              if line.startswith("Epoch")]
    assert len(losses) == 2 and losses[1] < losses[0]


@pytest.mark.slow
def test_cifar10_example_on_two_mirrored_cpu_replicas_from_plain_python(tmp_path):
    result = _run_example("cifar10.py", "--epochs", "1", "--synthetic", "--train-samples", "1024", "--verbose", "2",
                          "--strategy", "mirrored", "--replicas", "2", env_extra={"HOME": str(tmp_path),
                                                                                   "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr
    assert "replicas in sync: 2" in result.stdout
    assert result.stdout.count("Total params: 122,570") == 1  # the summary comes from the chief only
    assert result.stdout.count("SYNTHETIC DATA") == 1
    accuracy = float(result.stdout.split("test accuracy: ")[1].split()[0])
    assert accuracy > 0.3


@pytest.mark.slow
def test_cifar10_example_on_two_fsdp_cpu_replicas_from_plain_python(tmp_path):
    result = _run_example("cifar10.py", "--epochs", "1", "--synthetic", "--train-samples", "1024", "--verbose", "2",
                          "--strategy", "fsdp", "--replicas", "2", env_extra={"HOME": str(tmp_path),
                                                                               "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr
    assert "Strategy: FSDPStrategy, replicas in sync: 2" in result.stdout
    assert result.stdout.count("Total params: 122,570") == 1  # whole (not per-shard) counts, from the chief only
    accuracy = float(result.stdout.split("test accuracy: ")[1].split()[0])
    assert accuracy > 0.3
