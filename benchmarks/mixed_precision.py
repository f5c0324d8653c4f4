"""fit() of the seed CIFAR-10 CNN under float32, mixed_bfloat16 and mixed_float16 on this machine's CPU:
interleaved rounds in one process, samples/s and ratios to float32, and the CPU flags that decide it.

    python benchmarks/mixed_precision.py [--steps 2] [--rounds 3] [--batch-size 256]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402
from fit_overhead import seed_cnn  # noqa: E402  (the same model every benchmark trains)

import torchstrategy as tf  # noqa: E402

POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")
FLAGS = ("amx_bf16", "amx_fp16", "avx512_bf16", "avx512_fp16", "avx512f", "avx2")


def cpu_flags() -> str:
    """Which of the instruction sets that low-precision kernels use `lscpu` reports."""
    model, flags = _results.lscpu()
    return f"{model}; " + ", ".join(f"{flag} {'yes' if flag in flags else 'no'}" for flag in FLAGS)


def conv_backward_share(model: tf.keras.Model, images, labels, batch: int) -> float:
    """Fraction of one training step's CPU time spent in convolution backward (profiled)."""
    from torch.profiler import profile

    with profile() as prof:
        model.fit(images[:batch], labels[:batch], batch_size=batch, epochs=1, verbose=0)
    events = prof.key_averages()
    total = sum(event.self_cpu_time_total for event in events)
    conv = sum(event.self_cpu_time_total for event in events if event.key == "aten::convolution_backward")
    return conv / total if total else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2, help="training steps per timed run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    batch, steps = args.batch_size, args.steps
    images, labels = _results.synthetic_cifar(batch * steps)
    flags = cpu_flags()
    print("CPU:", flags, flush=True)

    models = {}
    for policy in POLICIES:  # each model takes its policy when created, as in Keras
        tf.keras.mixed_precision.set_global_policy(policy)
        tf.random.set_seed(0)
        model = seed_cnn()
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        models[policy] = model
    tf.keras.mixed_precision.set_global_policy(None)
    losses: dict = {}

    def runner(policy: str):
        def run() -> float:
            def fit() -> int:
                history = models[policy].fit(images, labels, batch_size=batch, epochs=1, shuffle=False, verbose=0)
                losses.setdefault(policy, []).append(history.history["loss"][-1])
                return batch * steps
            return _results.timed(fit)
        return run

    contestants = {policy: runner(policy) for policy in POLICIES}
    for run in contestants.values():
        run()  # warm-up (first-call costs, oneDNN primitive creation)
    rates = _results.interleave(contestants, args.rounds)
    conv_share = {policy: conv_backward_share(models[policy], images, labels, batch) for policy in POLICIES}
    median = {name: _results.median(values) for name, values in rates.items()}
    paired = {name: _results.median([a / b for a, b in zip(rates[name], rates["float32"])]) for name in rates}
    rows = [[policy, f"{median[policy]:,.1f}", f"{paired[policy]:.2f}", f"{100 * conv_share[policy]:.0f}%",
             type(models[policy].optimizer).__name__] for policy in POLICIES]
    body = (f"Seed CIFAR-10 CNN (122,570 params), fit() with 'adam', batch {batch}, {steps} steps per run, "
            f"{args.rounds} interleaved rounds after one warm-up run each; samples/s are medians, ratios the "
            f"median of per-round ratios to float32. Weights stay float32 in every run; under mixed_float16 "
            f"compile() wraps Adam in a LossScaleOptimizer, as Keras does. CPU: {flags}. "
            f"Machine: {_results.machine()}.\n\n"
            + _results.table(["policy", "samples/s", "ratio vs float32", "conv backward share of a step",
                              "optimizer"], rows)
            + "\n\nLast-epoch loss of each run (the models train on as the rounds go; the three should agree): "
            + "; ".join(f"{policy} {[round(v, 4) for v in losses[policy]]}" for policy in POLICIES)
            + "\n\nPer-round samples/s: " + "; ".join(f"{name} {[round(r, 1) for r in rates[name]]}" for name in rates))
    print(body)
    _results.write_section("mixed_precision.py: float32 vs mixed_bfloat16 vs mixed_float16 fit(), CPU", body)


if __name__ == "__main__":
    main()
