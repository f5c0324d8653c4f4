"""The process-group collectives on 2 real gloo processes: a small object travels in one collective (a
fixed-size buffer), a large one in torch's sized object collectives, and the two mix without a hang;
predict's gathered batches come back in global batch order."""
from __future__ import annotations

import pytest

from tests import _multiprocess as mp

SCRIPT = r'''
import collections, json, os, sys
import torch
import torch.distributed as dist
import torchstrategy as tf

out, replicas = sys.argv[1], int(sys.argv[2])
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
rank = strategy.process_rank
calls = collections.Counter()
for name in ("all_gather", "broadcast", "all_gather_object", "broadcast_object_list"):
    def counted(*args, _original=getattr(dist, name), _name=name, **kwargs):
        calls[_name] += 1
        return _original(*args, **kwargs)
    setattr(dist, name, counted)

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
with open(os.path.join(out, f"report_{rank}.json"), "w") as f:
    json.dump(report, f)
'''


@pytest.mark.slow
def test_small_objects_take_one_collective_and_large_ones_still_arrive(tmp_path):
    reports = mp.run_replica_reports(tmp_path, SCRIPT, replicas=2)
    for rank, report in enumerate(reports):
        small = report["gather_small"]
        assert small["value"] == [{"rank": 0, "stats": [1.5, 0.0]}, {"rank": 1, "stats": [1.5, 1.0]}]
        assert small["calls"] == {"all_gather": 1}
        big = report["gather_big"]
        assert big["value"] == ["010001", "110001"]
        assert big["calls"] == {"all_gather": 1, "all_gather_object": 1}
        assert report["gather_mixed"]["value"] == [5, 10001]
        assert report["gather_mixed"]["calls"] == {"all_gather": 1, "all_gather_object": 1}
        assert report["broadcast_small"]["value"] == {"from": 1}
        assert report["broadcast_small"]["calls"] == {"broadcast": 1}
        assert report["broadcast_big"]["value"] == "0"
        assert report["broadcast_big"]["calls"] == {"broadcast": 2, "broadcast_object_list": 2}
        assert report["broadcast_none"] == {"value": None, "calls": {"broadcast": 1}}
        # global batch order: batch 0 (rank 0's rows, then rank 1's), then batch 1
        gathered = report["gather_batches"]
        assert gathered["value"] == [0.0, 0.0, 1.0, 1.0, 10.0, 11.0, 11.0], rank
        assert gathered["calls"] == {"all_gather": 2}  # the row counts (one small object), then the rows
