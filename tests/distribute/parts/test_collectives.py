"""The process-group collectives on 2 real gloo processes: a small object travels in one collective (a
fixed-size buffer), a large one in torch's sized object collectives, and the two mix without a hang;
predict's gathered batches come back in global batch order; small sums of several dtypes take one gather,
large ones an all_reduce per dtype, with the same sums; DDP's gradient buckets are averaged through the
shared-memory exchange when they fit, by gloo otherwise, with one process's weights."""
from __future__ import annotations

import pytest

from tests import _multiprocess as mp

SCRIPT = r'''
import collections, json, os, sys
import torch
import torch.distributed as dist
import torchstrategy as tf

from torchstrategy.distribute.parts import local_exchange

out, replicas = sys.argv[1], int(sys.argv[2])
if "__PATH__" == "group":  # no shared-memory directory: every small gather takes the process group
    local_exchange.SHM_DIR = os.path.join(out, "absent")
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
rank = strategy.process_rank
calls = collections.Counter()
for name in ("all_gather_single", "all_reduce", "broadcast", "all_gather_object", "broadcast_object_list"):
    def counted(*args, _original=getattr(dist, name), _name=name, **kwargs):
        calls[_name] += 1
        return _original(*args, **kwargs)
    setattr(dist, name, counted)
def exchanged(self, local, _original=local_exchange.SharedMemoryExchange.gather):
    calls["shared memory"] += 1
    return _original(self, local)
local_exchange.SharedMemoryExchange.gather = exchanged
report_open = strategy._collectives._exchange is not None

def measured(fn):
    calls.clear()
    value = fn()
    return {"value": value, "calls": dict(calls)}

big = "x" * 10000 + str(rank)  # over the one-collective size
report = {
    "gather_small": measured(lambda: strategy.gather_objects({"rank": rank, "stats": [1.5, float(rank)]})),
    "gather_big": measured(lambda: [v[-1] + str(len(v)) for v in strategy.gather_objects(big)]),
    # rank 1's value is large, rank 0's small: both learn it from the first round and take the second together
    "gather_mixed": measured(lambda: [len(v) for v in strategy.gather_objects(big if rank == 1 else "small")]),
    "broadcast_small": measured(lambda: strategy.broadcast({"from": rank}, 1)),
    "broadcast_big": measured(lambda: len(strategy.broadcast(big, 0)) and strategy.broadcast(big, 0)[-1]),
    "broadcast_none": measured(lambda: strategy.broadcast(None, 0)),
}
# predict's outputs: rank r's rows of batch b are filled with 10 * b + r; the batches differ in size
chunks = [torch.full((2, 3), 10.0 * 0 + rank), torch.full((1 + rank, 3), 10.0 * 1 + rank)]
report["gather_batches"] = measured(lambda: strategy.gather_batches(chunks)[:, 0].tolist())
collectives = strategy._collectives  # the parts the Keras loop sums its metrics with
def summed(n):  # float32, int64 and float64 parts; rank r's values are its own, so the sums are known
    parts = [torch.arange(n, dtype=torch.float32) * (rank + 1) + 0.25, torch.tensor([[3 + rank, 2**40]]),
             torch.tensor(0.1 * (rank + 1), dtype=torch.float64), torch.full((2,), rank, dtype=torch.float32)]
    return [t.tolist() for t in collectives.sum_tensors(parts)] + [[str(t.dtype) for t in collectives.sum_tensors(parts)]]
report["sum_small"] = measured(lambda: summed(5))
report["sum_large"] = measured(lambda: summed(20000))  # 80 KB of float32: over the gathered size
report["any"] = measured(lambda: [collectives.any(rank == 1), collectives.any(False)])
report["exchange"] = report_open
with open(os.path.join(out, f"report_{rank}.json"), "w") as f:
    json.dump(report, f)
'''


@pytest.mark.slow
@pytest.mark.parametrize("path", ["shared memory", "group"])
def test_small_objects_take_one_collective_and_large_ones_still_arrive(tmp_path, path):
    # both processes on this machine: small gathers go through shared memory, or (no shared-memory directory)
    # through the process group's one-tensor gather; the same values and the same number of collectives
    reports = mp.run_replica_reports(tmp_path, SCRIPT.replace("__PATH__", path), replicas=2)
    gather = "all_gather_single" if path == "group" else "shared memory"
    for rank, report in enumerate(reports):
        assert report["exchange"] is (path == "shared memory")
        small = report["gather_small"]
        assert small["value"] == [{"rank": 0, "stats": [1.5, 0.0]}, {"rank": 1, "stats": [1.5, 1.0]}]
        assert small["calls"] == {gather: 1}
        big = report["gather_big"]
        assert big["value"] == ["010001", "110001"]
        assert big["calls"] == {gather: 1, "all_gather_object": 1}
        assert report["gather_mixed"]["value"] == [5, 10001]
        assert report["gather_mixed"]["calls"] == {gather: 1, "all_gather_object": 1}
        assert report["broadcast_small"]["value"] == {"from": 1}
        # a small broadcast through shared memory is a gather of everyone's fixed-size buffer, of which src's is kept
        broadcast = "broadcast" if path == "group" else "shared memory"
        assert report["broadcast_small"]["calls"] == {broadcast: 1}
        assert report["broadcast_big"]["value"] == "0"
        assert report["broadcast_big"]["calls"] == {broadcast: 2, "broadcast_object_list": 2}
        assert report["broadcast_none"] == {"value": None, "calls": {broadcast: 1}}
        # global batch order: batch 0 (rank 0's rows, then rank 1's), then batch 1
        gathered = report["gather_batches"]
        assert gathered["value"] == [0.0, 0.0, 1.0, 1.0, 10.0, 11.0, 11.0], rank
        assert gathered["calls"] == {gather: 2}  # the row counts (one small object), then the rows
        for key, n, calls in (("sum_small", 5, {gather: 2}), ("sum_large", 20000, {"all_reduce": 6})):
            floats, ints, double, ranks, dtypes = report[key]["value"]
            # the single-process reference: rank 0's part plus rank 1's (i * 1 + 0.25) + (i * 2 + 0.25)
            assert floats == [float(i * 3 + 0.5) for i in range(n)], key
            assert ints == [[7, 2**41]] and ranks == [1.0, 1.0], key
            assert double == pytest.approx(0.1 + 0.2, abs=1e-15), key
            assert dtypes == ["torch.float32", "torch.int64", "torch.float64", "torch.float32"], key
            assert report[key]["calls"] == calls, key  # summed twice above: one gather, or 3 dtypes x all_reduce
        assert report["any"] == {"value": [True, False], "calls": {gather: 2}}


# argv: output folder, replicas. Two models fit 3 steps on the same arrays: a small one, whose gradients (one DDP
# bucket of 20 floats) are averaged through the shared-memory exchange, and one of 20,200 floats (80.8 KB, over the
# exchange's 64 KiB), averaged by gloo's all_reduce as DDP's own hook does
GRADIENT_HOOK = r'''
import collections, json, os, sys
import numpy as np
import torch.distributed as dist
import torchstrategy as tf
from torchstrategy.distribute.parts import local_exchange

out, replicas = sys.argv[1], int(sys.argv[2])
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
calls = collections.Counter()
original_all_reduce = dist.all_reduce
def all_reduce(*args, **kwargs):
    calls["all_reduce"] += 1
    return original_all_reduce(*args, **kwargs)
dist.all_reduce = all_reduce
def exchanged(self, local, _original=local_exchange.SharedMemoryExchange.gather):
    calls["shared memory"] += 1
    return _original(self, local)
local_exchange.SharedMemoryExchange.gather = exchanged
rng = np.random.default_rng(0)
report = {}
for name, features, units in (("small", 4, 4), ("large", 100, 200)):
    x = rng.random((24, features)).astype("float32")
    y = rng.random((24, units)).astype("float32")
    with strategy.scope():
        tf.random.set_seed(1)
        model = tf.keras.Sequential([tf.keras.Input((features,)), tf.keras.layers.Dense(units)])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.5), loss="mse")
    initial = [w.tolist() for w in model.get_weights()]
    calls.clear()
    model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    report[name] = {"calls": dict(calls), "initial": initial, "final": [w.tolist() for w in model.get_weights()]}
with open(os.path.join(out, f"report_{strategy.process_rank}.json"), "w") as f:
    json.dump(report, f)
'''


@pytest.mark.slow
def test_gradients_are_averaged_through_shared_memory_when_they_fit_and_by_gloo_otherwise(tmp_path):
    import numpy as np

    import torchstrategy as tf

    reports = mp.run_replica_reports(tmp_path, GRADIENT_HOOK, replicas=2)
    assert reports[0] == reports[1]
    report = reports[0]
    small, large = report["small"]["calls"], report["large"]["calls"]
    assert "all_reduce" not in small and large["all_reduce"] == 3  # one gradient bucket per step
    assert small["shared memory"] == large["shared memory"] + 3  # the small model's steps took the exchange
    rng = np.random.default_rng(0)
    for name, features, units in (("small", 4, 4), ("large", 100, 200)):  # the one-process reference
        x = rng.random((24, features)).astype("float32")
        y = rng.random((24, units)).astype("float32")
        model = tf.keras.Sequential([tf.keras.Input((features,)), tf.keras.layers.Dense(units)])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.5), loss="mse")
        model.set_weights([np.array(w, dtype="float32") for w in report[name]["initial"]])
        model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
        for got, want in zip(report[name]["final"], model.get_weights()):
            np.testing.assert_allclose(np.array(got, dtype="float32"), want, rtol=1e-5, atol=1e-6, err_msg=name)
        assert not np.allclose(report[name]["final"][0], report[name]["initial"][0])  # it did train
