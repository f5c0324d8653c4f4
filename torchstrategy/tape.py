"""Custom-loop building blocks with TF names: GradientTape over torch autograd, the
`function` decorator, and the tf.nn loss-scaling helpers that make replica sums exact."""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional

import torch

from torchstrategy import _context
from torchstrategy.graph_compat import UnconnectedGradients
from torchstrategy.nest import flatten as flatten_structure, pack_sequence_as


class GradientTape:
    """Records the computation inside `with` so `gradient` can differentiate it (tf.GradientTape).

    PyTorch records every operation on tensors that require grad, so the tape mostly makes sure
    recording is on and that constants passed to `watch` require grad.

    >>> w = torch.tensor(3.0, requires_grad=True)
    >>> with GradientTape() as tape:
    ...     y = w * w
    >>> float(tape.gradient(y, w))
    6.0
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._used = False
        self._grad_mode: Optional[torch.autograd.grad_mode.set_grad_enabled] = None
        self._watched: list[torch.Tensor] = []

    def __enter__(self) -> "GradientTape":
        self._grad_mode = torch.enable_grad()
        self._grad_mode.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._grad_mode is not None:
            self._grad_mode.__exit__(*exc)
            self._grad_mode = None

    def watch(self, tensor: Any) -> None:
        """Makes the given tensors (any nest) differentiable sources from here on."""
        for leaf in flatten_structure(tensor):
            if not isinstance(leaf, torch.Tensor):
                raise TypeError(f"GradientTape.watch takes tensors; got {type(leaf).__name__}.")
            if not leaf.requires_grad:
                if not leaf.is_floating_point() and not leaf.is_complex():
                    raise ValueError(f"Cannot watch a tensor of dtype {leaf.dtype}: only floating tensors "
                                     f"have gradients. Cast it first, e.g. tf.cast(x, tf.float32).")
                leaf.requires_grad_(True)
            self._watched.append(leaf)

    def watched_variables(self) -> list[torch.Tensor]:
        return list(self._watched)

    def stop_recording(self) -> torch.no_grad:
        """Context in which computation is not recorded."""
        return torch.no_grad()

    def reset(self) -> None:
        self._used = False
        self._watched.clear()

    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: Any = UnconnectedGradients.NONE,
    ) -> Any:
        """d(sum of target)/d(source) for each source, nested like `sources`; None for a source the target does not
        depend on, or zeros with `unconnected_gradients=tf.UnconnectedGradients.ZERO` (or 'zero')."""
        try:
            unconnected = UnconnectedGradients(unconnected_gradients)
        except ValueError:
            raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}; use "
                             "tf.UnconnectedGradients.NONE or tf.UnconnectedGradients.ZERO (or 'none' / 'zero')."
                             ) from None
        if self._used and not self._persistent:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of gradients. "
                "Create it with GradientTape(persistent=True) to call gradient() more than once."
            )
        self._used = True
        targets = [t for t in flatten_structure(target) if t is not None]
        flat_sources = flatten_structure(sources)
        for source in flat_sources:
            if not isinstance(source, torch.Tensor):
                raise TypeError(f"GradientTape.gradient sources must be tensors; got {type(source).__name__}.")
        grads_out = flatten_structure(output_gradients) if output_gradients is not None else [None] * len(targets)
        grads_out = [torch.ones_like(t) if g is None else torch.as_tensor(g, dtype=t.dtype, device=t.device)
                     for t, g in zip(targets, grads_out)]
        wanted = [i for i, s in enumerate(flat_sources) if s.requires_grad]
        connected = [t for t in targets if t.requires_grad]
        results: list[Optional[torch.Tensor]] = [None] * len(flat_sources)
        if wanted and connected:
            replica = _context.current_replica()
            strategy = replica.strategy if replica is not None else _context.get_strategy()
            grads = strategy.gradients(connected, [flat_sources[i] for i in wanted],
                                       [g for t, g in zip(targets, grads_out) if t.requires_grad],
                                       retain_graph=self._persistent)
            for index, grad in zip(wanted, grads):
                # gradients of EagerTensor targets come back as plain tensors (optimizers run at full speed)
                results[index] = grad if grad is None or type(grad) is torch.Tensor else grad.as_subclass(torch.Tensor)
        if unconnected is UnconnectedGradients.ZERO:
            results = [torch.zeros_like(s) if r is None else r for s, r in zip(flat_sources, results)]
        if isinstance(sources, torch.Tensor):
            return results[0]
        return pack_sequence_as(sources, results)

    def _start_jacobian(self, unconnected_gradients: Any) -> UnconnectedGradients:
        try:
            unconnected = UnconnectedGradients(unconnected_gradients)
        except ValueError:
            raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}; use "
                             "tf.UnconnectedGradients.NONE or tf.UnconnectedGradients.ZERO.") from None
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of gradients "
                               "(or jacobians). Create it with GradientTape(persistent=True) to compute more.")
        self._used = True
        return unconnected

    def jacobian(self, target: Any, sources: Any, unconnected_gradients: Any = UnconnectedGradients.NONE,
                 parallel_iterations: Optional[int] = None, experimental_use_pfor: bool = True) -> Any:
        """d target[i...] / d source[j...] for each source, of shape target.shape + source.shape, nested like
        `sources`; None (or zeros) for a source the target does not depend on. One backward pass per target
        element (parallel_iterations / experimental_use_pfor only tune TF's vectorisation)."""
        unconnected = self._start_jacobian(unconnected_gradients)
        flat_sources = flatten_structure(sources)
        rows = _gradient_rows(torch.as_tensor(target).reshape(-1), flat_sources)
        results = []
        for source, per_row in zip(flat_sources, rows):
            shape = tuple(torch.as_tensor(target).shape) + tuple(source.shape)
            if per_row is None:
                results.append(source.new_zeros(shape) if unconnected is UnconnectedGradients.ZERO else None)
            else:
                results.append(per_row.reshape(shape))
        return results[0] if isinstance(sources, torch.Tensor) else pack_sequence_as(sources, results)

    def batch_jacobian(self, target: torch.Tensor, source: torch.Tensor,
                       unconnected_gradients: Any = UnconnectedGradients.NONE,
                       parallel_iterations: Optional[int] = None,
                       experimental_use_pfor: bool = True) -> Optional[torch.Tensor]:
        """Per example i of the leading batch axis: d target[i, ...] / d source[i, ...], of shape
        (batch,) + target.shape[1:] + source.shape[1:] (TF assumes, as here, that examples do not mix)."""
        unconnected = self._start_jacobian(unconnected_gradients)
        target = torch.as_tensor(target)
        if target.dim() < 1 or source.dim() < 1 or target.shape[0] != source.shape[0]:
            raise ValueError(f"batch_jacobian needs target and source with the same leading batch size; got shapes "
                             f"{tuple(target.shape)} and {tuple(source.shape)}.")
        batch = target.shape[0]
        columns = target.reshape(batch, -1)
        per_column = [_gradient_rows(columns[:, k].sum().reshape(1), [source])[0] for k in range(columns.shape[1])]
        shape = (batch,) + tuple(target.shape[1:]) + tuple(source.shape[1:])
        if not per_column or per_column[0] is None:
            return source.new_zeros(shape) if unconnected is UnconnectedGradients.ZERO else None
        stacked = torch.stack([c.reshape(1, batch, -1)[0] for c in per_column], dim=1)  # (batch, k, source...)
        return stacked.reshape(shape)


def _gradient_rows(flat_target: torch.Tensor, sources: list) -> list:
    """For each source: the stacked gradients of every element of the 1-D `flat_target` (shape (n,) + source's),
    or None when no element depends on it."""
    wanted = [i for i, s in enumerate(sources) if isinstance(s, torch.Tensor) and s.requires_grad]
    rows: list = [[] for _ in sources]
    connected = flat_target.requires_grad and bool(wanted)
    for element in flat_target:
        grads = (torch.autograd.grad(element, [sources[i] for i in wanted], retain_graph=True, allow_unused=True)
                 if connected else [None] * len(wanted))
        for index, grad in zip(wanted, grads):
            rows[index].append(grad)
    out = []
    for index, source in enumerate(sources):
        grads = rows[index]
        if not grads or all(g is None for g in grads):
            out.append(None)
        else:
            out.append(torch.stack([torch.zeros_like(source) if g is None else g for g in grads]))
    return out


def function(func: Optional[Callable] = None, input_signature: Any = None, autograph: bool = True,
             jit_compile: Optional[bool] = None, reduce_retracing: bool = False, experimental_implements: Any = None,
             experimental_autograph_options: Any = None, experimental_attributes: Any = None,
             experimental_relax_shapes: Any = None, experimental_compile: Optional[bool] = None,
             experimental_follow_type_hints: Any = None) -> Any:
    """`@tf.function`: runs the Python function as is (eager, which TF's tracing only speeds up);
    `jit_compile=True` (or the older `experimental_compile=True`) compiles it with torch.compile. The
    tracing options (autograph, reduce_retracing, experimental_*) change nothing when running eagerly.

    >>> @function
    ... def double(x):
    ...     return 2 * x
    >>> int(double(torch.tensor(2)))
    4
    """
    if jit_compile is None:
        jit_compile = experimental_compile
    if func is not None and not callable(func):
        raise TypeError(f"tf.function decorates a callable; got {type(func).__name__}.")

    def decorate(fn: Callable) -> Callable:
        if not jit_compile:
            @functools.wraps(fn)
            def eager(*args: Any, **kw: Any) -> Any:
                return fn(*args, **kw)

            eager.python_function = fn  # type: ignore[attr-defined]
            eager.input_signature = _as_signature(input_signature)  # type: ignore[attr-defined]  (saved_model)
            return eager
        compiled = torch.compile(fn)

        @functools.wraps(fn)
        def run(*args: Any, **kw: Any) -> Any:
            if _context.config_setting("run_functions_eagerly"):  # tf.config.run_functions_eagerly(True)
                return fn(*args, **kw)
            return compiled(*args, **kw)

        run.python_function = fn  # type: ignore[attr-defined]
        run.input_signature = _as_signature(input_signature)  # type: ignore[attr-defined]
        return run

    return decorate(func) if func is not None else decorate


def _as_signature(input_signature: Any) -> Optional[list]:
    """The specs a function was declared with (kept for tf.saved_model.save; calls stay eager)."""
    if input_signature is None:
        return None
    if not isinstance(input_signature, (list, tuple)):
        raise TypeError(f"input_signature must be a list or tuple of tf.TensorSpec; got "
                        f"{type(input_signature).__name__}.")
    return list(input_signature)


def compute_average_loss(
    per_example_loss: Any,
    sample_weight: Any = None,
    global_batch_size: Optional[int] = None,
) -> torch.Tensor:
    """Sum of the per-example losses divided by the GLOBAL batch size (tf.nn.compute_average_loss).

    Each replica returns its share, so gradients summed over replicas equal the gradient of
    the mean over the whole global batch. Without `global_batch_size`, it is this replica's
    batch size times `num_replicas_in_sync`.
    """
    loss = torch.as_tensor(per_example_loss)
    if sample_weight is not None:
        loss = loss * torch.as_tensor(sample_weight, dtype=loss.dtype, device=loss.device)
    if global_batch_size is None:
        per_replica = loss.shape[0] if loss.dim() else 1
        global_batch_size = per_replica * _step_replicas()
    if isinstance(global_batch_size, torch.Tensor):
        global_batch_size = int(global_batch_size)
    if global_batch_size <= 0:
        raise ValueError(f"global_batch_size must be positive; got {global_batch_size}.")
    return loss.sum() / global_batch_size


def scale_regularization_loss(regularization_loss: Any) -> torch.Tensor:
    """Sum of the regularization losses divided by the number of replicas (tf.nn semantics)."""
    if isinstance(regularization_loss, (list, tuple)):
        total = torch.stack([torch.as_tensor(r) for r in regularization_loss]).sum() if regularization_loss \
            else torch.tensor(0.0)
    else:
        total = torch.as_tensor(regularization_loss)
    return total / _step_replicas()


def _step_replicas() -> int:
    """Replica steps sharing a global batch: num_replicas_in_sync, or 1 on an SPMD mesh (the step sees the
    whole global batch)."""
    return int(_context.get_strategy().num_step_replicas)

