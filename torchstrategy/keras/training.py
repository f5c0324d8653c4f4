"""The epoch and step loops behind fit/evaluate/predict and the *_on_batch calls. They know
only the Strategy interface: setup, distribute the data, backward, optimizer_step, reduce."""
from __future__ import annotations

import itertools
import warnings
from typing import Any, Callable, Iterator, Optional

import numpy as np
import torch

from torchstrategy._host_memory import keep_freed_memory
from torchstrategy.data.distribute import flatten_structure, map_structure
from torchstrategy.keras import callbacks as callbacks_module
from torchstrategy.keras import data_adapter
from torchstrategy.keras import preflight
from torchstrategy.keras.data_adapter import unpack
from torchstrategy.keras.progress import TrainingProgress, apply_resume_point
from torchstrategy.keras.steps import call_on_one_row, eval_mode, first_replica
from torchstrategy.nest import pack_sequence_as


class Runtime:
    """A model's training-time objects: its strategy, the module a step calls, the built optimizer.

    Setting up gives the model's strategy to every layer and to the optimizer, so that none of them
    looks a strategy up while a step runs (fit() may be called outside `strategy.scope()`)."""

    def __init__(self, model: Any, sample_x: Any) -> None:
        self.strategy = model.distribute_strategy
        if self.strategy.device.type == "cpu":
            keep_freed_memory()  # CPU steps reuse freed host memory instead of refaulting it (_host_memory.py)
        _build_if_needed(model, sample_x)
        model._set_distribute_strategy(self.strategy)
        if model.optimizer is not None and hasattr(model.optimizer, "_set_distribute_strategy"):
            model.optimizer._set_distribute_strategy(self.strategy)
        self.module = self.strategy.setup(model, model.optimizer)
        if model._compiled is not None and model._compiled.jit_compile:
            self.module = torch.compile(self.module)
        if model.optimizer is not None and hasattr(model.optimizer, "build"):
            model.optimizer.build(model.trainable_variables)
        self.device = self.strategy.device


def _build_if_needed(model: Any, sample_x: Any) -> None:
    unbuilt = [layer for layer in model._flatten_layers() if not layer.built]
    if not unbuilt and model.built:
        return
    if sample_x is None:
        raise ValueError(f"Model '{model.name}' is not built and there is no batch to build it from: give its first "
                         f"layer input_shape=, or call model.build(input_shape) before fit().")
    # weights created here are mirrored (or sharded) like ones created in scope
    call_on_one_row(model, sample_x, model.distribute_strategy.init_context())


def _runtime(model: Any, sample_x: Any) -> Runtime:
    if model._runtime is None or model._runtime.strategy is not model.distribute_strategy:
        model._runtime = Runtime(model, sample_x)
    return model._runtime


class _Placed:
    """A Python iterator of batches (a generator) with each batch put on the strategy's device(s)."""

    def __init__(self, iterator: Iterator[Any], place: Callable[[Any], Any]) -> None:
        self._iterator, self._place = iterator, place

    def __iter__(self) -> "_Placed":
        return self

    def __next__(self) -> Any:
        return self._place(next(self._iterator))


def _distributed(strategy: Any, data: data_adapter.EpochData) -> data_adapter.EpochData:
    """fit, evaluate and predict all read their batches this way: a dataset (or DataLoader) is
    distributed by the strategy, whatever `steps` says; a plain iterator is placed batch by batch."""
    source = data.source
    owner = getattr(source, "distribute_strategy", None)
    if owner is not None and owner is not strategy and max(owner.num_replicas_in_sync,
                                                           strategy.num_replicas_in_sync) > 1:
        raise ValueError(
            f"This dataset was distributed by {type(owner).__name__} ({owner.num_replicas_in_sync} replicas), but "
            f"the model belongs to {type(strategy).__name__} ({strategy.num_replicas_in_sync} replica(s)): it was "
            f"built and compiled outside that strategy's scope, so each replica would train its own copy on part of "
            f"the data and the copies would drift apart. Create and compile the model inside "
            f"`with strategy.scope():` (as TF requires), then call fit/evaluate/predict.")
    if hasattr(source, "__next__"):
        source = _Placed(source, strategy.place_batch)
    else:
        source = strategy.experimental_distribute_dataset(source)
    return data_adapter.EpochData(source, data.steps, data.persistent)


def _executions(iterator: Iterator[Any], steps: Optional[int], per_execution: int) -> Iterator[list]:
    """Batches grouped `per_execution` at a time (fewer at the end), at most `steps` batches in all."""
    taken = 0
    while steps is None or taken < steps:
        size = per_execution if steps is None else min(per_execution, steps - taken)
        group = list(itertools.islice(iterator, size))
        if not group:
            return
        taken += len(group)
        yield group
        if len(group) < size:
            return


def _verbosity(verbose: Any) -> int:
    if verbose == "auto":
        return 1
    if verbose not in (0, 1, 2):
        raise ValueError(f"verbose must be 0, 1, 2 or 'auto'; got {verbose!r}.")
    return int(verbose)


def _class_weight_table(class_weight: Optional[dict]) -> Optional[torch.Tensor]:
    """Keras's class_weight dict {class index: weight} as a lookup tensor (missing classes weigh 1)."""
    if class_weight is None:
        return None
    if not isinstance(class_weight, dict) or not class_weight:
        raise ValueError(f"class_weight must be a non-empty dict {{class index: weight}}; got {class_weight!r}.")
    if any(not isinstance(k, (int, np.integer)) or k < 0 for k in class_weight):
        raise ValueError(f"class_weight keys must be non-negative class indices; got {sorted(class_weight)}.")
    table = torch.ones(int(max(class_weight)) + 1)
    for index, weight in class_weight.items():
        table[int(index)] = float(weight)
    return table


def _class_weights(table: torch.Tensor, y: Any, sample_weight: Any) -> torch.Tensor:
    """Per-sample weights from the labels (one-hot labels by argmax), times any sample_weight."""
    labels = torch.as_tensor(y)
    if labels.dim() > 1 and labels.shape[-1] > 1:
        labels = labels.argmax(-1)
    labels = labels.reshape(labels.shape[0], -1)[:, 0].long()
    table = table.to(labels.device)
    known = labels < len(table)  # classes above the largest key weigh 1 (no host sync to check)
    weights = torch.where(known, table[labels.clamp(max=len(table) - 1)], torch.ones((), device=labels.device))
    return weights if sample_weight is None else weights * torch.as_tensor(sample_weight).reshape(weights.shape)


def _with_class_weights(table: Optional[torch.Tensor], batch: Any) -> Any:
    if table is None:
        return batch
    x, y, sample_weight = unpack(batch)
    return x, y, _class_weights(table, y, sample_weight)


def _train_logs(model: Any, runtime: Runtime, batch: Any, class_weights: Optional[torch.Tensor] = None) -> dict:
    """One training step on every local replica (`model.train_step`, maybe overridden); replica 0's logs."""
    step = model.train_step if class_weights is None else \
        (lambda data: model.train_step(_with_class_weights(class_weights, data)))
    return first_replica(runtime.strategy.run(step, args=(batch,)))


def _test_logs(model: Any, runtime: Runtime, batch: Any) -> dict:
    with torch.no_grad():
        return first_replica(runtime.strategy.run(model.test_step, args=(batch,)))


def _raise_explained(strategy: Any, error: RuntimeError, where: str) -> None:
    """Re-raises `error`, as the strategy's clearer error when it can say more (a replica stopped answering)."""
    clearer = strategy.explain_failure(error, where)
    if clearer is None:
        raise error
    raise clearer from error


def _epoch_logs(compiled: Any, strategy: Any, step_logs: Any) -> dict:
    """Metric results reduced over replicas; a custom step's own logs when they are not the metrics (Keras)."""
    compiled.reduce_across_replicas(strategy)
    results = compiled.results()
    if isinstance(step_logs, dict) and step_logs and set(step_logs) != set(results):
        return _float_logs(step_logs)
    return _float_logs(results)


def _first_batch(iterator: Iterator[Any]) -> tuple[Any, Iterator[Any]]:
    """Peeks the first batch (needed to build the model) without losing it."""
    first = next(iterator)

    def chained() -> Iterator[Any]:
        yield first
        # not `yield from`: closing this generator must not close a persistent iterator
        for item in iterator:
            yield item

    return first, chained()


def _float_logs(logs: dict) -> dict:
    return {key: float(value) for key, value in logs.items()}


def _steps(iterator: Iterator[Any], steps: Optional[int]) -> Iterator[tuple[int, Any]]:
    for step, batch in enumerate(iterator):
        yield step, batch
        if steps is not None and step + 1 >= steps:
            return


def fit(model: Any, x: Any = None, y: Any = None, batch_size: Optional[int] = None, epochs: int = 1,
        verbose: Any = "auto", callbacks: Any = None, validation_split: float = 0.0, validation_data: Any = None,
        shuffle: Any = True, class_weight: Any = None, sample_weight: Any = None, initial_epoch: int = 0,
        steps_per_epoch: Optional[int] = None, validation_steps: Optional[int] = None,
        validation_batch_size: Optional[int] = None, validation_freq: Any = 1, kwargs: Optional[dict] = None) -> Any:
    """Keras `fit`: see `Model.fit`."""
    if kwargs:
        raise TypeError(f"fit() got unexpected keyword arguments: {sorted(kwargs)}")
    preflight.check_epochs(epochs, initial_epoch)
    if getattr(model.distribute_strategy, "schedules_steps", False):  # steps run on remote workers
        from torchstrategy.keras import scheduled_training

        return scheduled_training.fit(
            model, x, epochs, _verbosity(verbose), callbacks, validation_data, initial_epoch, steps_per_epoch,
            validation_steps, validation_freq,
            unsupported={"y": y, "sample_weight": sample_weight, "class_weight": class_weight,
                         "validation_split": validation_split, "batch_size": batch_size})
    class_weights = _class_weight_table(class_weight)
    x, y, sample_weight = data_adapter.chief_arrays(model.distribute_strategy, x, y, sample_weight)
    if validation_split and validation_data is None:
        (x, y, sample_weight), validation_data = data_adapter.split_validation(x, y, sample_weight, validation_split)
    strategy = model.distribute_strategy
    data = _distributed(strategy, data_adapter.adapt(x, y, sample_weight, batch_size, shuffle, steps_per_epoch, strategy=strategy))
    val_data = None
    if validation_data is not None:
        val_data = unpack(validation_data) if isinstance(validation_data, (tuple, list)) \
            else (validation_data, None, None)
    verbose = _verbosity(verbose)
    cbs = callbacks_module.CallbackList(callbacks, add_history=True, add_progbar=verbose != 0, model=model,
                                        verbose=verbose, epochs=epochs, steps=data.steps)
    model.stop_training = False
    compiled = model._compiled
    per_execution = compiled.steps_per_execution
    runtime: Optional[Runtime] = None
    logs: dict = {}
    progress = TrainingProgress()
    model._progress = progress  # what a backup callback saves
    cbs.on_train_begin()
    resume = model.__dict__.pop("_resume_point", None)  # left by BackupAndRestore.on_train_begin
    for epoch in range(resume["epoch"] if resume else initial_epoch, epochs):
        compiled.reset()
        resuming = resume is not None and epoch == resume["epoch"]
        iterator = data.epoch_iterator((resume["data_state"], resume["data_consumed"]) if resuming else None)
        first_step = resume["step"] if resuming else 0
        try:
            first, iterator = _first_batch(iterator)
        except StopIteration:
            first = None
            if not resuming:  # a backup taken after an epoch's last batch resumes with no batch left
                warnings.warn("Your input ran out of data; interrupting training. Make sure the dataset can give "
                              "steps_per_epoch * epochs batches (e.g. use .repeat()).", stacklevel=2)
                break
        if runtime is None:
            runtime = _runtime(model, unpack(first)[0] if first is not None else None)
            preflight.check_before_training(model, unpack(first)[0] if first is not None else None, class_weights, val_data)
            runtime.module.train()
        if resuming:
            apply_resume_point(model, runtime, resume, progress)
            resume = None
        progress.start_epoch(epoch, first_step, data, peeked=first is not None)
        cbs.on_epoch_begin(epoch)
        batch_hooks = cbs._should_call_train_batch_hooks  # else skip per-step host syncs
        limit = None if data.steps is None else data.steps - first_step
        step, step_logs = first_step, None
        # Keras: callbacks see each execution of `steps_per_execution` steps as one batch, beginning at its
        # first step index and ending at first + steps_per_execution - 1 (TF 2.21 reports that even for a
        # shorter last execution: 10 steps in 4s end at 3, 7 and 11)
        for execution in _executions(iterator, limit, per_execution):
            if batch_hooks:
                cbs.on_train_batch_begin(step)
            with runtime.strategy.execution():  # an XLA mesh runs the execution's steps as one graph
                for batch in execution:
                    try:
                        step_logs = _train_logs(model, runtime, batch, class_weights)
                    except RuntimeError as error:
                        _raise_explained(runtime.strategy, error, f"at epoch {epoch + 1}, batch {progress.step}")
                    progress.finish_step()
            if batch_hooks:
                cbs.on_train_batch_end(step + per_execution - 1, step_logs)
            step += len(execution)
            if batch_hooks:
                # a callback may stop one replica mid-epoch: all must agree, or the others hang
                model.stop_training = runtime.strategy.any_replica(model.stop_training)
            if model.stop_training:
                break
        logs = _epoch_logs(compiled, runtime.strategy, step_logs)
        if val_data is not None and _should_validate(epoch, validation_freq):
            val_logs = evaluate(model, x=val_data[0], y=val_data[1], sample_weight=val_data[2],
                                batch_size=validation_batch_size or batch_size, verbose=0,
                                steps=validation_steps, callbacks=cbs, return_dict=True)
            logs.update({f"val_{key}": value for key, value in val_logs.items()})
        progress.finish_epoch(data)
        cbs.on_epoch_end(epoch, logs)
        model.stop_training = runtime.strategy.any_replica(model.stop_training)
        if model.stop_training:
            break
    if epochs > 0 and getattr(model, "optimizer", None) is not None:  # Keras 3: EMA weights replace the trained ones
        model.optimizer.finalize_variable_values(model.trainable_weights)
    cbs.on_train_end(logs)
    return model.history


def _should_validate(epoch: int, validation_freq: Any) -> bool:
    if isinstance(validation_freq, int):
        return (epoch + 1) % validation_freq == 0
    return (epoch + 1) in validation_freq


def evaluate(model: Any, x: Any = None, y: Any = None, batch_size: Optional[int] = None, verbose: Any = "auto",
             sample_weight: Any = None, steps: Optional[int] = None, callbacks: Any = None,
             return_dict: bool = False, kwargs: Optional[dict] = None) -> Any:
    """Keras `evaluate`: see `Model.evaluate`."""
    if kwargs:
        raise TypeError(f"evaluate() got unexpected keyword arguments: {sorted(kwargs)}")
    strategy = model.distribute_strategy
    if getattr(strategy, "schedules_steps", False):  # steps run on remote workers
        from torchstrategy.keras import scheduled_training

        return scheduled_training.evaluate(model, x, steps, callbacks, return_dict,
                                           unsupported={"y": y, "sample_weight": sample_weight, "batch_size": batch_size})
    x, y, sample_weight = data_adapter.chief_arrays(strategy, x, y, sample_weight)
    data = _distributed(strategy, data_adapter.adapt(x, y, sample_weight, batch_size, False, steps, strategy=strategy))
    verbose = _verbosity(verbose)
    cbs = callbacks if isinstance(callbacks, callbacks_module.CallbackList) else callbacks_module.CallbackList(
        callbacks, add_progbar=verbose != 0, model=model, verbose=verbose, epochs=1, steps=data.steps)
    compiled = model._compiled
    compiled.reset()
    cbs.on_test_begin()
    try:
        first, iterator = _first_batch(data.epoch_iterator())
    except StopIteration:
        raise ValueError("evaluate() got no data: the dataset is empty.") from None
    runtime = _runtime(model, unpack(first)[0])
    batch_hooks = cbs._should_call_test_batch_hooks
    step, step_logs = 0, None
    with eval_mode(model):
        for execution in _executions(iterator, data.steps, compiled.steps_per_execution):
            if batch_hooks:
                cbs.on_test_batch_begin(step)
            for batch in execution:
                step_logs = _test_logs(model, runtime, batch)
            if batch_hooks:
                cbs.on_test_batch_end(step + compiled.steps_per_execution - 1, step_logs)
            step += len(execution)
    logs = _epoch_logs(compiled, runtime.strategy, step_logs)
    cbs.on_test_end(logs)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def _to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """Host copy; half-precision outputs of mixed-precision models come back as float32 (NumPy has no bfloat16)."""
    tensor = tensor.detach()
    if tensor.dtype in (torch.float16, torch.bfloat16):
        tensor = tensor.float()
    return tensor.cpu().numpy()


def _local_rows(strategy: Any, result: Any) -> tuple[Any, list]:
    """A predict step's outputs: their structure and, per output, this process's rows in replica order."""
    parts = strategy.experimental_local_results(result)
    leaves = [flatten_structure(part) for part in parts]
    columns = [torch.cat([leaf[i].detach() for leaf in leaves]) if len(leaves) > 1 else leaves[0][i].detach()
               for i in range(len(leaves[0]))]
    return parts[0], columns


def predict(model: Any, x: Any, batch_size: Optional[int] = None, verbose: Any = "auto", steps: Optional[int] = None,
            callbacks: Any = None, kwargs: Optional[dict] = None) -> Any:
    """Keras `predict`: see `Model.predict`."""
    if kwargs:
        raise TypeError(f"predict() got unexpected keyword arguments: {sorted(kwargs)}")
    strategy = model.distribute_strategy
    (x,) = data_adapter.chief_arrays(strategy, x)
    data = _distributed(strategy, data_adapter.adapt(x, None, None, batch_size, False, steps, strategy=strategy))
    verbose = _verbosity(verbose)
    cbs = callbacks_module.CallbackList(callbacks, add_progbar=verbose != 0, model=model, verbose=verbose,
                                        epochs=1, steps=data.steps)
    cbs.on_predict_begin()
    outputs: list = []
    runtime: Optional[Runtime] = None
    structure: Any = None
    with torch.no_grad(), eval_mode(model):
        for step, batch in _steps(data.epoch_iterator(), data.steps):
            if runtime is None:
                runtime = _runtime(model, unpack(first_replica(batch))[0])
            cbs.on_predict_batch_begin(step)
            result = runtime.strategy.run(model.predict_step, args=(batch,))
            structure, columns = _local_rows(runtime.strategy, result)
            outputs.append(columns)
            cbs.on_predict_batch_end(step, {"outputs": structure})
    cbs.on_predict_end()
    if not outputs:
        raise ValueError("predict() got no data: the input is empty.")
    columns = [_to_numpy(runtime.strategy.gather_batches([row[i] for row in outputs])) for i in range(len(outputs[0]))]
    return pack_sequence_as(structure, columns)


def _one_batch(x: Any, y: Any, sample_weight: Any) -> Any:
    def tensor(value: Any) -> Any:
        return torch.from_numpy(np.ascontiguousarray(value)) if isinstance(value, np.ndarray) else value

    x, y, sample_weight = (map_structure(tensor, v) if v is not None else None for v in (x, y, sample_weight))
    return (x,) if y is None else ((x, y) if sample_weight is None else (x, y, sample_weight))


def _batch_logs(logs: dict, return_dict: bool) -> Any:
    logs = _float_logs(logs)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def train_on_batch(model: Any, x: Any, y: Any, sample_weight: Any, reset_metrics: bool, return_dict: bool,
                   class_weight: Optional[dict] = None) -> Any:
    batch = _one_batch(x, y, sample_weight)
    runtime = _runtime(model, batch[0])
    if reset_metrics:
        model._compiled.reset()
    model.train()
    logs = _train_logs(model, runtime, runtime.strategy.place_batch(batch), _class_weight_table(class_weight))
    return _batch_logs(logs, return_dict)


def test_on_batch(model: Any, x: Any, y: Any, sample_weight: Any, reset_metrics: bool, return_dict: bool) -> Any:
    batch = _one_batch(x, y, sample_weight)
    runtime = _runtime(model, batch[0])
    if reset_metrics:
        model._compiled.reset()
    with eval_mode(model):
        logs = _test_logs(model, runtime, runtime.strategy.place_batch(batch))
    return _batch_logs(logs, return_dict)


def predict_on_batch(model: Any, x: Any) -> Any:
    inputs = _one_batch(x, None, None)
    runtime = _runtime(model, inputs[0])
    with torch.no_grad(), eval_mode(model):
        result = runtime.strategy.run(model.predict_step, args=(runtime.strategy.place_batch(inputs),))
    structure, columns = _local_rows(runtime.strategy, result)
    outs = [_to_numpy(column) for column in columns]
    return outs[0] if len(outs) == 1 else outs
