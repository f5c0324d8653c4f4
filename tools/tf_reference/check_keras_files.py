"""Opens the Keras files torchstrategy wrote (tools/tf_reference/write_our_files.py) with TF 2.21 / Keras 3.15.1 and
checks them: `tf.keras.models.load_model` of each `.keras` and `.h5` gives our predictions (atol 1e-5, or the
file's `atol`) and our optimizer iterations (and a LossScaleOptimizer's dynamic_scale and step_counter), and
`load_weights` of each `.weights.h5` into that model gives them too. Prints one line
per file and exits non-zero when one fails.

    PYTHONPATH=. .venv/bin/python tools/tf_reference/write_our_files.py /tmp/ours
    /work/tf-venv/bin/python tools/tf_reference/check_keras_files.py /tmp/ours
"""
from __future__ import annotations

import os
import sys
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import write_keras_fixtures  # noqa: E402,F401  (registers the custom Scale / Residual classes)


def check(folder: str, name: str) -> list[str]:
    data = np.load(os.path.join(folder, f"{name}.npz"))
    x = [data["x0"], data["x1"]] if "x0" in data else data["x"]
    expected = [data[k] for k in sorted(data) if k.startswith("y")]
    atol = float(data["atol"]) if "atol" in data else 1e-5
    results = []
    model = None
    for suffix in (".keras", ".h5"):
        path = os.path.join(folder, name + suffix)
        if not os.path.exists(path):
            continue
        note = ""
        try:
            try:
                loaded = tf.keras.models.load_model(path)
            except ValueError as error:
                if suffix != ".h5" or "is not a KerasSaveable subclass" not in str(error):
                    raise
                # Keras 3.15 cannot compile its own legacy .h5 files with string losses ('mse'): the same
                # error comes from TF's own files (tests/formats/fixtures/lstm.h5), so check them uncompiled
                loaded = tf.keras.models.load_model(path, compile=False)
                note = " (compile=False: TF fails the same way on its own .h5 with a string loss)"
            got = loaded.predict(x, verbose=0)
            got = got if isinstance(got, list) else [got]
            error = max(float(np.abs(a - b).max()) for a, b in zip(got, expected))
            optimizer = getattr(loaded, "optimizer", None)
            iterations = int(optimizer.iterations) if optimizer is not None else None
            ok = error <= atol and (note or iterations == int(data["iterations"]))
            scale = ""
            if "dynamic_scale" in data and not note:
                got_scale = (float(optimizer.dynamic_scale), int(optimizer.step_counter.numpy()))
                ok = ok and got_scale == (float(data["dynamic_scale"]), int(data["step_counter"]))
                scale = (f", {type(optimizer).__name__} dynamic_scale/step_counter {got_scale} (ours "
                         f"{(float(data['dynamic_scale']), int(data['step_counter']))})")
            results.append(f"{'OK  ' if ok else 'FAIL'} {name}{suffix}: max |diff| {error:.2e}, iterations "
                           f"{iterations} (ours {int(data['iterations'])}){scale}{note}")
            model = model or loaded
        except Exception as error:  # noqa: BLE001  (the report names it)
            traceback.print_exc()
            results.append(f"FAIL {name}{suffix}: {type(error).__name__}: {error}"[:400])
    path = os.path.join(folder, f"{name}.weights.h5")
    if model is not None and os.path.exists(path):
        try:
            for weight in model.weights:
                weight.assign(np.zeros(weight.shape, weight.dtype))
            model.load_weights(path)
            got = model.predict(x, verbose=0)
            got = got if isinstance(got, list) else [got]
            error = max(float(np.abs(a - b).max()) for a, b in zip(got, expected))
            results.append(f"{'OK  ' if error <= atol else 'FAIL'} {name}.weights.h5: max |diff| {error:.2e}")
        except Exception as error:  # noqa: BLE001
            results.append(f"FAIL {name}.weights.h5: {type(error).__name__}: {error}"[:400])
    return results


def main(folder: str) -> int:
    names = sorted({f[:-len(".npz")] for f in os.listdir(folder) if f.endswith(".npz")})
    lines = [line for name in names for line in check(folder, name)]
    print("\n".join(lines))
    failed = sum(line.startswith("FAIL") for line in lines)
    print(f"{len(lines) - failed} of {len(lines)} files open in TF {tf.__version__} with our numbers")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
