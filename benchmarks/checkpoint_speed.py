"""tf.train.Checkpoint save/restore time and file size against plain torch.save/torch.load of the
same state dicts: the seed CIFAR-10 CNN with its Adam state, and a ~100M-parameter MLP.

    python benchmarks/checkpoint_speed.py [--rounds 5] [--cnn-rounds 15] [--width 4096] [--depth 6]

Both sides write to the same folder, interleaved round by round (rotating who goes first). The
Checkpoint side also fsyncs the file and its folder, renames atomically and checksums everything;
plain torch.save does none of that, so two more rows show torch.save made durable (fsync) and
atomic (temp + fsync + rename), the fair comparisons for crash safety.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402
from fit_overhead import seed_cnn  # noqa: E402

import torchstrategy as tf  # noqa: E402


def _cnn_with_adam_state():
    tf.random.set_seed(0)
    model = seed_cnn()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    x, y = torch.rand(32, 32, 32, 3), torch.randint(0, 10, (32,))
    with tf.GradientTape() as tape:
        loss = F.cross_entropy(model(x, training=True), y)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return model, optimizer


def _mlp(width: int, depth: int):
    layers = [tf.keras.layers.Dense(width, activation="relu", input_shape=(width,)) for _ in range(depth - 1)]
    model = tf.keras.Sequential(layers + [tf.keras.layers.Dense(width)])
    return model, None


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def measure(name: str, model, optimizer, folder: str, rounds: int) -> dict:
    objects = {"model": model} if optimizer is None else {"model": model, "optimizer": optimizer}
    ckpt = tf.train.Checkpoint(**objects)
    path = {kind: os.path.join(folder, f"{name}-{kind}") for kind in SAVES}

    def state_dicts() -> dict:
        return {key: value.state_dict() for key, value in objects.items()}

    def torch_fsync() -> None:
        torch.save(state_dicts(), path["torch_fsync"])
        _fsync_file(path["torch_fsync"])

    def torch_atomic() -> None:  # what careful torch code does: temp file, fsync, rename
        temp = path["torch_atomic"] + ".tmp"
        with open(temp, "wb") as handle:
            torch.save(state_dicts(), handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path["torch_atomic"])

    def torch_restore() -> None:
        loaded = torch.load(path["torch"], map_location="cpu", weights_only=True)
        for key, value in objects.items():
            value.load_state_dict(loaded[key])

    saves = {"checkpoint": lambda: _results.seconds_from_clean_disk(lambda: ckpt.write(path["checkpoint"])),
             "torch": lambda: _results.seconds_from_clean_disk(lambda: torch.save(state_dicts(), path["torch"])),
             "torch_fsync": lambda: _results.seconds_from_clean_disk(torch_fsync), "torch_atomic": lambda: _results.seconds_from_clean_disk(torch_atomic)}
    restores = {"checkpoint": lambda: _results.seconds_from_clean_disk(lambda: ckpt.read(path["checkpoint"]).assert_consumed()),
                "torch": lambda: _results.seconds_from_clean_disk(torch_restore)}
    for run in list(saves.values()) + list(restores.values()):
        run()  # warm-up: first-call costs, files in place for the restores
    return {"name": name, "params": sum(p.numel() for p in model.parameters()),
            "save": _results.interleave(saves, rounds), "restore": _results.interleave(restores, rounds),
            "size": {kind: os.path.getsize(path[kind]) for kind in ("checkpoint", "torch")}}


SAVES = {"checkpoint": "tf.train.Checkpoint.write (atomic, fsynced, checksummed)",
         "torch": "torch.save(state dicts) (reference)",
         "torch_fsync": "torch.save + fsync (durable, not atomic)",
         "torch_atomic": "torch.save to temp + fsync + rename (atomic)"}
RESTORES = {"checkpoint": "tf.train.Checkpoint.read (checksums verified first)",
            "torch": "torch.load + load_state_dict (reference)"}


def _ratio(times: dict, ours: str, reference: str) -> float:
    return _results.median([a / b for a, b in zip(times[ours], times[reference])])


def report(results: list, rounds: dict) -> str:
    rows = []
    for r in results:
        for operation, labels in (("save", SAVES), ("restore", RESTORES)):
            for kind, label in labels.items():
                ratio = _ratio(r[operation], kind, "torch")
                rows.append([r["name"], operation, label, f"{_results.median(r[operation][kind]) * 1e3:,.1f}",
                             f"**{ratio:.3f}**" if kind == "checkpoint" else f"{ratio:.3f}"])
    sizes = "; ".join(f"{r['name']} ({r['params']:,} parameters): checkpoint {r['size']['checkpoint'] / 2**20:,.2f} MiB, "
                      f"torch.save {r['size']['torch'] / 2**20:,.2f} MiB" for r in results)
    per_round = "; ".join(
        f"{r['name']} {op} " + ", ".join(f"{kind} {[round(t * 1e3) for t in times]}" for kind, times in r[op].items())
        for r in results for op in ("save", "restore"))
    return (
        f"tf.train.Checkpoint against torch.save / torch.load + load_state_dict of the same state dicts, same "
        f"folder, interleaved rounds ({rounds}, rotating who goes first, `os.sync()` untimed before each run so "
        f"no run pays for another's dirty pages). Times are medians; ratios are medians of per-round ratios "
        f"to the reference (below 1: faster). Seed CNN with its Keras Adam state after one step; the MLP "
        f"without optimizer state. Machine: {_results.machine()}.\n\n"
        + _results.table(["model", "operation", "method", "median ms", "ratio vs torch"], rows)
        + f"\n\nFile sizes: {sizes}.\n\nPer-round ms: {per_round}.")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9, help="rounds for the large MLP")
    parser.add_argument("--cnn-rounds", type=int, default=15)
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--folder", default=None, help="where files go (default: a temp folder)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    folder = args.folder or tempfile.mkdtemp(prefix="ckpt-bench-")
    os.makedirs(folder, exist_ok=True)
    try:
        results = [measure("seed CNN + Adam", *_cnn_with_adam_state(), folder, args.cnn_rounds)]
        model, _ = _mlp(args.width, args.depth)
        results.append(measure(f"MLP {args.depth}x Dense({args.width})", model, None, folder, args.rounds))
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)
    body = report(results, {"CNN": args.cnn_rounds, "MLP": args.rounds})
    print(body)
    if not args.no_write:
        _results.write_section("checkpoint_speed.py: tf.train.Checkpoint vs torch.save/torch.load", body)


if __name__ == "__main__":
    main()
