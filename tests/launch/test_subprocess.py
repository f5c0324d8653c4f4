"""launch_local_replicas and the parent watchdog with real processes on 127.0.0.1: the replicas' environment
and command line, and that a crash, Ctrl-C, SIGTERM or SIGKILL ends the whole job with no process left."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time

import pytest

from tests._multiprocess import (LOOPBACK, clean_env, free_port, kill_process_group, process_alive, run_python,
                                 start_python, wait_for_files, wait_until, write_script)
from torchstrategy.launch import PortInUseError, launch_local_replicas, start_parent_watchdog

# argv: OUT_DIR MODE [NUMBER]. Each rank records what it saw in OUT_DIR/rank<R>.json, then acts out MODE.
JOB = """
import json, os, socket, sys, time
from torchstrategy.launch import launch_local_replicas

out_dir, mode = sys.argv[1], sys.argv[2]
number = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3].isdigit() else None

def write(name, record):
    path = os.path.join(out_dir, name)
    with open(path + ".tmp", "w") as handle:
        json.dump(record, handle)
    os.replace(path + ".tmp", path)

if mode == "port":
    launch_local_replicas(2, master_port=number, threads_per_replica=None)
spec = launch_local_replicas(2, threads_per_replica=number if mode == "threads" else None)
names = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
         "TORCHSTRATEGY_LAUNCHED", "TORCHSTRATEGY_LAUNCHER_PID", "OMP_NUM_THREADS"]
record = {"spec": [spec.rank, spec.world_size, spec.local_rank, spec.local_world_size, spec.master_addr,
                   spec.master_port, spec.launched, spec.source, spec.launcher_pid],
          "pid": os.getpid(), "argv": sys.argv[1:], "script": os.path.abspath(sys.argv[0]),
          "main_module": getattr(sys.modules["__main__"].__spec__, "name", None), "optimize": sys.flags.optimize,
          "env": {name: os.environ.get(name) for name in names}, "stdin": sys.stdin.read()}
if mode == "threads":
    import torch
    record["torch_threads"] = torch.get_num_threads()
write(f"rank{spec.rank}.json", record)

if mode == "ok" and spec.rank == 1:
    time.sleep(0.5)  # finishes after rank 0's script: rank 0 must wait for it
    write("rank1_done.json", {})
elif mode == "child_done_early":  # a replica that ends early and cleanly is no failure
    if spec.rank == 0:
        while not os.path.exists(os.path.join(out_dir, "rank1.json")):
            time.sleep(0.05)
        time.sleep(0.6)
        write("rank0_done.json", {})
elif mode == "child_raises":
    if spec.rank == 1:
        time.sleep(0.3)
        write("raise_time.json", {"time": time.time()})
        raise RuntimeError("replica 1 failed at step 3")
    server = socket.create_server(("127.0.0.1", 0))
    server.accept()  # rank 0 stuck, as if inside a collective waiting for the dead replica
elif mode == "rank0_raises":
    if spec.rank == 0:
        while not os.path.exists(os.path.join(out_dir, "rank1.json")):
            time.sleep(0.05)
        raise RuntimeError("rank 0 failed at step 2")
    time.sleep(60)
elif mode == "wait":
    time.sleep(60)
elif mode == "stubborn":  # rank 0 ignores Ctrl-C, as if stuck in native code
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            time.sleep(deadline - time.time())
        except KeyboardInterrupt:
            pass
"""


@pytest.fixture
def job(tmp_path):
    """Runs JOB in its own process group; yields a starter; kills whatever is left afterwards."""
    script = write_script(tmp_path, JOB, name="job.py")
    started = []

    def start(mode: str, *extra: str, env=None, args=None) -> subprocess.Popen:
        process = start_python(args or [script, str(tmp_path), mode, *extra], env=env, cwd=str(tmp_path))
        started.append(process)
        return process

    yield start
    for process in started:
        kill_process_group(process)


def _records(tmp_path) -> list:
    records = []
    for rank in (0, 1):
        with open(tmp_path / f"rank{rank}.json", encoding="utf-8") as handle:
            records.append(json.load(handle))
    return records


def _wait_both_ranks(tmp_path) -> list:
    assert wait_for_files([str(tmp_path / "rank0.json"), str(tmp_path / "rank1.json")], timeout=30)
    return [record["pid"] for record in _records(tmp_path)]


def _assert_all_gone(pids, timeout: float = 5.0) -> None:
    assert wait_until(lambda: not any(process_alive(pid) for pid in pids), timeout), \
        f"processes still alive: {[pid for pid in pids if process_alive(pid)]}"


@pytest.mark.slow
def test_replicas_get_rank_environment_and_same_command_line(job, tmp_path):
    process = job("ok", "--flag=1")
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert (tmp_path / "rank1_done.json").exists()  # rank 0 waited for the slower replica
    rank0, rank1 = _records(tmp_path)
    port = rank0["spec"][5]
    assert rank0["spec"] == [0, 2, 0, 2, LOOPBACK, port, True, "torchstrategy", None]
    assert rank1["spec"] == [1, 2, 1, 2, LOOPBACK, port, True, "torchstrategy", rank0["pid"]]
    assert rank1["env"] == {"RANK": "1", "LOCAL_RANK": "1", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2",
                            "GROUP_RANK": "0", "MASTER_ADDR": LOOPBACK, "MASTER_PORT": str(port),
                            "TORCHSTRATEGY_LAUNCHED": "1", "TORCHSTRATEGY_LAUNCHER_PID": str(rank0["pid"]),
                            "OMP_NUM_THREADS": "1"}
    assert rank0["env"]["RANK"] is None  # rank 0's own environment is left alone
    assert rank1["argv"] == rank0["argv"] == [str(tmp_path), "ok", "--flag=1"]
    assert rank1["script"] == rank0["script"] == str(tmp_path / "job.py")
    assert rank1["stdin"] == ""  # replicas read /dev/null, never the terminal
    with socket.socket() as probe:  # the chosen port was free (nothing listens on it now either)
        probe.bind((LOOPBACK, port))
    _assert_all_gone([rank0["pid"], rank1["pid"]])


@pytest.mark.slow
def test_python_dash_m_is_rerun_as_a_module(job, tmp_path):
    package = tmp_path / "launchpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    write_script(package, JOB, name="job.py")
    process = job("ok", args=["-O", "-m", "launchpkg.job", str(tmp_path), "ok"])
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    rank0, rank1 = _records(tmp_path)
    assert rank0["main_module"] == rank1["main_module"] == "launchpkg.job"
    assert rank0["optimize"] == rank1["optimize"] == 1  # interpreter flags are passed on
    assert rank1["argv"] == rank0["argv"] == [str(tmp_path), "ok"]
    assert rank1["spec"][:2] == [1, 2]


@pytest.mark.slow
@pytest.mark.parametrize("user_omp, threads_per_replica", [(None, 1), ("1", 2)])
def test_threads_per_replica_unless_user_set_omp(job, tmp_path, user_omp, threads_per_replica):
    # torch caps OMP_NUM_THREADS at the core count, so expected counts stay at or below the default.
    env = clean_env()
    env.pop("OMP_NUM_THREADS")
    if user_omp is not None:
        env["OMP_NUM_THREADS"] = user_omp
    process = job("threads", str(threads_per_replica), env=env)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    rank0, rank1 = _records(tmp_path)
    expected = threads_per_replica if user_omp is None else int(user_omp)
    assert rank1["env"]["OMP_NUM_THREADS"] == str(expected)
    assert rank0["env"]["OMP_NUM_THREADS"] == user_omp  # rank 0's environment is not rewritten
    assert rank0["torch_threads"] == rank1["torch_threads"] == expected


@pytest.mark.slow
def test_replica_ending_early_and_cleanly_is_not_a_failure(job, tmp_path):
    process = job("child_done_early")
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert (tmp_path / "rank0_done.json").exists()
    assert "torchstrategy:" not in err


@pytest.mark.slow
def test_replica_raising_ends_the_job_with_its_error(job, tmp_path):
    process = job("child_raises")
    pids = _wait_both_ranks(tmp_path)
    _, err = process.communicate(timeout=40)
    ended = time.time()
    raised = json.loads((tmp_path / "raise_time.json").read_text())["time"]
    assert process.returncode != 0
    assert ended - raised < 30
    assert "RuntimeError: replica 1 failed at step 3" in err  # the replica's traceback reaches the user
    assert f"replica 1 (pid {pids[1]}) exited with code 1; stopping the other replicas" in err
    _assert_all_gone(pids)


@pytest.mark.slow
def test_rank0_raising_stops_the_replicas(job, tmp_path):
    process = job("rank0_raises")
    pids = _wait_both_ranks(tmp_path)
    started = time.monotonic()
    _, err = process.communicate(timeout=40)
    assert process.returncode != 0
    assert "RuntimeError: rank 0 failed at step 2" in err
    assert time.monotonic() - started < 15  # the replica would otherwise sleep 60 s
    _assert_all_gone(pids)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["sigint_to_group", "sigterm_to_rank0", "sigkill_to_rank0"])
def test_signals_leave_no_process_behind(job, tmp_path, how):
    process = job("wait")
    pids = _wait_both_ranks(tmp_path)
    started = time.monotonic()
    if how == "sigint_to_group":
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    else:
        process.send_signal(signal.SIGTERM if how == "sigterm_to_rank0" else signal.SIGKILL)
    _, err = process.communicate(timeout=30)
    assert process.returncode != 0
    _assert_all_gone(pids)
    assert time.monotonic() - started < 10
    if how == "sigint_to_group":  # rank 0 reports the interrupt; the replica dies quietly
        assert err.count("KeyboardInterrupt") == 1, err


@pytest.mark.slow
def test_ctrl_c_twice_stops_a_rank0_that_ignores_it(job, tmp_path):
    process = job("stubborn")
    pids = _wait_both_ranks(tmp_path)
    os.killpg(process.pid, signal.SIGINT)
    time.sleep(0.5)
    assert process.poll() is None  # one Ctrl-C: rank 0 still has its grace period
    started = time.monotonic()
    os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGINT
    assert "interrupted again; stopping all replicas now" in err
    assert time.monotonic() - started < 5
    _assert_all_gone(pids)


@pytest.mark.slow
def test_given_port_in_use_is_a_clear_error(job, tmp_path):
    with socket.create_server((LOOPBACK, 0)) as busy:
        port = busy.getsockname()[1]
        process = job("port", str(port))
        _, err = process.communicate(timeout=30)
    assert process.returncode != 0
    assert f"PortInUseError: master_port {port} on {LOOPBACK} is already in use" in err
    assert "leave master_port unset" in err
    assert not (tmp_path / "rank1.json").exists()  # nothing was started


@pytest.mark.slow
def test_given_free_port_is_used(job, tmp_path):
    port = free_port()
    process = job("port", str(port))
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert [record["spec"][5] for record in _records(tmp_path)] == [port, port]


@pytest.mark.slow
def test_python_dash_c_is_refused():
    result = run_python(["-c", "from torchstrategy.launch import launch_local_replicas; launch_local_replicas(2)"],
                        timeout=30)
    assert result.returncode != 0
    assert "not started from a script file" in result.stderr
    assert "torchrun --nproc_per_node=N" in result.stderr


@pytest.mark.slow
def test_already_launched_jobs_start_nothing(tmp_path):
    script = write_script(tmp_path, "from torchstrategy.launch import launch_local_replicas\n"
                                    "launch_local_replicas(2)\n")
    under_torchrun = run_python([script], env=clean_env(RANK="0", WORLD_SIZE="2", LOCAL_RANK="0"), timeout=30)
    assert under_torchrun.returncode != 0
    assert "set all six" in under_torchrun.stderr  # a partial torchrun environment is named, not ignored
    full = clean_env(RANK="0", WORLD_SIZE="2", LOCAL_RANK="0", LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                     MASTER_PORT="1234")
    complete = run_python([script], env=full, timeout=30)
    assert complete.returncode != 0
    assert "already part of a launched job (found by its torchrun environment)" in complete.stderr
    wrong_count = run_python([script], timeout=30, env=clean_env(
        TORCHSTRATEGY_LAUNCHED="1", TORCHSTRATEGY_LAUNCHER_PID=str(os.getpid()), RANK="1", LOCAL_RANK="1",
        WORLD_SIZE="3", LOCAL_WORLD_SIZE="3", MASTER_ADDR="127.0.0.1", MASTER_PORT="1234"))
    assert wrong_count.returncode != 0
    assert "launched as one of 3 replicas, but the program now asks for 2" in wrong_count.stderr


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="num_replicas must be a positive int; got 0"):
        launch_local_replicas(0)
    with pytest.raises(ValueError, match="master_port must be a TCP port number in 1..65535"):
        launch_local_replicas(2, master_port=70000)
    with pytest.raises(ValueError, match="threads_per_replica must be a positive int"):
        launch_local_replicas(2, threads_per_replica=0)
    with pytest.raises(ValueError, match="launcher_pid must be the process id"):
        start_parent_watchdog(0)
    assert issubclass(PortInUseError, RuntimeError)


WATCHER = """
import os, sys, time
from torchstrategy.launch import start_parent_watchdog
start_parent_watchdog(int(sys.argv[1]), poll_interval=0.1)
open(sys.argv[2], "w").close()
time.sleep(60)
"""


@pytest.mark.slow
def test_watchdog_ends_a_replica_whose_launcher_is_gone(tmp_path):
    # The launcher here is not the watcher's parent, so only the polling thread can notice.
    script = write_script(tmp_path, WATCHER, name="watcher.py")
    launcher = subprocess.Popen(["sleep", "60"])
    watcher = start_python([script, str(launcher.pid), str(tmp_path / "ready")])
    try:
        assert wait_for_files([str(tmp_path / "ready")], timeout=30)
        assert watcher.poll() is None
        launcher.kill()
        launcher.wait()
        started = time.monotonic()
        _, err = watcher.communicate(timeout=10)
        assert watcher.returncode == 1
        assert time.monotonic() - started < 3
        assert f"the launching process (rank 0, pid {launcher.pid}) is gone" in err
        # Started after its launcher died: exits at once, before running anything else.
        late = run_python([script, str(launcher.pid), str(tmp_path / "late")], timeout=30)
        assert late.returncode == 1
        assert not (tmp_path / "late").exists()
    finally:
        launcher.kill()
        launcher.wait()
        kill_process_group(watcher)


@pytest.mark.slow
def test_every_task_of_a_cluster_gets_its_block_of_ranks():
    from torchstrategy.cluster.spec import ProcessSpec
    from torchstrategy.launch.subprocess import task_replica_placements

    # the worker task of a chief + 2 workers cluster (rank 2 of 3), 4 local devices per task
    worker = ProcessSpec(world_size=3, rank=2, master_port=1234, launched=True, source="tf_config")
    placements = task_replica_placements(worker, 4)
    assert [p["RANK"] for p in placements] == [9, 10, 11]  # rank 8 stays in the task's own process
    assert {p["WORLD_SIZE"] for p in placements} == {12}
    assert [p["LOCAL_RANK"] for p in placements] == [1, 2, 3]
    assert {(p["GROUP_RANK"], p["GROUP_WORLD_SIZE"], p["LOCAL_WORLD_SIZE"]) for p in placements} == {(2, 3, 4)}
    replica = ProcessSpec(world_size=12, rank=9, local_rank=1, local_world_size=4, node_rank=2, num_nodes=3,
                          launched=True, source="torchstrategy")
    assert (replica.task_processes, replica.num_tasks, replica.task_rank) == (4, 3, 2)
