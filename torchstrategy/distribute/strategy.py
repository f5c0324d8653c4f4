"""The Strategy: composes its parts (collectives, replication, precision, checkpoint IO, batch
placement) and exposes the one public protocol the trainer, layers, optimizers and callbacks use."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, ContextManager, Iterator, Optional, Sequence

import torch
from torch import nn

from torchstrategy import _context
from torchstrategy.data.distribute import DistributedDataset
from torchstrategy.distribute import parts as _parts
from torchstrategy.distribute.communication import TIMEOUT_SPELLING as _TIMEOUT_SPELLING
from torchstrategy.distribute.extended import StrategyExtended, StrategyParts
from torchstrategy.distribute.values import (InputContext, InputReplicationMode, PerReplica, ReduceOp, ReplicaContext,
                                            ValueContext, _as_reduce_op)
from torchstrategy.nest import flatten, map_structure, pack_sequence_as


def _per_replica(parts: Sequence[Any]) -> Any:
    """One local replica: its value itself; several: a PerReplica."""
    return parts[0] if len(parts) == 1 else PerReplica(parts)


def _plain(structure: Any) -> bool:
    """True for a value made of tuples and leaves that are not PerReplica (a step's batch): what `run` may hand
    every replica unchanged. Lists and dicts are copied as before, so a step that changes them changes its own."""
    if type(structure) is tuple:
        for item in structure:  # (a loop, not all(): this runs on every step's batch)
            if type(item) is not torch.Tensor and not _plain(item):
                return False
        return True
    return not isinstance(structure, (PerReplica, tuple, list, dict))  # (a namedtuple is rebuilt as before)


class Strategy:
    """Base of all strategies: a strategy file picks the parts; this class wires them to TF's API.

    Parts (see `distribute/parts`): `launcher` started this process's peers; `collectives` combine values
    over replicas and run a step on each local replica; `replication` wraps the module (DDP, ...);
    `precision` runs forward and backward; `checkpoint_io` reads and writes state; `placement` puts
    batches on the device(s); `stepping` runs an execution's steps (here, or on remote workers).
    Each part is checked for every method its role needs when the strategy is built.
    """

    #: the torch DeviceMesh the strategy's processes form (tensor parallelism); None for the others
    device_mesh: Any = None

    def __init__(self, extended: StrategyExtended) -> None:
        if not isinstance(extended, StrategyExtended) or extended._parts is None:
            raise TypeError(
                f"Strategy(extended) takes the StrategyExtended a strategy is built from "
                f"(StrategyExtended.wired(strategy, StrategyParts(device, ...))); got {extended!r}. To distribute "
                f"a model, use a concrete strategy such as tf.distribute.MirroredStrategy or OneDeviceStrategy.")
        if extended._container_strategy() is not self:
            raise ValueError("Strategy(extended): `extended` belongs to another strategy; build one per strategy.")
        self._extended = extended
        parts = extended.parts
        self._device = torch.device(parts.device)
        self._launcher = _parts.check_part("launcher", parts.launcher or _parts.InProcess())
        self._collectives = _parts.check_part("collectives", parts.collectives or _parts.SingleReplicaCollectives())
        local = self._collectives.num_local_replicas
        self._replication = _parts.check_part("replication",
                                              parts.replication or _parts.LocalReplication(self._device))
        self._precision = _parts.check_part("precision", parts.precision or _parts.StepPrecision())
        self._checkpoint_io = _parts.check_part("checkpoint_io", parts.checkpoint_io or _parts.FullStateIO())
        self._placement = _parts.check_part("placement", parts.placement or _parts.BatchPlacement(
            self._device, local, combine=_per_replica, collectives=self._collectives))
        self._stepping = _parts.check_part("stepping", parts.stepping or _parts.LocalStepping())
        self._resolver = parts.cluster_resolver
        #: True for strategies whose variables must be created inside `scope()` (mirrored, sharded).
        self.needs_model_in_scope = parts.needs_model_in_scope
        #: True when a model must be set up (sharded) before its first call, also outside fit (custom loops).
        self.setup_before_first_call = bool(self._replication.setup_before_first_call)
        if self._collectives.num_processes > 1:
            _context.set_job_strategy(self)  # fit refuses a model of the default strategy from now on

    def _wired(self, device: Any, **parts: Any) -> StrategyExtended:
        """The `extended` a strategy file hands `Strategy.__init__`: this strategy made of `parts`."""
        return StrategyExtended.wired(self, StrategyParts(device, **parts))

    # ----- facts ---------------------------------------------------------------------------
    @property
    def num_replicas_in_sync(self) -> int:
        """How many replicas train in lock step (processes x replicas per process)."""
        return self._collectives.num_replicas

    @property
    def num_step_replicas(self) -> int:
        """How many replica steps compute shares of one global batch, each dividing its loss by this count:
        `num_replicas_in_sync` for data parallelism; 1 on an SPMD mesh, where one program computes the
        whole global batch (XLA splits it over the devices)."""
        return int(self._collectives.num_step_replicas)

    @property
    def num_local_replicas(self) -> int:
        """How many of those replicas live in this process (1 for DDP; N for threads or SPMD meshes)."""
        return self._collectives.num_local_replicas

    @property
    def local_replica_ids(self) -> tuple:
        """The replica ids (`replica_id_in_sync_group`) this process runs."""
        return self._collectives.local_replica_ids()

    @property
    def process_rank(self) -> int:
        """This process's index among the job's processes (0 is the chief)."""
        return self._collectives.process_rank

    @property
    def num_processes(self) -> int:
        return self._collectives.num_processes

    @property
    def is_chief(self) -> bool:
        """Whether this process prints progress and writes files (rank 0)."""
        return self.process_rank == 0

    @property
    def cluster_resolver(self) -> Any:
        return self._resolver

    @property
    def progress(self) -> Any:
        """This replica's progress beacon (distribute/parts/progress.py): where it is, for the other replicas
        of a multi-process job, which name a replica that holds up a collective; a no-op elsewhere."""
        return self._collectives.progress

    @property
    def extended(self) -> StrategyExtended:
        """TF's lower-level API of this strategy (reduce_to, update, worker_devices, should_checkpoint)."""
        return self._extended

    @property
    def device(self) -> torch.device:
        """The torch device of this process's replicas."""
        return self._device

    def __repr__(self) -> str:
        return f"{type(self).__name__}(device={self._device}, replicas={self.num_replicas_in_sync})"

    def __deepcopy__(self, memo: dict) -> "Strategy":
        return self  # one per process (it owns process groups and threads): copies of models share it

    # ----- scope and replica calls ---------------------------------------------------------
    @contextlib.contextmanager
    def scope(self) -> Iterator["Strategy"]:
        """Makes this the current strategy: models and optimizers created here belong to it."""
        with _context.enter_strategy(self):
            yield self

    def run(self, fn: Callable, args: Sequence[Any] = (), kwargs: Optional[dict] = None, options: Any = None) -> Any:
        """Runs `fn` once per local replica with that replica's inputs; one result per replica
        (a PerReplica when this process holds several)."""
        kwargs = kwargs or {}
        count = self.num_local_replicas
        args = tuple(args)
        if _plain(args) and (not kwargs or self._replica_value(kwargs, 0) is kwargs):
            per_replica = [(args, kwargs)] * count  # nothing per replica inside: every replica gets them as they are
        else:
            per_replica = [(self._replica_value(args, i), self._replica_value(kwargs, i)) for i in range(count)]
        # grad mode is per thread: replicas take the caller's
        results = self._collectives.run_replicas(functools.partial(self._replica_call, fn, torch.is_grad_enabled()),
                                                 per_replica)
        return results[0] if count == 1 else PerReplica(results)

    def _replica_call(self, fn: Callable, grad_enabled: bool, replica_id: int, replica_args: tuple,
                      replica_kwargs: dict) -> Any:
        """`fn` as replica `replica_id` runs it: inside this strategy's scope, the caller's grad mode and the
        replica's context (entered with plain calls: this runs once per replica and step)."""
        if _context.get_strategy() is not self:
            with _context.enter_strategy(self):
                return self._replica_call(fn, grad_enabled, replica_id, replica_args, replica_kwargs)
        previous = torch.is_grad_enabled()
        torch.set_grad_enabled(grad_enabled)  # called, not entered: sets the mode at once
        try:
            with _context.enter_replica(ReplicaContext(self, replica_id)):
                return fn(*replica_args, **replica_kwargs)
        finally:
            torch.set_grad_enabled(previous)

    def _replica_value(self, structure: Any, index: int) -> Any:
        if _plain(structure):  # no per-replica value inside: the same for every replica, as it is
            return structure
        if type(structure) is dict and all(_plain(value) for value in structure.values()):
            return structure  # keyword arguments: `fn(**kwargs)` makes the replica's own dict

        def pick(value: Any) -> Any:
            if not isinstance(value, PerReplica):
                return value
            if len(value.values) != self.num_local_replicas:
                raise ValueError(f"{type(self).__name__} runs {self.num_local_replicas} replica(s) in this process; "
                                 f"got a value for {len(value.values)}: {value!r}")
            return value.values[index]

        return map_structure(pick, structure)

    def experimental_local_results(self, value: Any) -> tuple:
        """The values held by this process's replicas, as a tuple."""
        if isinstance(value, PerReplica):
            return value.values
        return (value,)

    def reduce(self, reduce_op: Any, value: Any, axis: Optional[int]) -> Any:
        """Combines a per-replica value (a tensor or a nest of them) over all replicas, and over `axis`
        (None: over replicas only). TF requires `axis`; so does this."""
        op = _as_reduce_op(reduce_op)
        if _context.current_replica() is not None and not isinstance(value, PerReplica):  # inside strategy.run
            if axis is None:
                return self._collectives.all_reduce(op, value)
        local = self.experimental_local_results(value)
        structure = local[0]
        columns = list(zip(*[[torch.as_tensor(leaf) for leaf in flatten(v)] for v in local]))
        sums, counts = [], []
        for column in columns:
            parts = [leaf.sum(dim=axis) for leaf in column] if axis is not None else list(column)
            total = parts[0]
            for part in parts[1:]:
                total = total + part.to(total.device)
            sums.append(total)
            counts.append(sum(leaf.shape[axis] for leaf in column) if axis is not None else len(column))
        if self.num_processes > 1:
            sums = self.sum_across_replicas(sums)
            if axis is not None:
                counts = [float(c) for c in self.sum_across_replicas([torch.tensor(counts, dtype=torch.float64)])[0]]
            else:
                counts = [self.num_replicas_in_sync] * len(sums)
        if op is ReduceOp.MEAN:
            sums = [total / count for total, count in zip(sums, counts)]
        return pack_sequence_as(structure, sums)

    def gather(self, value: Any, axis: int) -> Any:
        """Concatenates every replica's value along `axis` (all rows, in replica order)."""
        local = [torch.as_tensor(v) for v in self.experimental_local_results(value)]
        joined = torch.cat(local, dim=axis) if len(local) > 1 else local[0]
        if self.num_processes > 1 or _context.current_replica() is not None:
            return self._collectives.all_gather(joined, axis)
        return joined

    # ----- datasets ------------------------------------------------------------------------
    def _input_context(self) -> InputContext:
        return InputContext(num_input_pipelines=self.num_processes, input_pipeline_id=self.process_rank,
                            num_replicas_in_sync=self.num_replicas_in_sync)

    def input_context(self) -> InputContext:
        """What `distribute_datasets_from_function` hands this process's dataset function."""
        return self._input_context()

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> DistributedDataset:
        """Each replica gets its share of every global batch (AutoShardPolicy DATA: every sample once)."""
        return self._owned(self._placement.distribute_dataset(dataset, self._input_context(), self.local_replica_ids,
                                                              options))

    def distribute_datasets_from_function(self, dataset_fn: Callable, options: Any = None) -> DistributedDataset:
        """Calls `dataset_fn(InputContext)` once for this process; its batches are per-replica batches."""
        context = self._input_context()
        return self._owned(self._placement.distribute_per_replica_batches(dataset_fn(context), context,
                                                                          self.local_replica_ids, options))

    def _owned(self, distributed: Any) -> Any:
        """Marks which strategy split the batches (fit refuses them for a model of another strategy)."""
        if getattr(distributed, "distribute_strategy", None) is None:
            distributed.distribute_strategy = self
        return distributed

    def experimental_distribute_values_from_function(self, value_fn: Callable) -> Any:
        values = [value_fn(ValueContext(replica, self.num_replicas_in_sync)) for replica in self.local_replica_ids]
        return values[0] if len(values) == 1 else PerReplica(values)

    def experimental_distribute_datasets_from_function(self, dataset_fn: Callable,
                                                       options: Any = None) -> DistributedDataset:
        """The name TF 2.3 gave `distribute_datasets_from_function` (the same call)."""
        return self.distribute_datasets_from_function(dataset_fn, options)

    def make_dataset_iterator(self, dataset: Any) -> Any:
        """An iterator over `experimental_distribute_dataset(dataset)` (TF1's spelling)."""
        return iter(self.experimental_distribute_dataset(dataset))

    def make_input_fn_iterator(self, input_fn: Callable, replication_mode: Any = InputReplicationMode.PER_WORKER
                               ) -> Any:
        """An iterator over `distribute_datasets_from_function(input_fn)`; only PER_WORKER input is supported,
        as in TF."""
        if replication_mode is not InputReplicationMode.PER_WORKER:
            raise ValueError(f"make_input_fn_iterator supports InputReplicationMode.PER_WORKER only; got "
                             f"{replication_mode!r}.")
        return iter(self.distribute_datasets_from_function(input_fn))

    def experimental_run(self, fn: Callable, input_iterator: Any = None) -> Any:
        """`run(fn, args=(next(input_iterator),))`, or `run(fn)` without an iterator (TF1's spelling)."""
        return self.run(fn, args=() if input_iterator is None else (next(input_iterator),))

    def unwrap(self, value: Any) -> tuple:
        """The values this process's replicas hold (TF1's name of `experimental_local_results`)."""
        return self.experimental_local_results(value)

    def group(self, value: Any, name: Optional[str] = None) -> Any:
        """Eager ops have already run: `value` as it is (TF groups graph ops into one)."""
        return value

    def colocate_vars_with(self, colocate_with_variable: Any) -> ContextManager[None]:
        """Accepted for TF scripts: the strategy places every variable (see `extended.colocate_vars_with`)."""
        return self._extended.colocate_vars_with(colocate_with_variable)

    def configure(self, session_config: Any = None, cluster_spec: Any = None, task_type: Optional[str] = None,
                  task_id: Optional[int] = None) -> None:
        """TF1's session setup: there is no session here; a cluster comes from the strategy's resolver."""
        if cluster_spec is not None or task_type is not None or task_id is not None:
            raise ValueError(f"{type(self).__name__}.configure(cluster_spec=..., task_type=..., task_id=...) is TF1 "
                             f"API torchstrategy does not provide: pass a cluster resolver to the strategy (e.g. "
                             f"tf.distribute.cluster_resolver.SimpleClusterResolver) or set TF_CONFIG.")

    def update_config_proto(self, config_proto: Any) -> Any:
        """TF1's session config: returned unchanged (no session to configure)."""
        return config_proto

    def run_once(self, fn: Callable[[], Any]) -> Any:
        """Calls `fn` once in this process and returns its result to every local replica; inside
        `strategy.run` the replicas wait for each other first (variable updates, merge_call)."""
        return self._collectives.once_per_process(fn)

    # ----- the protocol: setting up and stepping -------------------------------------------
    def setup(self, module: nn.Module, optimizer: Optional[torch.optim.Optimizer] = None) -> nn.Module:
        """Places `module` and returns what the trainer calls (DDP or another wrapper, or the module)."""
        return self._replication.setup(module, optimizer)

    def init_context(self) -> ContextManager[Any]:
        """Entered while a model builds its variables (a sharded strategy creates them sharded)."""
        return self._replication.init_context()

    def init_variable(self, tensor: torch.Tensor) -> torch.Tensor:
        """Makes a variable created in scope equal on every replica (rank 0's value), as TF mirrors it."""
        return self._collectives.broadcast_initial(tensor)

    def forward_context(self) -> ContextManager[Any]:
        """Entered around each forward pass (precision)."""
        return self._precision.forward_context()

    def backward(self, loss: torch.Tensor, optimizer: Optional[Any] = None) -> None:
        """Backward of one replica's share of the global loss (as `model.compute_loss` gives it: divided by
        the replica count), so that the gradients add up over replicas; scaled as `optimizer` asks."""
        # A replica's loss is its share of the global loss (TF scales it by 1/replicas) and replicas' gradients
        # add up: the collectives say what undoes their own averaging (DDP's over processes)
        multiplier = self._collectives.loss_multiplier
        self._precision.backward(loss if multiplier == 1.0 else loss * multiplier, optimizer)

    def optimizer_step(self, optimizer: torch.optim.Optimizer, step_fn: Optional[Callable[[], Any]] = None) -> Any:
        """Applies the step once for all of this process's replicas (the others wait), then clears gradients."""
        self._replication.prepare_optimizer(optimizer)  # e.g. lay its slots out on a mesh

        def step() -> Any:
            result = step_fn() if step_fn is not None else optimizer.step()
            if step_fn is None:
                optimizer.zero_grad(set_to_none=True)
            return result

        return self._collectives.once_per_process(step)

    def execution(self) -> ContextManager[Any]:
        """Entered around a group of steps that run as one (Keras's steps_per_execution): an XLA mesh
        compiles and runs them as one graph; elsewhere nothing changes."""
        return self._collectives.execution()

    # ----- the protocol: running a loop's steps (the stepping part) ---------------------------
    def step_inputs(self, source: Any, mode: str, steps: Optional[int] = None, options: Any = None) -> Any:
        """What fit ("train"), evaluate ("test") or predict ("predict") iterates, one item per step, made
        from `source` (a dataset, DataLoader, iterator or dataset function); `steps` as the caller gave it."""
        return self._stepping.step_inputs(self, source, mode, steps, options)

    def example_batch(self, item: Any) -> Any:
        """A batch of this process that the model can be built from, for one item of `step_inputs`."""
        return self._stepping.example_batch(item)

    def prepare_steps(self, build: Callable[[], None]) -> None:
        """Called once before a loop's first step: `build` creates what steps would create lazily
        (compiled metrics); strategies whose steps run elsewhere need it created here first."""
        self._stepping.prepare(build)

    def train_steps(self, step_fn: Callable, items: Sequence[Any]) -> Any:
        """One execution of training steps: `step_fn(batch)` for each item on every replica. The last step's
        result (per replica), or None where steps run asynchronously (read the results after `wait_steps`)."""
        return self._synced_steps("train step", True, self._stepping.train, step_fn, items)

    def test_steps(self, step_fn: Callable, items: Sequence[Any]) -> Any:
        """As `train_steps`, in inference (no gradients)."""
        return self._synced_steps("test step", self._replication.forward_syncs, self._stepping.test, step_fn, items)

    def predict_steps(self, step_fn: Callable, items: Sequence[Any]) -> list:
        """Each item's per-replica outputs, in order."""
        return self._synced_steps("predict step", self._replication.forward_syncs, self._stepping.predict, step_fn,
                                  items)

    def _synced_steps(self, label: str, syncs: bool, run: Callable, step_fn: Callable, items: Sequence[Any]) -> Any:
        """`run(self, step_fn, items)`, counted as one collective on the progress beacon when the steps wait for
        every replica (a training step's gradient sync; a sharded forward's weight gathers)."""
        if not syncs:
            return run(self, step_fn, items)
        progress = self._collectives.progress
        progress.enter(label)
        try:
            return run(self, step_fn, items)
        finally:
            progress.leave()

    def wait_steps(self) -> None:
        """Returns once every step given so far has run and this process's variables are current."""
        self._stepping.wait()

    def no_sync(self, module: nn.Module) -> ContextManager[Any]:
        """Within it, backward does not synchronise gradients (gradient accumulation)."""
        return self._replication.no_sync(module)

    def place_batch(self, batch: Any) -> Any:
        """Puts one batch of this process on its device(s): one value per local replica."""
        return self._placement.place(batch)

    def global_norm(self, grads: Sequence[torch.Tensor]) -> torch.Tensor:
        """The norm of all gradients together (over every shard when a strategy shards them)."""
        return self._replication.global_norm(grads)

    def gradients(self, targets: Sequence[torch.Tensor], sources: Sequence[torch.Tensor],
                  grad_outputs: Sequence[torch.Tensor], retain_graph: bool = False) -> list:
        """What GradientTape.gradient returns inside this strategy: one gradient (or None) per source. With
        sharded variables they come from the sharded backward, already summed over replicas."""
        return self._replication.gradients(targets, sources, grad_outputs, retain_graph,
                                           self._collectives.loss_multiplier)

    def assign_mean(self, variable: torch.Tensor, value: torch.Tensor) -> None:
        """Sets a mirrored variable (e.g. a moving statistic) inside a step to the mean of the local
        replicas' values, written once (TF's VariableAggregation.MEAN for replicas sharing one copy)."""
        value = value.detach()
        if self.num_local_replicas == 1:
            variable.copy_(value)
            return
        mean = self._collectives.all_reduce(ReduceOp.MEAN, value)
        self._collectives.once_per_process(lambda: variable.copy_(mean))

    # ----- the protocol: variables kept elsewhere (parameter servers) ------------------------
    @property
    def updates_variables_remotely(self) -> bool:
        """True where optimizer updates are applied by the tasks holding the variables (a parameter-server
        worker): the optimizer then sends its gradients with `apply_updates_remotely` instead of stepping."""
        return False

    def apply_updates_remotely(self, optimizer: Any, params: list, grads: list) -> None:
        """Sends an optimizer's (clipped) gradients to where `params` live, which apply them."""
        raise RuntimeError(f"{type(self).__name__} keeps its variables here: optimizers update them in place.")

    @property
    def closure_cluster(self) -> Any:
        """The workers a tf.distribute.coordinator.ClusterCoordinator schedules closures on (a
        ParameterServerStrategy's); None for strategies that run steps here."""
        return None

    def embedding_lookup(self, table: torch.Tensor, ids: torch.Tensor) -> Optional[torch.Tensor]:
        """The rows of `table` for `ids` when they are read from elsewhere (a parameter-server worker reads only
        those rows); None: look them up locally."""
        return None

    def state_dict(self, module: Any) -> dict:
        return self._checkpoint_io.state_dict(module)

    def load_state_dict(self, module: Any, state: dict) -> Any:
        return self._checkpoint_io.load_state_dict(module, state)

    @property
    def sharded_checkpoints(self) -> bool:
        """True when every rank writes its own shard of a checkpoint (FSDP), instead of the chief the whole."""
        return bool(self._checkpoint_io.sharded)

    # ----- the protocol: combining replicas ------------------------------------------------
    def cross_replica_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        """Differentiable sum over all replicas, called inside a step (synchronized BatchNorm)."""
        return self._collectives.cross_replica_sum(tensor)

    def reduce_gradients(self, grads: list) -> list:
        """Sums replicas' gradients before `optimizer.apply_gradients` updates (TF semantics); inside a step.
        Sharded gradients (DTensors) came out of a sharded backward that already summed them: kept as they are."""
        from torch.distributed.tensor import DTensor

        plain = [i for i, g in enumerate(grads) if g is not None and not isinstance(g, DTensor)]
        if len(plain) == len(grads):
            return self._collectives.reduce_gradients(grads)
        out = list(grads)
        for i, g in zip(plain, self._collectives.reduce_gradients([grads[i] for i in plain]) if plain else []):
            out[i] = g
        return out

    def sum_across_replicas(self, tensors: list) -> list:
        """Element-wise sums over processes of this process's totals (metric states); outside a step."""
        return self._collectives.sum_tensors(tensors)

    def any_replica(self, flag: bool) -> bool:
        """True on every process if `flag` is True on any (agreed stop_training, preemption)."""
        return self._collectives.any(flag)

    def gather_objects(self, value: Any) -> list:
        """Every process's picklable `value`, in rank order."""
        return self._collectives.gather_objects(value)

    def gather_batches(self, chunks: list) -> torch.Tensor:
        """Every process's per-batch outputs, concatenated in global batch order (predict)."""
        return self._collectives.gather_batches(chunks)

    def broadcast(self, value: Any, src: int = 0) -> Any:
        """Rank `src`'s picklable `value`, on every process."""
        return self._collectives.broadcast(value, src)

    def barrier(self) -> None:
        """Waits until every process reaches this point (no-op with one process)."""
        self._collectives.barrier()

    def explain_failure(self, error: BaseException, where: str) -> Optional[BaseException]:
        """A clearer error for a collective that timed out (naming the replicas that stopped answering, seen
        from the chief), or None when `error` is something else. `where` says at which point of training."""
        unanswered = self._collectives.unanswered_replicas(error)
        if unanswered is None:
            return None
        who = (f"replica {', '.join(map(str, unanswered))} stopped answering" if unanswered else
               f"another replica stopped answering (seen from replica {self.process_rank})")
        return RuntimeError(
            f"{type(self).__name__}: {who} {where}: a collective timed out waiting for it. It may be blocked in "
            f"user code or far slower than the others; if steps legitimately take that long, raise the limit with "
            f"{_TIMEOUT_SPELLING}. "
            f"Underlying error: {str(error).splitlines()[0] if str(error) else type(error).__name__}")

    def teardown(self) -> None:
        """Releases process groups and threads (also called at interpreter exit)."""
        self._collectives.teardown()
