"""The shared-memory exchange between 2 real processes on this machine: its gathers equal gloo's all-gather of
the same tensors, round after round; it fails at once, naming the rank, when a peer exits, and with "timed out"
when a live peer never comes; processes that cannot all map the segment all take the process group; no file is
left in the shared-memory directory."""
from __future__ import annotations

import json
import os

import pytest

from tests import _multiprocess as mp
from torchstrategy.distribute.parts import local_exchange

pytestmark = pytest.mark.skipif(not local_exchange.supported(), reason="no x86-64 Linux shared memory here")

SCRIPT = r'''
import json, os, random, sys, time
import torch
import torch.distributed as dist
from torchstrategy.distribute.parts import local_exchange

rank, port, out, case, shm_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
torch.set_num_threads(1)
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
local_exchange.SHM_DIR = shm_dir if case != "apart" else os.path.join(shm_dir, f"rank{rank}")
os.makedirs(local_exchange.SHM_DIR, exist_ok=True)

def share(value):
    gathered = [None, None]
    dist.all_gather_object(gathered, value)
    return gathered

exchange = local_exchange.open_exchange(rank, 2, 2.0 if case == "stalled" else 60.0, share)
report = {"open": exchange is not None, "files": sorted(os.listdir(local_exchange.SHM_DIR))}
if case == "values":
    rng = random.Random(rank)
    rounds = []
    for step in range(200):  # both slots reused many times; sometimes one process is late
        if rng.random() < 0.1:
            time.sleep(rng.random() * 0.003)
        dtype = [torch.float32, torch.int64, torch.uint8, torch.float64, torch.bool, torch.bfloat16][step % 6]
        shape = [(3,), (2, 5), (0,), (1,), (4, 1, 2)][step % 5]
        local = (torch.arange(int(torch.tensor(shape).prod())) * (rank + 1) + step).reshape(shape).to(dtype)
        mine = exchange.gather(local)
        raw = local.reshape(-1).view(torch.uint8)  # the reference: gloo's gather of the same bytes
        reference = torch.empty(2 * raw.numel(), dtype=torch.uint8)
        if raw.numel():
            dist.all_gather_into_tensor(reference, raw)
        rounds.append(mine.dtype == dtype and tuple(mine.shape) == (2,) + tuple(shape) and bool(
            torch.equal(mine.reshape(-1).view(torch.uint8), reference)))
    big = torch.full((local_exchange.SLOT_BYTES // 8,), float(rank), dtype=torch.float64)
    report["full_slot"] = exchange.gather(big)[:, -1].tolist()
    report["rounds"] = rounds
    try:
        exchange.gather(torch.zeros(local_exchange.SLOT_BYTES + 1, dtype=torch.uint8))
    except ValueError as error:
        report["too_big"] = str(error)
    report["mismatch"] = None
    try:
        exchange.gather(torch.zeros(3 + rank, dtype=torch.uint8))
    except RuntimeError as error:
        report["mismatch"] = str(error)
elif case in ("exited", "stalled"):
    exchange.gather(torch.ones(2))
    if rank == 1:
        with open(os.path.join(out, "report_1.json"), "w") as f:
            json.dump(report, f)
        if case == "exited":
            os._exit(0)
        time.sleep(30)  # alive, never coming (the test ends it once rank 0 has reported)
        os._exit(0)
    began = time.perf_counter()
    try:
        exchange.gather(torch.ones(2))
        report["error"] = None
    except RuntimeError as error:
        report["error"] = str(error)
    report["waited"] = time.perf_counter() - began
    with open(os.path.join(out, "report_0.json"), "w") as f:
        json.dump(report, f)
    os._exit(0)
if exchange is not None:
    exchange.close()
report["files_at_end"] = sorted(os.listdir(local_exchange.SHM_DIR))
with open(os.path.join(out, f"report_{rank}.json"), "w") as f:
    json.dump(report, f)
dist.barrier()
dist.destroy_process_group()
'''


def _run(tmp_path, case: str, shm_dir: str) -> list:
    script = mp.write_script(str(tmp_path), SCRIPT, "exchange.py")
    port = str(mp.free_port())
    env = mp.clean_env()
    processes = [mp.start_python([script, str(rank), port, str(tmp_path), case, shm_dir], env=env) for rank in (0, 1)]
    try:
        processes[0].wait(timeout=60)
        if case != "stalled":
            processes[1].wait(timeout=60)
    finally:
        for process in processes:
            mp.kill_process_group(process)
    return [json.loads((tmp_path / f"report_{rank}.json").read_text()) for rank in (0, 1)]


@pytest.fixture
def shm_dir(tmp_path):
    # a private directory under the real shared-memory one (tmpfs), so that leftovers are this test's own
    path = os.path.join(local_exchange.SHM_DIR, f"torchstrategy-test-{os.getpid()}-{tmp_path.name}")
    os.makedirs(path)
    yield path
    for name in os.listdir(path):
        os.unlink(os.path.join(path, name))
    os.rmdir(path)


@pytest.mark.slow
def test_gathers_equal_gloo_round_after_round_and_leave_no_file(tmp_path, shm_dir):
    reports = _run(tmp_path, "values", shm_dir)
    for rank, report in enumerate(reports):
        assert report["open"], rank
        assert report["files"] == [] and report["files_at_end"] == []  # unlinked once both had mapped it
        assert len(report["rounds"]) == 200 and all(report["rounds"]), rank
        assert report["full_slot"] == [0.0, 1.0]
        assert "at most 65536 bytes" in report["too_big"]
        assert "different collectives" in report["mismatch"] and "rank" in report["mismatch"]


@pytest.mark.slow
def test_processes_that_cannot_all_map_the_segment_all_take_the_group(tmp_path, shm_dir):
    reports = _run(tmp_path, "apart", shm_dir)  # rank 1 looks for the segment in another directory
    assert [report["open"] for report in reports] == [False, False]
    assert os.listdir(os.path.join(shm_dir, "rank0")) == [] and os.listdir(os.path.join(shm_dir, "rank1")) == []
    for name in ("rank0", "rank1"):
        os.rmdir(os.path.join(shm_dir, name))


@pytest.mark.slow
def test_a_peer_that_exits_fails_the_wait_at_once(tmp_path, shm_dir):
    report = _run(tmp_path, "exited", shm_dir)[0]
    assert report["open"]
    assert "Process rank 1" in report["error"] and "exited" in report["error"]
    assert report["waited"] < 5


@pytest.mark.slow
def test_a_peer_that_never_comes_times_out(tmp_path, shm_dir):
    report = _run(tmp_path, "stalled", shm_dir)[0]
    assert "Timed out waiting 2000ms for process rank(s) 1" in report["error"]
    assert 2.0 <= report["waited"] < 10


def test_the_segment_holds_two_slots_per_process():
    assert local_exchange.SharedMemoryExchange.size(2) == 16 + 4 * (16 + local_exchange.SLOT_BYTES)
