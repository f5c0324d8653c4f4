"""fit and evaluate for strategies whose steps run on remote workers (ParameterServerStrategy): steps are
scheduled through a ClusterCoordinator, and logs and callbacks come per epoch from the variables' ps values."""
from __future__ import annotations

from typing import Any, Callable, Optional

import torch

from torchstrategy.data.dataset import Dataset
from torchstrategy.keras import callbacks as callbacks_module
from torchstrategy.keras.dataset_creator import DatasetCreator
from torchstrategy.keras.progress import TrainingProgress, apply_resume_point


def _train_steps(model: Any, iterator: Any, count: int) -> dict:
    """Runs on a worker: `count` training steps on the worker's batches; the last step's logs."""
    logs: dict = {}
    for _ in range(count):
        logs = model.distribute_strategy.run(model.train_step, args=(next(iterator),))
    return logs


def _test_steps(model: Any, iterator: Any, count: int) -> dict:
    """Runs on a worker: `count` evaluation steps on the worker's batches."""
    logs: dict = {}
    with torch.no_grad():
        for _ in range(count):
            logs = model.distribute_strategy.run(model.test_step, args=(next(iterator),))
    return logs


def _dataset_source(strategy: Any, x: Any, where: str) -> tuple:
    """(what each worker makes its dataset from, a function making one dataset here to build the model)."""
    if isinstance(x, DatasetCreator) or (callable(x) and not isinstance(x, Dataset)):
        def make_here() -> Any:
            return x(strategy.input_context())

        return (lambda: strategy.distribute_datasets_from_function(x)), make_here
    if isinstance(x, Dataset):
        return x, (lambda: x)
    raise TypeError(f"{where} under ParameterServerStrategy takes a tf.keras.utils.experimental.DatasetCreator, a "
                    f"function(input_context) returning a dataset, or a tf.data.Dataset; got {type(x).__name__}. "
                    f"Each worker makes its own dataset from it (wrap arrays with tf.data.Dataset.from_tensor_slices).")


def _check_steps(steps: Optional[int], name: str, where: str) -> int:
    if steps is None:
        raise ValueError(f"{where} under ParameterServerStrategy needs `{name}`: the workers' datasets are read "
                         f"independently, so the number of steps cannot come from the data. Pass e.g. "
                         f"{name}=100 (and repeat() the dataset).")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {steps!r}.")
    return steps


def _set_up_here(model: Any, make_here: Callable[[], Any]) -> Any:
    """Builds the model, the optimizer and the compiled metrics here, from one batch of a dataset made on the
    coordinator, so that their variables exist before the first closure places them on the ps tasks."""
    from torchstrategy.keras import training
    from torchstrategy.keras.data_adapter import unpack

    x, y, _ = unpack(next(iter(make_here())))
    runtime = training._runtime(model, x)
    compiled = model._compiled
    if compiled._metrics is None:
        with torch.no_grad(), training.eval_mode(model):
            compiled._build(y, model(x, training=False))
    return runtime


def _start(model: Any, x: Any, unsupported: dict, where: str) -> tuple:
    """(runtime, coordinator, per-worker iterator): the model set up here, each worker's dataset made from `x`."""
    from torchstrategy.distribute.coordinator import ClusterCoordinator

    given = sorted(name for name, value in unsupported.items() if value)
    if given:
        raise ValueError(f"{where} under ParameterServerStrategy does not take {given}: put targets and weights in "
                         f"the dataset the DatasetCreator makes.")
    strategy = model.distribute_strategy
    source, make_here = _dataset_source(strategy, x, where)
    runtime = _set_up_here(model, make_here)
    coordinator = ClusterCoordinator(strategy)
    return runtime, coordinator, iter(coordinator.create_per_worker_dataset(source))


def _schedule_epoch(coordinator: Any, fn: Callable, model: Any, iterator: Any, steps: int, per_execution: int,
                    cbs: Any, train: bool) -> None:
    step = 0
    while step < steps:
        count = min(per_execution, steps - step)
        if train:
            cbs.on_train_batch_begin(step)
        coordinator.schedule(fn, args=(model, iterator, count))
        if train:
            cbs.on_train_batch_end(step + per_execution - 1, None)
        step += count
    coordinator.join()


def fit(model: Any, x: Any, epochs: int, verbose: int, callbacks: Any, validation_data: Any, initial_epoch: int,
        steps_per_epoch: Optional[int], validation_steps: Optional[int], validation_freq: Any,
        unsupported: dict) -> Any:
    """model.fit under ParameterServerStrategy (called by training.fit)."""
    from torchstrategy.keras import training

    steps = _check_steps(steps_per_epoch, "steps_per_epoch", "fit()")
    runtime, coordinator, iterator = _start(model, x, unsupported, "fit()")
    strategy = model.distribute_strategy
    val_iterator = None
    if validation_data is not None:
        val_steps = _check_steps(validation_steps, "validation_steps", "fit() with validation_data")
        val_iterator = iter(coordinator.create_per_worker_dataset(_dataset_source(strategy, validation_data,
                                                                                  "validation_data")[0]))
    cbs = callbacks_module.CallbackList(callbacks, add_history=True, add_progbar=verbose != 0, model=model,
                                        verbose=verbose, epochs=epochs, steps=steps)
    model.stop_training = False
    compiled = model._compiled
    per_execution = compiled.steps_per_execution
    progress = TrainingProgress()
    model._progress = progress
    runtime.module.train()
    logs: dict = {}
    cbs.on_train_begin()
    resume = model.__dict__.pop("_resume_point", None)
    if resume is not None:
        apply_resume_point(model, runtime, resume, progress)
    for epoch in range(resume["epoch"] if resume else initial_epoch, epochs):
        first_step = resume["step"] if resume is not None and epoch == resume["epoch"] else 0
        if not first_step:
            compiled.reset()
        progress.epoch, progress.step = epoch, first_step
        cbs.on_epoch_begin(epoch)
        _schedule_epoch(coordinator, _train_steps, model, iterator, steps - first_step, per_execution, cbs, True)
        progress.step, progress.global_step = steps, progress.global_step + steps - first_step
        logs = {key: float(value) for key, value in compiled.results().items()}
        if val_iterator is not None and training._should_validate(epoch, validation_freq):
            logs.update({f"val_{k}": v for k, v in _evaluate_on(model, coordinator, val_iterator, val_steps).items()})
        progress.step = 0
        progress.epoch = epoch + 1
        cbs.on_epoch_end(epoch, logs)
        if model.stop_training:
            break
    cbs.on_train_end(logs)
    return model.history


def _evaluate_on(model: Any, coordinator: Any, iterator: Any, steps: int) -> dict:
    """Exact evaluation over `steps` batches spread over the workers; the metric results (metrics are
    reset first and left holding the evaluation, as Keras leaves them)."""
    compiled = model._compiled
    saved = compiled.metric_states()
    compiled.reset()
    _schedule_epoch(coordinator, _test_steps, model, iterator, steps, compiled.steps_per_execution, None, False)
    results = {key: float(value) for key, value in compiled.results().items()}
    compiled.load_metric_states(saved)
    return results


def evaluate(model: Any, x: Any, steps: Optional[int], callbacks: Any, return_dict: bool, unsupported: dict) -> Any:
    """model.evaluate under ParameterServerStrategy (called by training.evaluate)."""
    steps = _check_steps(steps, "steps", "evaluate()")
    _, coordinator, iterator = _start(model, x, unsupported, "evaluate()")
    cbs = callbacks_module.CallbackList(callbacks, model=model, verbose=0, steps=steps)
    cbs.on_test_begin()
    compiled = model._compiled
    compiled.reset()
    _schedule_epoch(coordinator, _test_steps, model, iterator, steps, compiled.steps_per_execution, cbs, False)
    logs = {key: float(value) for key, value in compiled.results().items()}
    cbs.on_test_end(logs)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values
