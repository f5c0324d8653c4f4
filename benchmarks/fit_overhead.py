"""fit() against a hand-written PyTorch loop: the seed CIFAR-10 CNN, batch 256, one process,
same data and seed, interleaved rounds; plus how fast the tf.data-style pipeline feeds it.

    python benchmarks/fit_overhead.py [--steps 20] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402

import torchstrategy as tf  # noqa: E402


def seed_cnn():
    layers = tf.keras.layers
    return tf.keras.Sequential([
        layers.Conv2D(32, (3, 3), activation="relu", input_shape=(32, 32, 3)),
        layers.MaxPooling2D((2, 2)),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.MaxPooling2D((2, 2)),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.Flatten(),
        layers.Dense(64, activation="relu"),
        layers.Dense(10),
    ])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20, help="training steps per timed run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    batch, steps = args.batch_size, args.steps
    rng = np.random.default_rng(0)
    images = (rng.integers(0, 256, (batch * steps, 32, 32, 3), dtype=np.uint8) / 255.0).astype(np.float32)
    labels = rng.integers(0, 10, (batch * steps, 1)).astype(np.uint8)

    tf.random.set_seed(0)
    keras_model = seed_cnn()
    keras_model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                        metrics=["accuracy"])
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(10000).batch(batch).prefetch(
        tf.data.AUTOTUNE)

    tf.random.set_seed(0)
    torch_model = seed_cnn()  # the same module; trained by plain PyTorch code below
    optimizer = torch.optim.Adam(torch_model.parameters(), lr=1e-3, eps=1e-7)
    x_all, y_all = torch.from_numpy(images), torch.from_numpy(labels).long().squeeze(-1)

    def run_fit() -> float:
        return _results.timed(lambda: (keras_model.fit(dataset, epochs=1, verbose=0), batch * steps)[1])

    def run_torch() -> float:
        def loop() -> int:
            order = torch.randperm(len(x_all))
            total_loss, correct = torch.zeros(()), torch.zeros((), dtype=torch.long)
            for start in range(0, len(x_all), batch):
                index = order[start:start + batch]
                xb, yb = x_all[index], y_all[index]
                logits = torch_model(xb, training=True)
                loss = F.cross_entropy(logits, yb)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                # the running loss/accuracy any real loop keeps (fit() logs both too)
                total_loss += loss.detach() * len(yb)
                correct += (logits.detach().argmax(-1) == yb).sum()
            return len(x_all)

        return _results.timed(loop)

    def run_pipeline() -> float:
        return _results.timed(lambda: sum(1 for _ in dataset))

    run_fit(), run_torch()  # warm-up (allocator, first-call costs)
    rates = _results.interleave({"fit": run_fit, "torch": run_torch}, args.rounds)
    pipeline = [run_pipeline() for _ in range(3)]
    fit_rate, torch_rate = _results.median(rates["fit"]), _results.median(rates["torch"])
    pipeline_batches = _results.median(pipeline)
    consumed_batches = fit_rate / batch
    rows = [
        ["hand-written torch loop", f"{torch_rate:,.0f}", "1.000"],
        ["model.fit()", f"{fit_rate:,.0f}", f"{fit_rate / torch_rate:.3f}"],
    ]
    body = (f"Seed CIFAR-10 CNN (122,570 params), batch {batch}, {steps} steps per run, {args.rounds} interleaved "
            f"rounds (median), Adam; the torch loop uses torch.optim.Adam, F.cross_entropy and a randperm "
            f"index per batch, and keeps a running loss and accuracy as fit() does. Machine: {_results.machine()}.\n\n"
            + _results.table(["trainer", "samples/s", "ratio vs torch loop"], rows)
            + "\n\nPipeline `from_tensor_slices -> shuffle(10000) -> batch -> prefetch(AUTOTUNE)` alone: "
            f"{pipeline_batches:,.0f} batches/s; training consumes {consumed_batches:,.1f} batches/s, "
            f"so the pipeline delivers {pipeline_batches / consumed_batches:,.0f}x what training needs.\n\n"
            f"Per-round samples/s: fit {[round(r) for r in rates['fit']]}, torch {[round(r) for r in rates['torch']]}.")
    print(body)
    _results.write_section("fit_overhead.py: fit() vs a hand-written loop, one process", body)


if __name__ == "__main__":
    main()
