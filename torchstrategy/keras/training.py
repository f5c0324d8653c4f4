"""The one epoch and step loop behind fit/evaluate/predict and the *_on_batch calls, for every strategy.
It knows only the Strategy protocol: step inputs, running an execution's steps, waiting, reducing."""
from __future__ import annotations

import functools
import itertools
import warnings
from typing import Any, Callable, Iterator, Optional

import numpy as np
import torch

from torchstrategy import _context
from torchstrategy.keras import callbacks as callbacks_module
from torchstrategy.keras import config_flags
from torchstrategy.keras import data_adapter
from torchstrategy.keras import preflight
from torchstrategy.keras import steps
from torchstrategy.keras.data_adapter import unpack
from torchstrategy.keras.dataset_creator import DatasetCreator
from torchstrategy.keras.runtime import Runtime, eval_mode, first_replica, set_up
from torchstrategy.keras.training_state import TrainingState, apply_resume_point, check_resumed_input
from torchstrategy.nest import flatten as flatten_structure, map_structure, pack_sequence_as


def _epoch_data(strategy: Any, data: data_adapter.EpochData, mode: str, steps: Optional[int],
                options: Any = None) -> data_adapter.EpochData:
    """fit ("train"), evaluate ("test") and predict ("predict") all read their steps' inputs this way: the
    adapted data made into one item per step by the strategy (distributed over its replicas, or read on
    its workers), whatever `steps` says. `steps` is what the caller gave (None: from the data)."""
    owner = getattr(data.source, "distribute_strategy", None)
    if owner is not None and owner is not strategy and max(owner.num_replicas_in_sync,
                                                           strategy.num_replicas_in_sync) > 1:
        raise ValueError(
            f"This dataset was distributed by {type(owner).__name__} ({owner.num_replicas_in_sync} replicas), but "
            f"the model belongs to {type(strategy).__name__} ({strategy.num_replicas_in_sync} replica(s)): it was "
            f"built and compiled outside that strategy's scope, so each replica would train its own copy on part of "
            f"the data and the copies would drift apart. Create and compile the model inside "
            f"`with strategy.scope():` (as TF requires), then call fit/evaluate/predict.")
    source = strategy.step_inputs(data.source, mode, steps, options)
    return data_adapter.EpochData(source, data.steps, data.persistent)


def _check_trained_in_its_job(model: Any, strategy: Any) -> None:
    """Refuses to train a model of a one-process strategy (made outside any scope) in a process that belongs
    to a multi-process job: every process would train its own copy, whatever the input, and drift apart."""
    job = _context.job_strategy()
    if job is None or job is strategy or strategy.num_processes > 1:
        return
    raise ValueError(
        f"Model '{model.name}' was created outside the scope of the {type(job).__name__} this process belongs to "
        f"({job.num_replicas_in_sync} replicas in {job.num_processes} processes), so each process would train its "
        "own copy and the copies would drift apart. Create and compile the model inside `with strategy.scope():` "
        "(as TF requires), or after `keras.distribution.set_distribution(...)` when you use a Keras distribution.")


def _prepare(model: Any, strategy: Any, example: Any) -> Runtime:
    """The model's runtime, set up from the example batch; then whatever steps would create lazily (the
    compiled metrics) created here when the strategy needs it before the first step."""
    runtime = set_up(model, unpack(example)[0] if example is not None else None)
    compiled = model._compiled

    def build_metrics() -> None:
        if compiled is None or compiled.built or example is None:
            return
        x, y, _ = unpack(example)
        if y is not None:
            with torch.no_grad(), eval_mode(model):
                compiled.build(y, model(x, training=False))

    strategy.prepare_steps(build_metrics)
    return runtime


def _executions(iterator: Iterator[Any], steps: Optional[int], per_execution: int) -> Iterator[list]:
    """Batches grouped `per_execution` at a time (fewer at the end), at most `steps` batches in all."""
    if per_execution == 1:  # the usual case: one batch a group, without islice's list per step
        for item in iterator if steps is None else itertools.islice(iterator, max(steps, 0)):
            yield [item]
        return
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


def _train_step(model: Any, class_weights: Optional[torch.Tensor], with_logs: bool = True) -> Callable[[Any], dict]:
    """What one training step runs on each replica: `model.train_step` (maybe overridden), on batches
    given class weights when fit() has a class_weight table. Without `with_logs` (no callback reads a
    step's logs), the built-in step skips reading every metric's result each step: it returns {}."""
    if not with_logs and _builtin_step_and_metrics(model):
        return functools.partial(_unlogged_train_step, model, class_weights)
    return functools.partial(_checked_train_step, model, class_weights)


def _builtin_step_and_metrics(model: Any) -> bool:
    """Whether `model` runs Model's own `train_step` and `compute_metrics` (neither overridden by its class
    nor set on the instance), so that nothing but fit sees what the step returns."""
    from torchstrategy.keras.models import Model  # models.py imports this module

    return all(getattr(type(model), name, None) is getattr(Model, name) and name not in vars(model)
               for name in ("train_step", "compute_metrics"))


def _checked_train_step(model: Any, class_weights: Optional[torch.Tensor], data: Any) -> dict:
    logs = model.train_step(data if class_weights is None else _with_class_weights(class_weights, data))
    return _step_logs(model, "train_step", logs)


def _unlogged_train_step(model: Any, class_weights: Optional[torch.Tensor], data: Any) -> dict:
    return steps.train_step(model, data if class_weights is None else _with_class_weights(class_weights, data),
                            with_logs=False)


def _checked_test_step(model: Any, data: Any) -> dict:
    return _step_logs(model, "test_step", model.test_step(data))


def _step_logs(model: Any, name: str, logs: Any) -> Any:
    """A step's logs; None (a custom step that forgot its `return`) is refused before a made-up 0.0 is logged."""
    if logs is None:
        raise ValueError(
            f"{type(model).__name__}.{name}() returned None. A custom {name} must return its logs, a dict of "
            "metric names to values, e.g. `return {m.name: m.result() for m in self.metrics}`.")
    return logs


def _logs_of(result: Any) -> Any:
    """Replica 0's logs of an execution's last step (None when its steps ran asynchronously)."""
    return None if result is None else first_replica(result)


def _raise_explained(strategy: Any, error: RuntimeError, where: str) -> None:
    """Re-raises `error`, as the strategy's clearer error when it can say more (a replica stopped answering)."""
    clearer = strategy.explain_failure(error, where)
    if clearer is None:
        raise error
    raise clearer from error


def _agreed_stop(strategy: Any, flag: bool, where: str) -> bool:
    """`stop_training` agreed over replicas (True if any replica set it); a timeout names who did not answer."""
    try:
        return strategy.any_replica(flag)
    except RuntimeError as error:
        _raise_explained(strategy, error, where)
        raise


def _epoch_logs(compiled: Any, strategy: Any, step_logs: Any) -> dict:
    """Metric results reduced over replicas; a custom step's own logs when they are not the metrics (Keras)."""
    compiled.reduce_across_replicas(strategy)
    return _logs_of_epoch(compiled, step_logs)


def _logs_of_epoch(compiled: Any, step_logs: Any) -> dict:
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


def _labelled(name: str) -> Callable[[Callable], Callable]:
    """Runs a loop as public call `name` on its model's progress beacon, so that a replica left waiting in one
    of its collectives can name it (distribute/parts/progress.py)."""

    def decorate(loop: Callable) -> Callable:
        @functools.wraps(loop)
        def run_labelled(model: Any, *args: Any, **kwargs: Any) -> Any:
            with model.distribute_strategy.progress.call(name):
                return loop(model, *args, **kwargs)

        return run_labelled

    return decorate


@_labelled("model.fit")
def fit(model: Any, x: Any = None, y: Any = None, batch_size: Optional[int] = None, epochs: int = 1,
        verbose: Any = "auto", callbacks: Any = None, validation_split: float = 0.0, validation_data: Any = None,
        shuffle: Any = True, class_weight: Any = None, sample_weight: Any = None, initial_epoch: int = 0,
        steps_per_epoch: Optional[int] = None, validation_steps: Optional[int] = None,
        validation_batch_size: Optional[int] = None, validation_freq: Any = 1, kwargs: Optional[dict] = None) -> Any:
    """Keras `fit`: see `Model.fit`."""
    if kwargs:
        raise TypeError(f"fit() got unexpected keyword arguments: {sorted(kwargs)}")
    preflight.check_epochs(epochs, initial_epoch)
    epochs, steps_per_epoch = config_flags.capped_epochs(epochs), config_flags.capped_steps(steps_per_epoch)
    strategy = model.distribute_strategy
    class_weights = _class_weight_table(class_weight)
    x, y, sample_weight = data_adapter.chief_inputs(strategy, x, y, sample_weight)
    if validation_split and validation_data is None:
        (x, y, sample_weight), validation_data = data_adapter.split_validation(x, y, sample_weight, validation_split)
    data = _epoch_data(strategy, data_adapter.adapt_everywhere(strategy, x, y, sample_weight, batch_size, shuffle,
                                                               steps_per_epoch), "train", steps_per_epoch,
                       _input_options(x))
    _check_trained_in_its_job(model, strategy)  # after _epoch_data, whose refusal of a foreign dataset says more
    val_data = None
    if validation_data is not None:
        val_data = unpack(validation_data) if isinstance(validation_data, (tuple, list)) \
            else (validation_data, None, None)
    verbose = _verbosity(verbose)
    cbs = callbacks_module.CallbackList(callbacks, add_history=True, add_progbar=verbose != 0, model=model,
                                        verbose=verbose, epochs=epochs, steps=data.steps)
    state = TrainingState()
    cbs.set_training_state(state)
    cbs.report_to(strategy.progress)
    strategy.progress.follow(state.progress)  # where this replica is (epoch, batch), for the others
    try:
        _fit_epochs(model, strategy, state, cbs, data, val_data, epochs, initial_epoch, class_weights,
                           validation_freq, validation_steps, validation_batch_size, batch_size)
    finally:
        state.close()  # what callbacks hold for this call (BackupAndRestore's lock), also when fit raises
    return model.history


def _fit_epochs(model: Any, strategy: Any, state: TrainingState, cbs: Any, data: Any, val_data: Any, epochs: int,
                initial_epoch: int, class_weights: Any, validation_freq: Any, validation_steps: Optional[int],
                validation_batch_size: Optional[int], batch_size: Optional[int]) -> dict:
    """fit's callbacks and epochs, from on_train_begin to on_train_end; returns the last epoch's logs."""
    model.stop_training = False
    compiled = model._compiled
    per_execution = compiled.steps_per_execution
    logged_step = _train_step(model, class_weights)
    unlogged_step = _train_step(model, class_weights, with_logs=False)  # when no callback reads a step's logs
    runtime: Optional[Runtime] = None
    logs: dict = {}
    progress = state.progress
    cbs.on_train_begin()
    resume = state.take_resume_point()  # left by BackupAndRestore.on_train_begin
    if resume is not None:
        check_resumed_input(resume, data, strategy)
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
            example = strategy.example_batch(first) if first is not None else None
            runtime = state.runtime = _prepare(model, strategy, example)
            preflight.check_before_training(model, unpack(example)[0] if example is not None else None,
                                            class_weights, val_data)
            runtime.module.train()
        if resuming:
            apply_resume_point(model, runtime, resume, progress)
            resume = None
        progress.start_epoch(epoch, first_step, data, peeked=first is not None)
        cbs.on_epoch_begin(epoch)
        batch_hooks = cbs._should_call_train_batch_hooks  # else skip per-step host syncs
        step_fn = logged_step if batch_hooks else unlogged_step
        limit = None if data.steps is None else data.steps - first_step
        step, step_logs = first_step, None
        # Keras: callbacks see each execution of `steps_per_execution` steps as one batch, beginning at its
        # first step index and ending at first + steps_per_execution - 1 (TF 2.21 reports that even for a
        # shorter last execution: 10 steps in 4s end at 3, 7 and 11)
        for execution in _executions(iterator, limit, per_execution):
            if batch_hooks:
                cbs.on_train_batch_begin(step)
            try:
                step_logs = _logs_of(runtime.strategy.train_steps(step_fn, execution))
            except RuntimeError as error:
                _raise_explained(runtime.strategy, error, f"at epoch {epoch + 1}, batch {progress.step}")
            progress.finish_steps(len(execution))
            if batch_hooks:
                cbs.on_train_batch_end(step + per_execution - 1, step_logs)
            step += len(execution)
            if batch_hooks:
                # a callback may stop one replica mid-epoch: all must agree, or the others hang
                model.stop_training = _agreed_stop(runtime.strategy, model.stop_training,
                                                   f"at epoch {epoch + 1}, batch {progress.step - 1}")
            if model.stop_training:
                break
        runtime.strategy.wait_steps()
        validating = val_data is not None and _should_validate(epoch, validation_freq)
        # the stop_training agreed below needs no collective of its own when no process runs code that could
        # set it after this point (only History/ProgbarLogger, no validation): it rides on the metric sums
        quiet = cbs.only_loggers and not validating
        sums = compiled.reduce_across_replicas(runtime.strategy, (float(not quiet), float(bool(model.stop_training))))
        logs = _logs_of_epoch(compiled, step_logs)
        if validating:
            val_logs = evaluate(model, x=val_data[0], y=val_data[1], sample_weight=val_data[2],
                                batch_size=validation_batch_size or batch_size, verbose=0,
                                steps=validation_steps, callbacks=cbs, return_dict=True)
            logs.update({f"val_{key}": value for key, value in val_logs.items()})
        progress.finish_epoch(data)
        cbs.on_epoch_end(epoch, logs)
        if sums is not None and sums[0] == 0:  # every process was quiet: the sums already agree on stopping
            model.stop_training = sums[1] > 0
        else:
            model.stop_training = _agreed_stop(runtime.strategy, model.stop_training, f"at the end of epoch {epoch + 1}")
        if model.stop_training:
            break
    if epochs > 0 and getattr(model, "optimizer", None) is not None:  # Keras 3: EMA weights replace the trained ones
        model.optimizer.finalize_variable_values(model.trainable_weights)
    cbs.on_train_end(logs)
    return logs


def _input_options(x: Any) -> Any:
    """The tf.distribute.InputOptions a DatasetCreator carries (None for other inputs)."""
    return x.input_options if isinstance(x, DatasetCreator) else None


def _should_validate(epoch: int, validation_freq: Any) -> bool:
    if isinstance(validation_freq, int):
        return (epoch + 1) % validation_freq == 0
    return (epoch + 1) in validation_freq


@_labelled("model.evaluate")
def evaluate(model: Any, x: Any = None, y: Any = None, batch_size: Optional[int] = None, verbose: Any = "auto",
             sample_weight: Any = None, steps: Optional[int] = None, callbacks: Any = None,
             return_dict: bool = False, kwargs: Optional[dict] = None) -> Any:
    """Keras `evaluate`: see `Model.evaluate`."""
    if kwargs:
        raise TypeError(f"evaluate() got unexpected keyword arguments: {sorted(kwargs)}")
    steps = config_flags.capped_steps(steps)
    strategy = model.distribute_strategy
    x, y, sample_weight = data_adapter.chief_inputs(strategy, x, y, sample_weight)
    data = _epoch_data(strategy, data_adapter.adapt_everywhere(strategy, x, y, sample_weight, batch_size, False, steps),
                       "test", steps, _input_options(x))
    verbose = _verbosity(verbose)
    cbs = callbacks if isinstance(callbacks, callbacks_module.CallbackList) else callbacks_module.CallbackList(
        callbacks, add_progbar=verbose != 0, model=model, verbose=verbose, epochs=1, steps=data.steps)
    cbs.report_to(strategy.progress)
    compiled = model._compiled
    compiled.reset()
    cbs.on_test_begin()
    try:
        first, iterator = _first_batch(data.epoch_iterator())
    except StopIteration:
        raise ValueError("evaluate() got no data: the dataset is empty.") from None
    runtime = _prepare(model, strategy, strategy.example_batch(first))
    batch_hooks = cbs._should_call_test_batch_hooks
    per_execution = compiled.steps_per_execution
    step, step_logs = 0, None
    with eval_mode(model):
        for execution in _executions(iterator, data.steps, per_execution):
            if batch_hooks:
                cbs.on_test_batch_begin(step)
            step_logs = _logs_of(runtime.strategy.test_steps(functools.partial(_checked_test_step, model), execution))
            if batch_hooks:
                cbs.on_test_batch_end(step + per_execution - 1, step_logs)
            step += len(execution)
        runtime.strategy.wait_steps()
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


@_labelled("model.predict")
def predict(model: Any, x: Any, batch_size: Optional[int] = None, verbose: Any = "auto", steps: Optional[int] = None,
            callbacks: Any = None, kwargs: Optional[dict] = None) -> Any:
    """Keras `predict`: see `Model.predict`."""
    if kwargs:
        raise TypeError(f"predict() got unexpected keyword arguments: {sorted(kwargs)}")
    steps = config_flags.capped_steps(steps)
    strategy = model.distribute_strategy
    (x,) = data_adapter.chief_inputs(strategy, x)
    data = _epoch_data(strategy, data_adapter.adapt_everywhere(strategy, x, None, None, batch_size, False, steps),
                       "predict", steps, _input_options(x))
    verbose = _verbosity(verbose)
    cbs = callbacks_module.CallbackList(callbacks, add_progbar=verbose != 0, model=model, verbose=verbose,
                                        epochs=1, steps=data.steps)
    cbs.report_to(strategy.progress)
    per_execution = model._compiled.steps_per_execution if model._compiled is not None else 1
    cbs.on_predict_begin()
    outputs: list = []
    runtime: Optional[Runtime] = None
    structure: Any = None
    step = 0
    with torch.no_grad(), eval_mode(model):
        for execution in _executions(data.epoch_iterator(), data.steps, per_execution):
            if runtime is None:
                runtime = _prepare(model, strategy, strategy.example_batch(execution[0]))
            cbs.on_predict_batch_begin(step)
            for result in runtime.strategy.predict_steps(model.predict_step, execution):
                structure, columns = _local_rows(runtime.strategy, result)
                outputs.append(columns)
            cbs.on_predict_batch_end(step + per_execution - 1, {"outputs": structure})
            step += len(execution)
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


def train_on_batch(model: Any, x: Any, y: Any, sample_weight: Any, return_dict: bool,
                   class_weight: Optional[dict] = None) -> Any:
    _check_trained_in_its_job(model, model.distribute_strategy)
    batch = _one_batch(x, y, sample_weight)
    runtime = set_up(model, batch[0])
    model._compiled.reset()  # Keras 3: the logs are this batch's alone
    model.train()
    step_fn = _train_step(model, _class_weight_table(class_weight))
    logs = first_replica(runtime.strategy.run(step_fn, args=(runtime.strategy.place_batch(batch),)))
    return _batch_logs(logs, return_dict)


def test_on_batch(model: Any, x: Any, y: Any, sample_weight: Any, return_dict: bool) -> Any:
    batch = _one_batch(x, y, sample_weight)
    runtime = set_up(model, batch[0])
    model._compiled.reset()  # Keras 3: the logs are this batch's alone
    with torch.no_grad(), eval_mode(model):
        logs = first_replica(runtime.strategy.run(functools.partial(_checked_test_step, model),
                                                    args=(runtime.strategy.place_batch(batch),)))
    return _batch_logs(logs, return_dict)


def predict_on_batch(model: Any, x: Any) -> Any:
    inputs = _one_batch(x, None, None)
    runtime = set_up(model, inputs[0])
    with torch.no_grad(), eval_mode(model):
        result = runtime.strategy.run(model.predict_step, args=(runtime.strategy.place_batch(inputs),))
    structure, columns = _local_rows(runtime.strategy, result)
    outs = [_to_numpy(column) for column in columns]
    return outs[0] if len(outs) == 1 else outs
