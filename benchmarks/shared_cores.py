"""fit() in float32 and mixed_bfloat16 while another process shares the cores: how much each slows down, which
ops take the loss, and whether a thread setting (OpenMP's wait policy, fewer intra-op threads) softens it.

    python benchmarks/shared_cores.py [--rounds 5] [--steps 10] [--models conv1,seed] [--quick] [--results PATH]

Each trainer is a process of its own (its OpenMP settings are read at start) that builds the models of
vs_tensorflow.py in both policies, then times one fit() epoch per contestant in interleaved rounds, with a
competing process running or paused (SIGSTOP/SIGCONT) around each epoch: 'spin' computes in registers
(takes a core, no memory traffic), 'stream' copies 64 MiB arrays (takes a core and memory bandwidth).
Slowdown = samples/s alone / samples/s beside the competitor (medians over rounds). The op table times each
op family's wall time per step alone and beside 'spin' (torch.profiler; an op's self time on the calling
thread includes its waits for the other intra-op thread).
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402

POLICIES = ("float32", "mixed_bfloat16")
COMPETITORS = {
    "spin": "x = 0\nwhile True:\n    x = (x * 1103515245 + 12345) & 0xFFFFFFFF\n",
    "stream": "import numpy as np\na = np.ones(16 << 20, np.float32)\nb = np.empty_like(a)\n"
              "while True:\n    np.copyto(b, a)\n    np.copyto(a, b)\n",
}
#: trainer variants: (label, intra-op threads, extra environment)
VARIANTS = (("2 threads (default)", 2, {}), ("2 threads, OMP_WAIT_POLICY=PASSIVE", 2, {"OMP_WAIT_POLICY": "PASSIVE"}),
            ("1 thread", 1, {}))
#: op families of the op table, by aten/torchstrategy op name
FAMILIES = (("matmul (oneDNN/BLAS)", ("aten::mm", "aten::addmm", "aten::bmm", "aten::mkldnn_convolution",
                                      "aten::convolution_backward")),
            ("torchstrategy C kernels", ("_ConvReluPoolNHWC", "_ConvReluPoolNHWCBackward", "_MaxPoolNHWC",
                                         "_MaxPoolNHWCBackward", "torchstrategy::")),
            ("casts and copies", ("aten::copy_",)),
            ("optimizer", ("aten::_fused_adam_", "aten::_foreach_")))


def _family(name: str) -> str:
    for family, prefixes in FAMILIES:
        if any(name.startswith(prefix) for prefix in prefixes):
            return family
    return "everything else"


def _die_with_parent() -> None:
    """In a competitor, before it starts: the kernel kills it when its trainer dies, however that happens."""
    import ctypes

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class _Competitor:
    """A competing process, paused until `running` is entered."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.process = subprocess.Popen([sys.executable, "-c", COMPETITORS[kind]], env=_results.child_env("1"),
                                        preexec_fn=_die_with_parent)
        time.sleep(0.5)  # past its imports
        os.kill(self.process.pid, signal.SIGSTOP)

    def run(self, fn):
        os.kill(self.process.pid, signal.SIGCONT)
        time.sleep(0.05)
        try:
            return fn()
        finally:
            os.kill(self.process.pid, signal.SIGSTOP)

    def close(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()


def worker(threads: int, models: list, rounds: int, steps: int, profile: bool) -> dict:
    """One trainer: samples/s per (model, policy, competitor) over interleaved rounds, and the op table."""
    import torch

    torch.set_num_threads(threads)
    import torchstrategy as tf
    from vs_tensorflow import build_model

    batch = 256
    images, labels = _results.synthetic_cifar(batch * steps)
    data = tf.data.Dataset.from_tensor_slices((images, labels)).batch(batch).prefetch(2)
    trained = {}
    for policy in POLICIES:
        tf.keras.mixed_precision.set_global_policy(policy)
        for name in models:
            model = build_model(tf.keras, name)
            model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            model.fit(data, epochs=1, verbose=0)  # warm-up: kernels built, allocator settled
            trained[(name, policy)] = model
    tf.keras.mixed_precision.set_global_policy("float32")
    competitors = {kind: _Competitor(kind) for kind in COMPETITORS}
    try:
        def epoch(model):
            return lambda: _results.timed(lambda: (model.fit(data, epochs=1, verbose=0), batch * steps)[1])

        runs = {}
        for (name, policy), model in trained.items():
            runs[f"{name}|{policy}|alone"] = epoch(model)
            for kind, competitor in competitors.items():
                runs[f"{name}|{policy}|{kind}"] = (lambda c=competitor, m=model: c.run(epoch(m)))
        rates = _results.interleave(runs, rounds)
        ops = {}
        if profile:
            from torch.profiler import profile as profiler

            for (name, policy), model in trained.items():
                for kind in ("alone", "spin"):
                    def one_epoch(m=model):
                        with profiler() as prof:
                            m.fit(data, epochs=1, verbose=0)
                        return prof

                    prof = one_epoch() if kind == "alone" else competitors["spin"].run(one_epoch)
                    totals: dict = {}
                    for event in prof.key_averages():
                        family = _family(event.key)
                        totals[family] = totals.get(family, 0.0) + event.self_cpu_time_total / 1e3 / steps
                    ops[f"{name}|{policy}|{kind}"] = totals
    finally:
        for competitor in competitors.values():
            competitor.close()
    return {"rates": rates, "ops": ops}


def _run_variant(label: str, threads: int, extra: dict, args: argparse.Namespace, profile: bool) -> dict:
    env = _results.child_env(str(threads))
    env.update(extra)
    command = [sys.executable, os.path.abspath(__file__), "--worker", str(threads), "--rounds", str(args.rounds),
               "--steps", str(args.steps), "--models", args.models] + (["--profile"] if profile else [])
    return _results.worker_result(command, env, args.timeout, f"the trainer '{label}'")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10, help="steps of 256 samples in each timed epoch")
    parser.add_argument("--models", default="conv1,seed", help="comma-separated vs_tensorflow.py model names")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2 rounds of 2 steps, the default variant")
    parser.add_argument("--results", default=None, help="the RESULTS.md to write (default benchmarks/RESULTS.md)")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--worker", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.steps = 2, 2
    if args.worker:
        result = worker(args.worker, args.models.split(","), args.rounds, args.steps, args.profile)
        _results.print_result(result)
        return
    model_name, flags = _results.lscpu()
    cpu = f"{model_name}; avx512_bf16 {'yes' if 'avx512_bf16' in flags else 'no'}, " \
          f"amx_bf16 {'yes' if 'amx_bf16' in flags else 'no'}"
    print(f"CPU: {cpu}", flush=True)
    started, load_before = time.perf_counter(), os.getloadavg()[0]
    variants = VARIANTS[:1] if args.quick else VARIANTS
    results = {label: _run_variant(label, threads, extra, args, profile=index == 0)
               for index, (label, threads, extra) in enumerate(variants)}
    models = args.models.split(",")
    rows = []
    for label, result in results.items():
        med = {key: _results.median(values) for key, values in result["rates"].items()}
        for name in models:
            for policy in POLICIES:
                alone = med[f"{name}|{policy}|alone"]
                row = [label, name, policy, f"{alone:,.0f}"]
                for kind in COMPETITORS:
                    beside = med[f"{name}|{policy}|{kind}"]
                    row += [f"{beside:,.0f}", f"{alone / beside:.2f}x"]
                rows.append(row)
    headers = ["trainer", "model", "policy", "alone (samples/s)"]
    for kind in COMPETITORS:
        headers += [f"beside '{kind}'", f"slowdown ({kind})"]
    op_rows = []
    ops = results[variants[0][0]]["ops"]
    for name in models:
        for policy in POLICIES:
            alone, spin = ops[f"{name}|{policy}|alone"], ops[f"{name}|{policy}|spin"]
            for family in [f for f, _ in FAMILIES] + ["everything else"]:
                a, s = alone.get(family, 0.0), spin.get(family, 0.0)
                op_rows.append([name, policy, family, f"{a:.2f}", f"{s:.2f}", f"{s / a:.2f}x" if a > 0 else "-"])
    load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    body = (f"Models of vs_tensorflow.py ({', '.join(models)}), adam, batch 256, {args.steps} steps per timed epoch, "
            f"{args.rounds} interleaved rounds per contestant. CPU: {cpu}. Machine: {_results.machine()}; {load}; "
            f"whole benchmark {time.perf_counter() - started:.0f} s.\n\n"
            + _results.table(headers, rows)
            + f"\n\nWall time per step by op family ({variants[0][0]}; ms, alone and beside 'spin'):\n\n"
            + _results.table(["model", "policy", "op family", "alone", "beside 'spin'", "slowdown"], op_rows))
    print(body, flush=True)
    _results.write_section("shared_cores.py: float32 and mixed_bfloat16 fit() beside another process", body,
                           args.results)


if __name__ == "__main__":
    main()
