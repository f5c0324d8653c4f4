"""What BackupAndRestore(save_freq=100) costs fit(): the seed CIFAR-10 CNN trained with and without
the callback in the same process, interleaved rounds, samples/s and their ratio.

    python benchmarks/backup_overhead.py [--steps 200] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402
from fit_overhead import seed_cnn  # noqa: E402

import torchstrategy as tf  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200, help="training steps per timed run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    batch, steps = args.batch_size, args.steps
    images, labels = _results.synthetic_cifar(batch * steps)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(10000).batch(batch)
    folder = tempfile.mkdtemp(prefix="backup-bench-")

    def make():
        tf.random.set_seed(0)
        model = seed_cnn()
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        return model

    plain_model, backup_model = make(), make()
    saves = {"count": 0}

    class CountSaves(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch_index, logs=None):
            saves["count"] += int(self.training_state.progress.global_step % 100 == 0)

    def run_plain() -> float:
        return _results.timed(lambda: (plain_model.fit(dataset, epochs=1, verbose=0), batch * steps)[1])

    def run_backup() -> float:
        callback = tf.keras.callbacks.BackupAndRestore(folder, save_freq=100, delete_checkpoint=True)
        return _results.timed(lambda: (backup_model.fit(dataset, epochs=1, verbose=0,
                                                        callbacks=[callback, CountSaves()]), batch * steps)[1])

    run_plain(), run_backup()  # warm-up
    rates = _results.interleave({"plain": run_plain, "backup": run_backup}, args.rounds)
    shutil.rmtree(folder, ignore_errors=True)
    ratio = statistics.median(b / p for b, p in zip(rates["backup"], rates["plain"]))
    rows = [["fit()", f"{statistics.median(rates['plain']):,.0f}", "1.000"],
            ["fit() + BackupAndRestore(save_freq=100)", f"{statistics.median(rates['backup']):,.0f}", f"{ratio:.3f}"]]
    body = (f"Seed CIFAR-10 CNN, batch {batch}, {steps} steps per run (so {steps // 100} backups per run, "
            f"{saves['count']} in all), {args.rounds} interleaved rounds; ratio = median of per-round ratios. "
            f"Machine: {_results.machine()}.\n\n"
            + _results.table(["trainer", "samples/s", "ratio"], rows)
            + f"\n\nPer-round samples/s: plain {[round(r) for r in rates['plain']]}, "
              f"backup {[round(r) for r in rates['backup']]}.")
    print(body)
    _results.write_section("backup_overhead.py: BackupAndRestore(save_freq=100) in fit()", body)


if __name__ == "__main__":
    main()
