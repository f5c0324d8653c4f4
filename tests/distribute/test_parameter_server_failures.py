"""A parameter-server job whose tasks are missing or die ends within seconds, naming the task (job, index,
address): a ps port taken by another program, a task never started, a ps SIGKILLed mid-training; plus the
errors that carry these reports across processes (they must survive pickling)."""
from __future__ import annotations

import json
import os
import pickle
import queue
import signal
import socket
import threading
import time

import pytest

from tests._multiprocess import clean_env, free_port, start_python, wait_until, write_script

# One script for every task, as a user launches a TF_CONFIG job: worker and ps tasks serve, the chief trains
# (MODE picks how) and prints what it did; it ends by an error only.
JOB = '''
import json, os, sys, time
import torch
import torchstrategy as tf

resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
if resolver.task_type in ("worker", "ps"):
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                  task_index=resolver.task_id, protocol="grpc", start=True)
    server.join()
    sys.exit(0)
started = time.monotonic()
strategy = tf.distribute.ParameterServerStrategy(resolver)
print("formed", flush=True)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.01)
coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
x = torch.ones(8, 4)

def step():
    time.sleep(0.005)
    with tf.GradientTape() as tape:
        loss = (model(x) ** 2).mean()
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss

for round in range(3):
    for _ in range(10):
        coordinator.schedule(step)
    coordinator.join()
if MODE == "idle":  # closures that touch no variable: only a heartbeat can notice a lost ps while they run
    for _ in range(2):
        coordinator.schedule(time.sleep, args=(60,))
print("trained", flush=True)
try:
    while True:
        if MODE == "train":
            for _ in range(10):
                coordinator.schedule(step)
        coordinator.join()
except Exception:
    print("failed at", time.time(), flush=True)  # the wall clock, which the test's own can be compared with
    raise
'''


def _start_job(tmp_path, mode: str, workers: int = 2, skip: tuple = (), env: dict = None, ps_port: int = None):
    """Starts a TF_CONFIG job on 127.0.0.1 (chief, `workers` workers, 1 ps on `ps_port` or a free port; each
    task a process of its own, the tasks in `skip` never started); returns ({task: process}, cluster dict)."""
    cluster = {"chief": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}" for _ in range(workers)],
               "ps": [f"127.0.0.1:{ps_port or free_port()}"]}
    script = write_script(tmp_path, f"MODE = {mode!r}\n" + JOB)
    processes = {}
    for job in ("ps", "worker", "chief"):
        for index in range(len(cluster[job])):
            if f"{job}:{index}" in skip:
                continue
            config = json.dumps({"cluster": cluster, "task": {"type": job, "index": index}})
            processes[f"{job}:{index}"] = start_python([script], env=clean_env(TF_CONFIG=config, **(env or {})),
                                                       cwd=str(tmp_path))
    return processes, cluster


def _wait_all(processes: dict, timeout: float) -> bool:
    return wait_until(lambda: all(p.poll() is not None for p in processes.values()), timeout=timeout, interval=0.1)


def _stderr(processes: dict) -> dict:
    """Each process's stderr (whatever still runs is killed first)."""
    out = {}
    for name, process in processes.items():
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process.wait(timeout=30)
        out[name] = process.stderr.read()
        process.stderr.close()
    return out


@pytest.mark.slow
def test_a_ps_whose_port_is_taken_exits_and_the_job_ends_naming_it(tmp_path):
    """Another program listens on ps:0's port: ps:0 says so and exits, and the chief (and the workers) give up
    within seconds, naming ps:0 and its address, although the start-up deadline is a minute."""
    blocker = socket.socket()  # another program, listening on the port ps:0 is given
    try:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        processes, _ = _start_job(tmp_path, "train", env={"TORCHSTRATEGY_PS_STARTUP_TIMEOUT": "60"}, ps_port=port)
        ended = _wait_all(processes, timeout=40)
        codes = {name: p.poll() for name, p in processes.items()}
        errors = _stderr(processes)
    finally:
        blocker.close()
    assert ended, f"still running 40 s after the start: {[n for n, c in codes.items() if c is None]}"
    address = f"127.0.0.1:{port}"
    assert codes["ps:0"] != 0 and "ps:0" in errors["ps:0"] and address in errors["ps:0"], errors["ps:0"][-2000:]
    assert "EADDRINUSE" in errors["ps:0"] or "in use" in errors["ps:0"], errors["ps:0"][-2000:]
    assert codes["chief:0"] != 0, errors["chief:0"][-2000:]
    assert f"ps:0 at {address}" in errors["chief:0"], errors["chief:0"][-2000:]
    for worker in ("worker:0", "worker:1"):
        assert codes[worker] != 0 and f"ps:0 at {address}" in errors[worker], errors[worker][-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("missing", ["worker:1", "ps:0"])
def test_a_task_never_started_ends_the_job_after_the_start_up_deadline_naming_it(tmp_path, missing):
    """One task never comes: after TORCHSTRATEGY_PS_STARTUP_TIMEOUT seconds the chief gives up naming it and
    its address, and the tasks that did come stop too."""
    processes, cluster = _start_job(tmp_path, "train", skip=(missing,), env={"TORCHSTRATEGY_PS_STARTUP_TIMEOUT": "4"})
    ended = _wait_all(processes, timeout=40)
    codes = {name: p.poll() for name, p in processes.items()}
    errors = _stderr(processes)
    assert ended, f"still running 40 s after the start: {[n for n, c in codes.items() if c is None]}"
    job, index = missing.split(":")
    address = cluster[job][int(index)]
    assert codes["chief:0"] != 0, errors["chief:0"][-2000:]
    assert f"{missing} at {address}" in errors["chief:0"], errors["chief:0"][-2000:]
    assert "TORCHSTRATEGY_PS_STARTUP_TIMEOUT" in errors["chief:0"], errors["chief:0"][-2000:]
    for name in processes:
        assert codes[name] != 0 and missing in errors[name], (name, errors[name][-2000:])


def _kill_ps_after_training(tmp_path, mode: str) -> tuple:
    """Starts a job, SIGKILLs its ps once the chief has trained a while; (seconds from the kill until the chief
    raised, exit codes, stderr of each task, whether every task ended, the ps address)."""
    processes, cluster = _start_job(tmp_path, mode)
    chief, took, ended = processes["chief:0"], None, False
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in chief.stdout], daemon=True)
    reader.start()
    try:
        line = ""
        while not line.startswith("trained") and chief.poll() is None:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                pass
        if line.startswith("trained"):
            time.sleep(0.3)
            os.kill(processes["ps:0"].pid, signal.SIGKILL)
            killed = time.time()
            try:  # the chief's next line is the time of its error
                line = lines.get(timeout=30)
            except queue.Empty:
                line = ""
            if line.startswith("failed at"):
                took = float(line.split()[-1]) - killed
            ended = _wait_all(processes, timeout=30)  # exits, whatever the interpreters' own shutdown takes
        codes = {name: p.poll() for name, p in processes.items()}
    finally:
        errors = _stderr(processes)
    assert took is not None, f"the chief did not fail: {errors['chief:0'][-3000:]}"
    return took, codes, errors, ended, cluster["ps"][0]


@pytest.mark.slow
def test_a_ps_killed_mid_training_fails_the_job_within_seconds_naming_it(tmp_path):
    """SIGKILL of the ps while workers send it updates: the closures fail, the chief raises an error naming
    'ps:0 at ADDRESS' within seconds (not the TypeError of an error that could not be unpickled)."""
    took, codes, errors, others_ended, address = _kill_ps_after_training(tmp_path, "train")
    assert codes["chief:0"] not in (None, 0), errors["chief:0"][-3000:]
    assert took < 5, f"the chief raised {took:.1f} s after the kill"
    assert f"ps:0 at {address}" in errors["chief:0"] and "BackupAndRestore" in errors["chief:0"], errors["chief:0"][-3000:]
    assert "TypeError" not in errors["chief:0"], errors["chief:0"][-3000:]
    assert others_ended, {name: code for name, code in codes.items()}


@pytest.mark.slow
def test_a_ps_killed_while_no_closure_touches_it_is_noticed_by_the_heartbeat(tmp_path):
    """SIGKILL of the ps while the workers run long closures that use no variable: the chief's join() raises
    within seconds (its heartbeat notices), without waiting for the closures."""
    took, codes, errors, others_ended, address = _kill_ps_after_training(tmp_path, "idle")
    assert codes["chief:0"] not in (None, 0), errors["chief:0"][-3000:]
    assert took < 5, f"the chief raised {took:.1f} s after the kill"
    assert f"ps:0 at {address}" in errors["chief:0"], errors["chief:0"][-3000:]
    assert others_ended, {name: code for name, code in codes.items()}


# ----- the errors that carry these reports --------------------------------------------------------------
def test_an_rpc_error_survives_pickling_as_torch_rpc_re_raises_it():
    from torchstrategy.distribute.parts.rpc_group import RpcError

    error = RpcError("ps:0", ConnectionResetError("EOF: end of file"), address="127.0.0.1:2222")
    error.add_note("seen on worker:1")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is RpcError and str(copy) == str(error)
    assert (copy.task, copy.address) == ("ps:0", "127.0.0.1:2222")
    assert "ps:0 at 127.0.0.1:2222" in str(copy) and "EOF: end of file" in str(copy)
    assert copy.__notes__ == ["seen on worker:1"]


class _NeedsTwoArguments(Exception):
    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")
        self.code = code


def test_a_closure_error_that_cannot_be_rebuilt_travels_as_its_description():
    """An exception whose __init__ needs arguments pickles but cannot be unpickled: the worker sends its type,
    message and traceback instead, and the coordinator raises that."""
    import cloudpickle

    from torchstrategy.distribute.parameter_server import WorkerStrategy
    from torchstrategy.distribute.parts.closures import WorkerService
    from torchstrategy.distribute.parts.variable_store import VariableClient

    def fails():
        raise _NeedsTwoArguments(7, "bad input")

    def fails_plainly():
        raise ValueError("plain")

    service = WorkerService(WorkerStrategy(), VariableClient(None), "worker:0")
    status, failure = service.run(cloudpickle.dumps((fails, (), {})), {})
    assert status == "error"
    error = pickle.loads(pickle.dumps(failure)).exception()
    assert "_NeedsTwoArguments: 7: bad input" in str(error) and "in fails" in "".join(error.__notes__)
    status, failure = service.run(cloudpickle.dumps((fails_plainly, (), {})), {})
    error = pickle.loads(pickle.dumps(failure)).exception()
    assert type(error) is ValueError and str(error) == "plain"  # errors that can travel keep their type


# ----- the start-up checks, in this process (a store on a free port, a listener that never answers) ------------
def _layout(task_type, task_id, ps_port):
    import torchstrategy as tf
    from torchstrategy.cluster.ps import ps_layout

    spec = tf.train.ClusterSpec({"chief": [f"127.0.0.1:{free_port()}"], "worker": ["127.0.0.1:1001"],
                                 "ps": [f"127.0.0.1:{ps_port}"]})
    return ps_layout(spec, task_type, task_id, where="test")


def test_a_listener_that_does_not_answer_on_ps0s_port_is_named_within_seconds(monkeypatch):
    from torchstrategy.distribute.parts import rpc_startup

    monkeypatch.setattr(rpc_startup, "HANDSHAKE_SECONDS", 0.5)
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(RuntimeError, match=f"ps:0 at 127.0.0.1:{port}.*another program has ps 0's port"):
            rpc_startup.open_store(_layout("worker", 0, port), 60, time.monotonic() + 60)
        assert time.monotonic() - started < 5  # not the minute of the deadline
        with pytest.raises(RuntimeError, match=f"ps:0 \\(job 'ps', task 0\\) cannot listen at 127.0.0.1:{port}: "
                                               f"the port is taken by another program \\(EADDRINUSE\\)"):
            rpc_startup.open_store(_layout("ps", 0, port), 60, time.monotonic() + 60)


def test_nothing_at_ps0s_address_is_an_error_naming_it_at_the_deadline():
    from torchstrategy.distribute.parts import rpc_startup

    port = free_port()
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=f"chief gave up waiting for ps:0 at 127.0.0.1:{port}.*within 0.5 s.*"
                                           f"TORCHSTRATEGY_PS_STARTUP_TIMEOUT"):
        rpc_startup.open_store(_layout("chief", 0, port), 0.5, time.monotonic() + 0.5)
    assert time.monotonic() - started < 3


def test_the_roll_call_names_the_tasks_that_never_came_and_tells_the_others():
    from torchstrategy.distribute.parts import rpc_startup

    port = free_port()
    ps = _layout("ps", 0, port)
    host = rpc_startup.open_store(ps, 5, time.monotonic() + 5)  # ps:0's store, in this process
    outcome = {}

    def ps_roll_call():  # ps:0 came and waits for the others
        try:
            rpc_startup.roll_call(host, ps, 60, time.monotonic() + 60)
        except RuntimeError as error:
            outcome["ps"] = (str(error), time.monotonic())

    waiting = threading.Thread(target=ps_roll_call)
    waiting.start()
    chief = _layout("chief", 0, port)
    store = rpc_startup.open_store(chief, 5, time.monotonic() + 5)
    time.sleep(0.2)
    with pytest.raises(RuntimeError, match=r"start: worker:0 at 127.0.0.1:1001 did not start within 0.5 s \(seen "
                                           r"from chief\).*TORCHSTRATEGY_PS_STARTUP_TIMEOUT"):
        rpc_startup.roll_call(store, chief, 0.5, time.monotonic() + 0.5)
    gave_up = time.monotonic()
    waiting.join(10)
    # the chief's verdict reached ps:0, which stopped at once (not after its own minute), saying why
    message, stopped = outcome["ps"]
    assert message.startswith("ps:0 stops: the parameter-server job did not start (chief gave up after 0.5 s: "
                              "worker:0 at 127.0.0.1:1001 did not start)"), message
    assert stopped - gave_up < 2
