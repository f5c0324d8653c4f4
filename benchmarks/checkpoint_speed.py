"""tf.train.Checkpoint save/restore time and file size against plain torch.save/torch.load of the
same state dicts: the seed CIFAR-10 CNN with its Adam state, and a ~100M-parameter MLP.

    python benchmarks/checkpoint_speed.py [--rounds 5] [--cnn-rounds 15] [--width 4096] [--depth 6]

Both sides write to the same folder, interleaved round by round (rotating who goes first). The
Checkpoint side also fsyncs the file and its folder and checksums everything; torch.save does
neither, so a third row shows torch.save followed by fsync (the durable equivalent).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

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


def _timed(fn) -> float:
    os.sync()  # untimed: each contestant starts with no dirty pages left by the one before
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def measure(name: str, model, optimizer, folder: str, rounds: int) -> dict:
    objects = {"model": model} if optimizer is None else {"model": model, "optimizer": optimizer}
    ckpt = tf.train.Checkpoint(**objects)
    ours, plain, durable = (os.path.join(folder, f"{name}-{kind}") for kind in ("ckpt", "torch.pt", "durable.pt"))

    def state_dicts() -> dict:
        return {key: value.state_dict() for key, value in objects.items()}

    def torch_restore(path: str) -> None:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
        for key, value in objects.items():
            value.load_state_dict(loaded[key])

    def torch_save_durable() -> None:
        torch.save(state_dicts(), durable)
        _fsync_file(durable)

    saves = {"checkpoint": lambda: _timed(lambda: ckpt.write(ours)),
             "torch": lambda: _timed(lambda: torch.save(state_dicts(), plain)),
             "torch_fsync": lambda: _timed(torch_save_durable)}
    restores = {"checkpoint": lambda: _timed(lambda: ckpt.read(ours).assert_consumed()),
                "torch": lambda: _timed(lambda: torch_restore(plain))}
    for run in list(saves.values()) + list(restores.values()):
        run()  # warm-up: first-call costs, files in place for the restores
    save_times = _results.interleave(saves, rounds)
    restore_times = _results.interleave(restores, rounds)
    params = sum(p.numel() for p in model.parameters())
    return {"name": name, "params": params, "save": save_times, "restore": restore_times,
            "size": {"checkpoint": os.path.getsize(ours), "torch": os.path.getsize(plain)}}


def _ratio(times: dict, ours: str, reference: str) -> float:
    return _results.median([a / b for a, b in zip(times[ours], times[reference])])


def report(results: list, rounds: dict) -> str:
    rows = []
    for r in results:
        med = {kind: {k: _results.median(v) for k, v in r[kind].items()} for kind in ("save", "restore")}
        rows.append([r["name"], f"{r['params']:,}", f"{r['size']['checkpoint'] / 2**20:,.2f} / "
                     f"{r['size']['torch'] / 2**20:,.2f}",
                     f"{med['save']['checkpoint'] * 1e3:,.1f}", f"{med['save']['torch'] * 1e3:,.1f}",
                     f"**{_ratio(r['save'], 'checkpoint', 'torch'):.3f}**",
                     f"{med['save']['torch_fsync'] * 1e3:,.1f} ({_ratio(r['save'], 'checkpoint', 'torch_fsync'):.3f})",
                     f"{med['restore']['checkpoint'] * 1e3:,.1f}", f"{med['restore']['torch'] * 1e3:,.1f}",
                     f"**{_ratio(r['restore'], 'checkpoint', 'torch'):.3f}**"])
    headers = ["model", "params", "file MiB (ckpt / torch)", "save ms (ckpt)", "save ms (torch.save)",
               "save ratio", "torch.save+fsync ms (ckpt ratio)", "restore ms (ckpt)",
               "restore ms (torch.load+load_state_dict)", "restore ratio"]
    per_round = "; ".join(
        f"{r['name']}: save ckpt {[round(t * 1e3) for t in r['save']['checkpoint']]}, torch "
        f"{[round(t * 1e3) for t in r['save']['torch']]}; restore ckpt "
        f"{[round(t * 1e3) for t in r['restore']['checkpoint']]}, torch {[round(t * 1e3) for t in r['restore']['torch']]}"
        for r in results)
    return (
        f"Checkpoint.write / Checkpoint.read (atomic temp+fsync+rename+folder fsync, CRC-32 of all bytes, "
        f"verified before anything is restored) against torch.save / torch.load + load_state_dict of the same "
        f"state dicts, same folder, interleaved rounds ({rounds}); times are medians, ratios the median of "
        f"per-round ratios (below 1.0: the checkpoint is faster). Seed CNN with its Keras Adam state after one "
        f"step; the MLP without optimizer state. Machine: {_results.machine()}.\n\n"
        + _results.table(headers, rows)
        + f"\n\nPer-round ms: {per_round}.")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5, help="rounds for the large MLP")
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
