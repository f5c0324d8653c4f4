"""FSDPStrategy's ShardingOptions on CPU with real gloo replicas: reshard_after_forward=False and
cpu_offload=True train sharded and give MirroredStrategy's weights and History."""
from __future__ import annotations

import numpy as np
import pytest

from tests import _multiprocess as mp

# One job, two strategies over the same 2 processes (they share the process group): the FSDP variant
# (STRATEGY is filled in per test) and Mirrored train the same model from the same seed on the same data.
JOB = r'''
import json, os, sys
import numpy as np, torch
import torchstrategy as tf

out, replicas = sys.argv[1], int(sys.argv[2])
devices = [f"/cpu:{i}" for i in range(replicas)]
strategies = {"fsdp": STRATEGY, "mirrored": tf.distribute.MirroredStrategy(devices)}
rng = np.random.default_rng(0)
x = rng.random((64, 6)).astype(np.float32)
y = rng.integers(0, 3, (64, 1)).astype(np.uint8)
report = {"rank": torch.distributed.get_rank(), "options": repr(strategies["fsdp"].options)}
for name, strategy in strategies.items():
    tf.random.set_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(6,)),
                                     tf.keras.layers.Dense(3)])
        model.compile(optimizer=tf.keras.optimizers.Adam(1e-2),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    local = [w.to_local() if hasattr(w, "to_local") else w for w in model.weights]
    report[name] = {"history": history.history, "weights": [w.tolist() for w in model.get_weights()],
                    "sharded": [hasattr(w, "to_local") for w in model.weights],
                    "local_rows": [t.shape[0] for t in local], "devices": [str(t.device) for t in local]}
with open(os.path.join(out, f"report_{report['rank']}.json"), "w") as handle:
    json.dump(report, handle)
'''


def _check_trains_like_mirrored(reports: list) -> None:
    for report in reports:
        fsdp, mirrored = report["fsdp"], report["mirrored"]
        assert all(fsdp["sharded"]) and not any(mirrored["sharded"])
        assert all(device == "cpu" for device in fsdp["devices"])
        assert fsdp["history"].keys() == mirrored["history"].keys()
        for key in mirrored["history"]:
            np.testing.assert_allclose(fsdp["history"][key], mirrored["history"][key], rtol=1e-6, atol=1e-6,
                                       err_msg=key)
        for got, want in zip(fsdp["weights"], mirrored["weights"]):
            np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-6, atol=1e-6)
    # each rank holds its own rows of every weight (dim 0 split; the 3-row bias as 2 + 1), all gather the same
    full_rows = [np.shape(w)[0] for w in reports[0]["mirrored"]["weights"]]
    rows = [report["fsdp"]["local_rows"] for report in reports]
    assert [a + b for a, b in zip(*rows)] == full_rows and rows[0] != full_rows, rows
    for a, b in zip(reports[0]["fsdp"]["weights"], reports[1]["fsdp"]["weights"]):
        np.testing.assert_array_equal(np.array(a), np.array(b))


@pytest.mark.slow
def test_no_reshard_after_forward_trains_like_mirrored(tmp_path):
    job = JOB.replace("STRATEGY", "tf.distribute.experimental.FSDPStrategy(devices, reshard_after_forward=False)")
    reports = mp.run_replica_reports(tmp_path, job, replicas=2, timeout=120)
    assert all("reshard_after_forward=False" in report["options"] for report in reports)
    _check_trains_like_mirrored(reports)


@pytest.mark.slow
def test_cpu_offload_trains_like_mirrored_on_cpu(tmp_path):
    job = JOB.replace("STRATEGY", "tf.distribute.experimental.FSDPStrategy(devices, "
                                  "options=tf.distribute.experimental.ShardingOptions(cpu_offload=True))")
    reports = mp.run_replica_reports(tmp_path, job, replicas=2, timeout=120)
    assert all("cpu_offload=True" in report["options"] for report in reports)
    _check_trains_like_mirrored(reports)
