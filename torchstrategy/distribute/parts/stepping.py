"""The stepping part: how one execution's steps (Keras's steps_per_execution) run, here on the local
replicas (inside the strategy's execution context) or scheduled as closures on parameter-server workers."""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

import torch

#: what fit/evaluate/predict ask of the inputs they iterate
MODES = ("train", "test", "predict")


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}.")


class _Placed:
    """A Python iterator of batches (a generator) with each batch put on the strategy's device(s)."""

    def __init__(self, iterator: Iterator[Any], place: Callable[[Any], Any]) -> None:
        self._iterator, self._place = iterator, place

    def __iter__(self) -> "_Placed":
        return self

    def __next__(self) -> Any:
        return self._place(next(self._iterator))


class LocalStepping:
    """Steps run in this process: each item is one (distributed) batch, and an execution's steps run one
    after another inside `strategy.execution()` (an XLA mesh compiles them as one graph)."""

    def step_inputs(self, strategy: Any, source: Any, mode: str, steps: Optional[int] = None,
                    options: Any = None) -> Any:
        """What the loop iterates, one item per step: a dataset (or DataLoader) distributed by `strategy`,
        the batches of a dataset function made for this process, or a plain iterator's batches placed."""
        _check_mode(mode)
        if hasattr(source, "__next__"):
            return _Placed(source, strategy.place_batch)
        if callable(source) and not hasattr(source, "__iter__"):  # a dataset function (DatasetCreator)
            return strategy.distribute_datasets_from_function(source, options=options)
        return strategy.experimental_distribute_dataset(source)

    def example_batch(self, item: Any) -> Any:
        """A batch the model can be built from: the item itself."""
        return item

    def prepare(self, build: Callable[[], None]) -> None:
        """Variables that steps create lazily (compiled metrics) can be created by the first step here."""

    def train(self, strategy: Any, step_fn: Callable, items: Sequence[Any]) -> Any:
        """Runs `step_fn` on each item on every local replica; the last step's per-replica result."""
        result = None
        with strategy.execution():
            for item in items:
                result = strategy.run(step_fn, args=(item,))
        return result

    def test(self, strategy: Any, step_fn: Callable, items: Sequence[Any]) -> Any:
        """As `train`, without gradients."""
        with torch.no_grad():
            return self.train(strategy, step_fn, items)

    def predict(self, strategy: Any, step_fn: Callable, items: Sequence[Any]) -> list:
        """Each item's per-replica outputs, in order."""
        with torch.no_grad():
            return [strategy.run(step_fn, args=(item,)) for item in items]

    def wait(self) -> None:
        """Steps run synchronously here: nothing is pending."""


@dataclass(frozen=True)
class WorkerBatches:
    """One step's input under a parameter-server strategy: the next batch of each worker's own iterator.
    `sample` makes one batch here (on the coordinator) to build the model and its metrics from."""

    iterator: Any
    sample: Callable[[], Any]


class _EveryStep:
    """An endless run of the same WorkerBatches: each step reads the worker's iterator. Resuming mid-epoch
    resumes the step count; the workers' iterators keep their own positions."""

    def __init__(self, item: WorkerBatches) -> None:
        self._item = item

    def __iter__(self) -> Iterator[WorkerBatches]:
        return itertools.repeat(self._item)

    def iterate_from(self, skip: int) -> Iterator[WorkerBatches]:
        return iter(self)


def _run_steps(strategy: Any, step_fn: Callable, iterator: Any, count: int, training: bool) -> Any:
    """Runs on a worker: `count` steps on the worker's batches; the last step's result."""
    result = None
    with torch.set_grad_enabled(training):
        for _ in range(count):
            result = strategy.run(step_fn, args=(next(iterator),))
    return result


def _run_one(strategy: Any, step_fn: Callable, batch: Any) -> Any:
    """Runs on a worker: one inference step on a batch sent from the coordinator."""
    with torch.no_grad():
        return strategy.run(step_fn, args=(batch,))


class ScheduledStepping:
    """Steps run as closures on parameter-server workers through a ClusterCoordinator (made on first use by
    `coordinator`): fit and evaluate read each worker's own copy of the dataset and update the variables on
    the ps tasks asynchronously; predict sends the coordinator's batches and returns the outputs in order."""

    def __init__(self, coordinator: Callable[[], Any]) -> None:
        self._make_coordinator = coordinator
        self._coordinator: Any = None

    @property
    def coordinator(self) -> Any:
        """The ClusterCoordinator that schedules the steps (one per strategy)."""
        if self._coordinator is None:
            self._coordinator = self._make_coordinator()
        return self._coordinator

    def step_inputs(self, strategy: Any, source: Any, mode: str, steps: Optional[int] = None,
                    options: Any = None) -> Any:
        """train/test: every worker makes its own dataset from `source` (a dataset function, called there
        through `strategy.distribute_datasets_from_function`, or a dataset copied to it), and each step
        reads its next batch there; `steps` must be given. predict: the batches are read here."""
        _check_mode(mode)
        if mode == "predict":
            return LocalStepping().step_inputs(strategy, source, mode, steps, options)
        name = "steps_per_epoch" if mode == "train" else "steps"
        if steps is None:
            raise ValueError(f"Under ParameterServerStrategy `{name}` is needed: the workers' datasets are read "
                             f"independently, so the number of steps cannot come from the data. Pass e.g. "
                             f"{name}=100 (and repeat() the dataset).")
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ValueError(f"`{name}` must be a positive integer; got {steps!r}.")
        if callable(source) and not hasattr(source, "__iter__"):
            def per_worker() -> Any:
                return strategy.distribute_datasets_from_function(source, options=options)

            def sample() -> Any:
                return next(iter(source(strategy.input_context())))

            made: Any = per_worker
        elif hasattr(source, "__iter__") and not hasattr(source, "__next__"):
            def sample() -> Any:
                return next(iter(source))

            made = source
        else:
            raise TypeError(f"Under ParameterServerStrategy fit() and evaluate() take a tf.keras.utils.experimental."
                            f"DatasetCreator, a function(input_context) returning a dataset, a tf.data.Dataset or "
                            f"arrays; got {type(source).__name__}. Each worker makes its own dataset from it.")
        iterator = iter(self.coordinator.create_per_worker_dataset(made))
        return _EveryStep(WorkerBatches(iterator, sample))

    def example_batch(self, item: Any) -> Any:
        """A batch made here from the same source (train/test), or the item itself (predict)."""
        return item.sample() if isinstance(item, WorkerBatches) else item

    def prepare(self, build: Callable[[], None]) -> None:
        """The steps' variables must exist here before the first closure places them on the ps tasks."""
        build()

    def train(self, strategy: Any, step_fn: Callable, items: Sequence[Any]) -> Any:
        """Schedules the execution as one closure of `len(items)` steps on a free worker; returns None (the
        results arrive asynchronously: `wait()` then read the variables)."""
        return self._schedule(strategy, step_fn, items, training=True)

    def test(self, strategy: Any, step_fn: Callable, items: Sequence[Any]) -> Any:
        """As `train`, without gradients."""
        return self._schedule(strategy, step_fn, items, training=False)

    def _schedule(self, strategy: Any, step_fn: Callable, items: Sequence[Any], training: bool) -> None:
        self.coordinator.schedule(_run_steps, args=(strategy, step_fn, items[0].iterator, len(items), training))

    def predict(self, strategy: Any, step_fn: Callable, items: Sequence[Any]) -> list:
        """Each batch on a free worker (the execution's batches run in parallel); the outputs in order."""
        results = [self.coordinator.schedule(_run_one, args=(strategy, step_fn, item)) for item in items]
        return [result.get() for result in results]

    def wait(self) -> None:
        """Every scheduled step done and the coordinator's variables set to their ps values."""
        if self._coordinator is not None:
            self._coordinator.join()
