"""Forming a parameter-server job before its RPC group starts: ps 0's rendezvous store, reached within a
deadline, and a roll call that names the tasks that never came instead of waiting for them without end."""
from __future__ import annotations

import socket
import threading
import time
from datetime import timedelta
from typing import Any, Optional

from torchstrategy.cluster.environment import PS_STARTUP_TIMEOUT_VARIABLE
from torchstrategy.cluster.ps import PSClusterLayout

#: A TCPStore answers a new client in milliseconds: a listener silent this long is some other program.
HANDSHAKE_SECONDS = 5.0
#: Seconds between looks at who has arrived.
POLL_SECONDS = 0.1
#: Seconds a store call may take once connected (set, check, get of a few bytes).
STORE_CALL_SECONDS = 30.0

_PREFIX = "torchstrategy/ps_startup"
_ABORT_KEY = f"{_PREFIX}/abort"


def _present_key(name: str) -> str:
    return f"{_PREFIX}/present/{name}"


def _first_line(error: BaseException) -> str:
    text = str(error)
    return text.splitlines()[0] if text else type(error).__name__


def _advice(timeout: float) -> str:
    return (f"Start every task of the cluster spec (TF_CONFIG) with its own job and index, or set "
            f"{PS_STARTUP_TIMEOUT_VARIABLE} (now {timeout:g} s) to wait longer.")


def open_store(layout: PSClusterLayout, timeout: float, deadline: float) -> Any:
    """ps 0 hosts the job's rendezvous store at its address from the spec; every other task connects to it by
    `deadline` (time.monotonic()). RuntimeErrors name the task and address: ps 0's port taken, ps 0 absent,
    or something else answering on ps 0's port."""
    import torch.distributed as dist

    host, port = layout.master_addr, layout.master_port
    if layout.rank == 0:
        try:  # multi-tenant: the RPC group's own rendezvous (init_rpc) shares this server
            return dist.TCPStore(host, port, is_master=True, multi_tenant=True, wait_for_workers=False,
                                 timeout=timedelta(seconds=STORE_CALL_SECONDS))
        except RuntimeError as error:
            taken = "EADDRINUSE" in str(error) or "in use" in str(error)
            raise RuntimeError(
                f"{layout.name} (job 'ps', task 0) cannot listen at {host}:{port}"
                f"{': the port is taken by another program (EADDRINUSE)' if taken else ''}: {_first_line(error)}. "
                f"Free the port or give ps 0 another address in the cluster spec (TF_CONFIG): ps 0 hosts the "
                f"job's rendezvous there, so no task of the job can start without it.") from error
    where = layout.describe(layout.names[0])
    while True:
        try:  # a plain connect first: nothing there yet is no error until the deadline (and logs nothing)
            socket.create_connection((host, port), timeout=max(0.2, min(2.0, deadline - time.monotonic()))).close()
        except OSError as error:
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"{layout.name} gave up waiting for {where}, which hosts the job's rendezvous: nothing answered "
                    f"there within {timeout:g} s ({error.strerror or error}). {_advice(timeout)}") from None
            time.sleep(POLL_SECONDS)
            continue
        store = _client_within(host, port, HANDSHAKE_SECONDS)
        if store is not None:
            return store
        raise RuntimeError(
            f"{layout.name}: something at {host}:{port}, the address of {where}, accepts connections but does not "
            f"answer as the job's rendezvous within {HANDSHAKE_SECONDS:g} s: another program has ps 0's port (ps 0 "
            f"then exits saying EADDRINUSE). Free the port or give ps 0 another address in the cluster spec.")


def _client_within(host: str, port: int, seconds: float) -> Optional[Any]:
    """A TCPStore client of host:port, or None when its handshake does not end within `seconds` (a TCPStore
    client waits without end on a listener that never answers, so it is made in a thread left behind then)."""
    import torch.distributed as dist

    box: dict = {}

    def connect() -> None:
        try:
            box["store"] = dist.TCPStore(host, port, is_master=False, wait_for_workers=False,
                                         timeout=timedelta(seconds=STORE_CALL_SECONDS))
        except Exception as error:  # noqa: BLE001 - reported as no answer
            box["error"] = error

    thread = threading.Thread(target=connect, name="torchstrategy-ps-rendezvous", daemon=True)
    thread.start()
    thread.join(seconds)
    return box.get("store")


def roll_call(store: Any, layout: PSClusterLayout, timeout: float, deadline: float) -> None:
    """Says this task is here and waits until every task of the layout is, or raises by `deadline` naming the
    missing ones and their addresses (and tells the others, which then stop as well, saying why)."""
    me = layout.name
    others = [name for name in layout.names if name != me]
    missing = list(others)
    try:
        store.set(_present_key(me), "1")
        while True:
            if store.check([_ABORT_KEY]):
                reason = store.get(_ABORT_KEY).decode()
                raise RuntimeError(f"{me} stops: the parameter-server job did not start ({reason}). "
                                   f"{_advice(timeout)}")
            if store.check([_present_key(name) for name in missing]):
                return
            missing = [name for name in missing if not store.check([_present_key(name)])]
            if not missing:
                return
            if time.monotonic() >= deadline:
                break
            time.sleep(POLL_SECONDS)
    except RuntimeError as error:
        if str(error).startswith(f"{me} stops:"):
            raise
        raise RuntimeError(
            f"{me}: {layout.describe(layout.names[0])}, which hosts the job's rendezvous, stopped answering while "
            f"the job was starting ({_first_line(error)}); not there yet: "
            f"{', '.join(layout.describe(name) for name in missing)}.") from None
    absent = ", ".join(layout.describe(name) for name in missing)
    reason = f"{me} gave up after {timeout:g} s: {absent} did not start"
    try:
        store.set(_ABORT_KEY, reason)
    except RuntimeError:
        pass
    if layout.rank == 0:  # the others read the reason from this task's store: let them, before it closes
        time.sleep(3 * POLL_SECONDS)
    raise RuntimeError(f"The parameter-server job cannot start: {absent} did not start within {timeout:g} s "
                       f"(seen from {me}). {_advice(timeout)}")
