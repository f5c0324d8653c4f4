"""Save and load time of the file formats TF and Keras users bring (`.keras`, `.weights.h5`, TF's tensor-bundle
checkpoints) against this library's own checkpoint format and plain torch.save / torch.load of the state dicts.

    python benchmarks/save_load.py [--rounds 5] [--cnn-rounds 9] [--width 4096] [--depth 6] [--quick] [--no-write]

Two models: the seed CIFAR-10 CNN (benchmarks/fit_overhead.py) compiled with Adam after one training step, so
every format carries its optimizer state, and a ~100M-parameter MLP (6x Dense(4096), 400 MB of float32) without
an optimizer. Every method writes to the same folder, interleaved round by round (rotating who goes first), with
`os.sync()` untimed before each run. The loads restore into the live objects (torch.load + load_state_dict,
Checkpoint.read, load_weights), except `keras.models.load_model`, which also builds (and initialises) a new
model from the file's config: the row "build from config" shows that part alone. `--quick` is a smoke run
(tiny MLP, one round) that leaves RESULTS.md alone.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402
from fit_overhead import seed_cnn  # noqa: E402

import torchstrategy as tf  # noqa: E402
from torchstrategy._machinery import kernel_build  # noqa: E402

#: the CPU flags that matter here: the CRC-32C instruction (sse4_2 on x86, crc32 on ARM) and vector widths
FLAGS = ("sse4_2", "crc32", "pclmulqdq", "avx2", "avx512f", "avx512bw", "asimd")

SAVES = {"torch": "torch.save(state dicts) (reference)",
         "torch_atomic": "torch.save to temp + fsync + rename (atomic, as every method below)",
         "own": "tf.train.Checkpoint.write, own format (atomic, fsynced, checksummed)",
         "tf": "tf.train.Checkpoint.write, TF tensor bundle (CRC-32C, fsynced)",
         "keras": "model.save('.keras') (zip + HDF5, fsynced)",
         "weights_h5": "model.save_weights('.weights.h5') (HDF5, fsynced)"}
LOADS = {"torch": "torch.load + load_state_dict (reference)",
         "own": "tf.train.Checkpoint.read, own format (checksums verified first)",
         "tf": "tf.train.Checkpoint.read, TF tensor bundle (CRC-32C verified first)",
         "keras": "keras.models.load_model('.keras') (builds a new model)",
         "build": "  of which: build from config, no file (what load_model builds)",
         "weights_h5": "model.load_weights('.weights.h5')"}
FILES = {"torch": "state.pt", "torch_atomic": "atomic.pt", "own": "ckpt-own", "tf": "ckpt-tf", "keras": "model.keras",
         "weights_h5": "model.weights.h5"}


def cnn_with_adam() -> tuple:
    """The seed CNN compiled with Adam, after one training step (its optimizer state exists)."""
    tf.random.set_seed(0)
    model = seed_cnn()
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    images, labels = _results.synthetic_cifar(32)
    model.train_on_batch(images, labels)
    return model, model.optimizer


def mlp(width: int, depth: int) -> tuple:
    """`depth` Dense(width) layers (6 x 4096 ~ 100.7M parameters), no optimizer."""
    layers = [tf.keras.layers.Dense(width, activation="relu") for _ in range(depth - 1)]
    model = tf.keras.Sequential([tf.keras.Input((width,))] + layers + [tf.keras.layers.Dense(width)])
    return model, None


def _size(path: str) -> int:
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, name)) for name in os.listdir(path))
    files = [path] if os.path.exists(path) else []
    folder = os.path.dirname(path)
    files += [os.path.join(folder, name) for name in os.listdir(folder)
              if name.startswith(os.path.basename(path) + ".")]  # a TF bundle: prefix.index, prefix.data-*
    return sum(os.path.getsize(name) for name in files)


def measure(name: str, model, optimizer, folder: str, rounds: int) -> dict:
    objects = {"model": model} if optimizer is None else {"model": model, "optimizer": optimizer}
    ckpt = tf.train.Checkpoint(**objects)
    path = {kind: os.path.join(folder, f"{name.split()[0]}-{file}") for kind, file in FILES.items()}
    tf_format = tf.train.CheckpointOptions()
    tf_format.experimental_write_format = "tf"
    config = model.to_json()

    def torch_load() -> None:
        loaded = torch.load(path["torch"], map_location="cpu", weights_only=True)
        for key, value in objects.items():
            value.load_state_dict(loaded[key])

    def torch_atomic() -> None:  # what careful torch code does: temp file, fsync, rename
        temp = path["torch_atomic"] + ".tmp"
        with open(temp, "wb") as handle:
            torch.save({k: v.state_dict() for k, v in objects.items()}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path["torch_atomic"])

    def build() -> None:
        rebuilt = tf.keras.models.model_from_json(config)
        if not rebuilt.built:
            rebuilt.build(model._build_input_shape)

    saves = {"torch": lambda: _results.seconds_from_clean_disk(lambda: torch.save({k: v.state_dict() for k, v in objects.items()},
                                                        path["torch"])),
             "torch_atomic": lambda: _results.seconds_from_clean_disk(torch_atomic),
             "own": lambda: _results.seconds_from_clean_disk(lambda: ckpt.write(path["own"])),
             "tf": lambda: _results.seconds_from_clean_disk(lambda: ckpt.write(path["tf"], options=tf_format)),
             "keras": lambda: _results.seconds_from_clean_disk(lambda: model.save(path["keras"])),
             "weights_h5": lambda: _results.seconds_from_clean_disk(lambda: model.save_weights(path["weights_h5"]))}
    loads = {"torch": lambda: _results.seconds_from_clean_disk(torch_load),
             "own": lambda: _results.seconds_from_clean_disk(lambda: ckpt.read(path["own"]).assert_consumed()),
             "tf": lambda: _results.seconds_from_clean_disk(lambda: ckpt.read(path["tf"]).assert_consumed()),
             "keras": lambda: _results.seconds_from_clean_disk(lambda: tf.keras.models.load_model(path["keras"])),
             "build": lambda: _results.seconds_from_clean_disk(build),
             "weights_h5": lambda: _results.seconds_from_clean_disk(lambda: model.load_weights(path["weights_h5"]))}
    for run in list(saves.values()) + list(loads.values()):
        run()  # warm-up: first-call costs (the C kernels' build, imports), files in place for the loads
    return {"name": name, "params": sum(p.numel() for p in model.parameters()),
            "save": _results.interleave(saves, rounds), "load": _results.interleave(loads, rounds),
            "size": {kind: _size(file) for kind, file in path.items()}}


def _ratio(times: dict, kind: str) -> float:
    return _results.median([a / b for a, b in zip(times[kind], times["torch"])])


def cpu_line() -> str:
    model, flags = _results.lscpu()
    lib = kernel_build.library()
    crc = ("the CRC instruction" if lib.ts_crc32c_hardware() else "slicing-by-8 tables") if lib is not None \
        else "NumPy (no C compiler)"
    return (f"{model}; flags: {', '.join(f for f in FLAGS if f in flags) or 'none of ' + ', '.join(FLAGS)}; "
            f"CRC-32C of TF bundles computed with {crc}")


def report(results: list, rounds: dict) -> str:
    rows = []
    for r in results:
        for operation, labels in (("save", SAVES), ("load", LOADS)):
            for kind, label in labels.items():
                seconds = _results.median(r[operation][kind])
                size = r["size"]["keras" if kind == "build" else kind]
                rate = "" if kind == "build" else f"{size / 2**20 / seconds:,.0f}"
                ratio = _ratio(r[operation], kind)
                rows.append([r["name"], operation, label, f"{seconds:.4f}", rate,
                             f"{ratio:.3f}" if kind in ("torch", "torch_atomic", "build") else f"**{ratio:.3f}**"])
    sizes = "; ".join(f"{r['name']} ({r['params']:,} parameters): " + ", ".join(
        f"{kind} {r['size'][kind] / 2**20:,.2f} MiB" for kind in FILES if kind != "torch_atomic") for r in results)
    per_round = "; ".join(
        f"{r['name']} {op} " + ", ".join(f"{kind} {[round(t * 1e3) for t in times]}" for kind, times in r[op].items())
        for r in results for op in ("save", "load"))
    return (
        f"Save and load of each file format against torch.save / torch.load + load_state_dict of the same state "
        f"dicts, same folder, interleaved rounds ({rounds}, rotating who goes first, `os.sync()` untimed before "
        f"each run). Times are medians in seconds; MB/s is the file size (MiB) over the median; ratios are medians "
        f"of per-round ratios to torch (below 1: faster). Seed CNN compiled with Adam after one step (every format "
        f"holds the optimizer state); the MLP without optimizer. `load_model` builds a new model from the config "
        f"(initialising its weights) before it reads them; the others restore into live objects. "
        f"Machine: {_results.machine()}. CPU: {cpu_line()}.\n\n"
        + _results.table(["model", "operation", "method", "median s", "MB/s", "ratio vs torch"], rows)
        + f"\n\nFile sizes: {sizes}.\n\nPer-round ms: {per_round}.")


def main(argv: list | None = None) -> str:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5, help="rounds for the large MLP")
    parser.add_argument("--cnn-rounds", type=int, default=9)
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--quick", action="store_true", help="smoke run: MLP 2x Dense(64), one round, no write")
    parser.add_argument("--folder", default=None, help="where files go (default: a temp folder)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.cnn_rounds, args.width, args.depth, args.no_write = 1, 1, 64, 2, True
    print(f"CPU: {cpu_line()}", flush=True)
    folder = args.folder or tempfile.mkdtemp(prefix="save-load-bench-")
    os.makedirs(folder, exist_ok=True)
    try:
        results = [measure("seed CNN + Adam", *cnn_with_adam(), folder, args.cnn_rounds)]
        results.append(measure(f"MLP {args.depth}x Dense({args.width})", *mlp(args.width, args.depth), folder,
                               args.rounds))
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    body = report(results, {"CNN": args.cnn_rounds, "MLP": args.rounds}) + (
        f"\n\nPeak resident memory of the whole run (two MLPs alive while load_model builds one): {peak:.2f} GiB.")
    print(body)
    if not args.no_write:
        _results.write_section("save_load.py: .keras, .weights.h5, TF checkpoints vs own format vs torch.save", body)
    return body


if __name__ == "__main__":
    main()
