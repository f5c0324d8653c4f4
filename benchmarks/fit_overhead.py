"""fit() against a hand-written PyTorch loop: the seed CIFAR-10 CNN, batch 256, one process,
same data and seed, interleaved rounds; plus how fast the tf.data-style pipeline feeds it.

    python benchmarks/fit_overhead.py [--steps 20] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

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
    parser.add_argument("--steps", type=int, default=10, help="training steps per timed run")
    parser.add_argument("--rounds", type=int, default=18)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    batch, steps = args.batch_size, args.steps
    images, labels = _results.synthetic_cifar(batch * steps)

    tf.random.set_seed(0)
    keras_model = seed_cnn()
    keras_model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                        metrics=["accuracy"])
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(10000).batch(batch).prefetch(
        tf.data.AUTOTUNE)

    def make_torch_loop(source: str):
        tf.random.set_seed(0)
        model = seed_cnn()  # the same module class and initial weights; trained by plain PyTorch code
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)

        def batches():
            if source == "dataset":  # the very pipeline fit() gets
                for xb, yb in dataset:
                    yield xb, yb.long().squeeze(-1)
            else:  # the fastest feed there is: index the in-memory tensors directly
                order = torch.randperm(len(x_all))
                for start in range(0, len(x_all), batch):
                    index = order[start:start + batch]
                    yield x_all[index], y_all[index]

        def loop() -> int:
            total_loss, correct, seen = torch.zeros(()), torch.zeros((), dtype=torch.long), 0
            for xb, yb in batches():
                logits = model(xb, training=True)
                loss = F.cross_entropy(logits, yb)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                # the running loss/accuracy any real loop keeps (fit() logs both too)
                total_loss += loss.detach() * len(yb)
                correct += (logits.detach().argmax(-1) == yb).sum()
                seen += len(yb)
            return seen

        return lambda: _results.timed(loop)

    x_all, y_all = torch.from_numpy(images), torch.from_numpy(labels).long().squeeze(-1)

    def run_fit() -> float:
        return _results.timed(lambda: (keras_model.fit(dataset, epochs=1, verbose=0), batch * steps)[1])

    def run_pipeline() -> float:
        return _results.timed(lambda: sum(1 for _ in dataset))

    def per_batch_ab(passes: int = 4) -> float:
        """Noise-robust view: each batch goes to fit()'s own train step and to a plain torch step in
        turn (alternating who goes first), so both see the same machine state; returns time ratio."""
        from torchstrategy.keras.runtime import set_up

        tf.random.set_seed(0)
        twin, reference = seed_cnn(), seed_cnn()
        twin.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                     metrics=["accuracy"])
        runtime = set_up(twin, torch.zeros(1, 32, 32, 3))
        optimizer = torch.optim.Adam(reference.parameters(), lr=1e-3, eps=1e-7)

        def keras_step(b):
            runtime.strategy.run(twin.train_step, args=(b,))

        def torch_step(b):
            loss = F.cross_entropy(reference(b[0], training=True), b[1].long().squeeze(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

        totals = {keras_step: 0.0, torch_step: 0.0}
        for index in range(passes + 1):
            for number, b in enumerate(dataset):
                for step in (keras_step, torch_step) if number % 2 else (torch_step, keras_step):
                    start = time.perf_counter()
                    step(b)
                    if index:  # pass 0 warms up
                        totals[step] += time.perf_counter() - start
        return totals[torch_step] / totals[keras_step]

    contestants = {"fit": run_fit, "torch_dataset": make_torch_loop("dataset"), "torch_index": make_torch_loop("index")}
    for run in contestants.values():
        run()  # warm-up (allocator, first-call costs)
    rates = _results.interleave(contestants, args.rounds)
    pipeline_batches = _results.median([run_pipeline() for _ in range(3)])
    step_ratio = per_batch_ab()
    median = {name: _results.median(values) for name, values in rates.items()}
    # each round's runs are neighbours in time: their ratio cancels the machine's drift
    paired = {name: _results.median([a / b for a, b in zip(rates[name], rates["torch_dataset"])]) for name in rates}
    consumed_batches = median["fit"] / batch
    labels_ = {"torch_dataset": "hand-written torch loop over the same dataset (reference)",
               "fit": "model.fit()",
               "torch_index": "hand-written torch loop, in-memory randperm indexing, no pipeline"}
    rows = [[labels_[name], f"{median[name]:,.0f}", f"{paired[name]:.3f}"]
            for name in ("torch_dataset", "fit", "torch_index")]
    body = (f"Seed CIFAR-10 CNN (122,570 params), batch {batch}, {steps} steps per run, {args.rounds} interleaved "
            f"rounds; samples/s are medians, ratios the median of per-round ratios to the reference. fit() gets "
            f"`from_tensor_slices -> shuffle(10000) -> batch -> prefetch(AUTOTUNE)` and 'adam' (Keras Adam); "
            f"the torch loops use torch.optim.Adam and F.cross_entropy and keep a running loss and accuracy. "
            f"Machine: {_results.machine()}.\n\n"
            + _results.table(["trainer", "samples/s", "ratio vs reference"], rows)
            + "\n\nPipeline alone: "
            f"{pipeline_batches:,.0f} batches/s; training consumes {consumed_batches:,.1f} batches/s, "
            f"so the pipeline delivers {pipeline_batches / consumed_batches:,.0f}x what training needs.\n\n"
            f"Same batches fed alternately to fit()'s train step and to the torch step ({4 * steps} batches "
            f"each): fit's step runs at {step_ratio:.3f}x the torch step's speed. Whole-run ratios move by a few "
            f"percent from round to round on this machine (see below), so read the table with that spread.\n\n"
            "Per-round samples/s: " + "; ".join(f"{name} {[round(r) for r in rates[name]]}" for name in rates))
    print(body)
    _results.write_section("fit_overhead.py: fit() vs a hand-written loop, one process", body)


if __name__ == "__main__":
    main()
