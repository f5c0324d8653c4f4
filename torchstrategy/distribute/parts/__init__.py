"""The small pieces a Strategy is composed of, one job each, and the protocols they follow:
collectives (process group or replica threads), launcher, precision, checkpoint IO, batch placement."""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from torchstrategy.distribute.parts.checkpoint_io import FullStateIO
from torchstrategy.distribute.parts.collectives import ProcessGroupCollectives, SingleReplicaCollectives
from torchstrategy.distribute.parts.launcher import ClusterLauncher, RerunScriptLauncher, expand_task
from torchstrategy.distribute.parts.placement import BatchPlacement
from torchstrategy.distribute.parts.precision import StepPrecision
from torchstrategy.distribute.parts.replication import DDPReplication, LocalReplication
from torchstrategy.distribute.parts.stepping import LocalStepping, ScheduledStepping
from torchstrategy.distribute.parts.threads import ReplicaThreads


@runtime_checkable
class Collectives(Protocol):
    """Combines values over replicas. Methods marked (replica) run inside `strategy.run`, once per local
    replica; the others run once per process, on values that already cover that process's replicas."""

    num_replicas: int
    num_local_replicas: int
    num_step_replicas: int  # replica steps sharing one global batch's loss (1 on an SPMD mesh)
    num_input_workers: int  # the TF tasks reading one input pipeline each
    loss_multiplier: float  # a replica's loss times this before backward, so gradients sum over replicas
    process_rank: int
    num_processes: int
    progress: Any  # this replica's progress beacon (parts/progress.py): ProgressBeacon, or NO_PROGRESS

    def execution(self) -> Any: ...  # entered around an execution's steps (an XLA mesh compiles them as one)

    def local_replica_ids(self) -> tuple: ...
    def run_replicas(self, fn: Any, per_replica_args: list) -> list: ...
    def all_reduce(self, op: Any, value: Any) -> Any: ...  # (replica)
    def all_gather(self, value: Any, axis: int) -> Any: ...  # (replica)
    def cross_replica_sum(self, tensor: Any) -> Any: ...  # (replica) differentiable
    def reduce_gradients(self, grads: list) -> list: ...  # (replica)
    def once_per_process(self, fn: Any) -> Any: ...  # (replica) fn runs once, every replica waits
    def sum_tensors(self, tensors: list) -> list: ...
    def any(self, flag: bool) -> bool: ...
    def gather_objects(self, value: Any) -> list: ...
    def gather_batches(self, chunks: list) -> Any: ...
    def broadcast(self, value: Any, src: int) -> Any: ...
    def broadcast_initial(self, tensor: Any) -> Any: ...
    def barrier(self) -> None: ...
    def teardown(self) -> None: ...
    def unanswered_replicas(self, error: Any) -> Any: ...


@runtime_checkable
class Replication(Protocol):
    """How the trainer's module is made to train in sync (DDP, nothing, fully_shard, later xla), and how its
    gradients and their global norm are taken."""

    setup_before_first_call: bool
    forward_syncs: bool  # a forward pass runs collectives (gathers sharded weights): every replica must call it

    def setup(self, module: Any, optimizer: Any) -> Any: ...
    def prepare_optimizer(self, optimizer: Any) -> None: ...
    def no_sync(self, module: Any) -> Any: ...
    def init_context(self) -> Any: ...
    def gradients(self, targets: Any, sources: Any, grad_outputs: Any, retain_graph: bool, multiplier: float) -> Any: ...
    def global_norm(self, grads: Any) -> Any: ...


@runtime_checkable
class PrecisionPart(Protocol):
    """The forward context and loss scaling of a step."""

    def forward_context(self) -> Any: ...
    def backward(self, loss: Any, optimizer: Any) -> None: ...


@runtime_checkable
class CheckpointIO(Protocol):
    """How a model's and optimizer's state is read and written (full tensors, or later shards)."""

    sharded: bool  # every rank writes its own shard (else the chief writes the whole state)

    def state_dict(self, module: Any) -> dict: ...
    def load_state_dict(self, module: Any, state: dict) -> Any: ...


@runtime_checkable
class Placement(Protocol):
    """Puts a batch on the replica's device, or splits it over the local replicas; distributes datasets.
    `allow_uneven_split` (settable) lets global batches that do not divide by the replicas through."""

    allow_uneven_split: bool

    def place(self, batch: Any) -> Any: ...
    def distribute_dataset(self, dataset: Any, context: Any, replica_ids: Any, options: Any) -> Any: ...
    def distribute_per_replica_batches(self, dataset: Any, context: Any, replica_ids: Any, options: Any) -> Any: ...


@runtime_checkable
class Stepping(Protocol):
    """How one execution's steps run: what the loop iterates (one item per step), and running an
    execution's items for training, evaluation or prediction (here, or scheduled on remote workers)."""

    def step_inputs(self, strategy: Any, source: Any, mode: str, steps: Any, options: Any) -> Any: ...
    def example_batch(self, item: Any) -> Any: ...
    def prepare(self, build: Any) -> None: ...
    def train(self, strategy: Any, step_fn: Any, items: Any) -> Any: ...
    def test(self, strategy: Any, step_fn: Any, items: Any) -> Any: ...
    def predict(self, strategy: Any, step_fn: Any, items: Any) -> list: ...
    def wait(self) -> None: ...


@runtime_checkable
class Transport(Protocol):
    """How a parameter-server job's tasks call each other (torch.distributed.rpc's RpcGroup today; kept
    behind this so another transport, e.g. gRPC as TF's own parameter servers use, can replace it)."""

    lost: set  # tasks known to be gone

    def call(self, task: str, fn: Any, args: Any = (), timeout: Any = None) -> Any: ...
    def call_async(self, task: str, fn: Any, args: Any = (), timeout: Any = None) -> Any: ...
    def call_each(self, calls: Any, timeout: Any = None) -> list: ...
    def ping(self, names: Any, timeout: float) -> None: ...
    def stop_servers(self, names: Any, graceful: bool) -> None: ...
    def close(self, graceful: bool = False) -> bool: ...


@runtime_checkable
class Launcher(Protocol):
    """How this strategy's processes come to exist: `start` joins (or starts) them and says where this one
    sits; `start_watchdog` makes this process exit when whatever launched it dies."""

    def start(self) -> Any: ...
    def start_watchdog(self, spec: Any) -> None: ...


class InProcess:
    """The launcher of strategies that run in this one process (nothing to start or watch)."""

    def start(self) -> Any:
        from torchstrategy.cluster.spec import ProcessSpec

        return ProcessSpec()

    def start_watchdog(self, spec: Any) -> None:
        """Nobody launched this process on the strategy's behalf."""


_PROTOCOLS = {"collectives": Collectives, "replication": Replication, "precision": PrecisionPart,
              "checkpoint_io": CheckpointIO, "placement": Placement, "stepping": Stepping,
              "transport": Transport, "launcher": Launcher}


def check_part(role: str, part: Any) -> Any:
    """Raises when `part` lacks a method its role needs, so a broken strategy fails when it is built."""
    protocol = _PROTOCOLS[role]
    names = [name for name in dir(protocol) if not name.startswith("_")] + list(protocol.__annotations__)
    missing = sorted({name for name in names if not hasattr(part, name)})
    if missing:
        raise TypeError(f"The {role} part {type(part).__name__} is missing {', '.join(missing)}: a strategy's "
                        f"{role} part must implement {', '.join(sorted(set(names)))}.")
    return part


def data_parallel(group: Any) -> dict:
    """The parts of DDP-style data parallelism over a joined process group (`GroupParts`): its device,
    launcher and collectives, and DDP wrapping the module."""
    return {"device": group.device, "launcher": group.launcher, "collectives": group.collectives,
            "replication": DDPReplication(group.device, active=group.collectives.active,
                                          comm_hook=group.collectives.gradient_hook())}


__all__ = ["data_parallel", "Launcher", "ClusterLauncher", "InProcess", "Collectives", "Replication", "PrecisionPart", "CheckpointIO", "Placement", "Stepping", "Transport",
           "check_part", "LocalStepping", "ScheduledStepping",
           "ProcessGroupCollectives", "SingleReplicaCollectives", "ReplicaThreads", "RerunScriptLauncher", "expand_task",
           "StepPrecision", "FullStateIO", "BatchPlacement", "DDPReplication", "LocalReplication"]
