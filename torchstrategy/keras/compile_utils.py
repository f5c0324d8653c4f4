"""What `compile()` configured: the resolved losses (per output, weighted), the loss tracker and
the metrics ('accuracy' resolved on the first batch, as Keras does), and their logs."""
from __future__ import annotations

import threading
from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras import losses as losses_module
from torchstrategy.keras import metrics as metrics_module

_BUILD_LOCK = threading.Lock()


def _output_list(model: Any, value: Any) -> list:
    if isinstance(value, dict):
        names = getattr(model, "output_names", sorted(value))
        return [value[name] for name in names]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _float32_predictions(preds: list) -> list:
    """float16/bfloat16 predictions (mixed-precision models) as float32: Keras computes losses and
    metrics in float32, whatever the model's compute dtype."""
    out = []
    for pred in preds:
        if isinstance(pred, torch.Tensor) and pred.dtype in (torch.float16, torch.bfloat16):
            logits, mask = getattr(pred, "_keras_logits", None), getattr(pred, "_keras_mask", None)
            pred = pred.float()
            if logits is not None:  # softmax/sigmoid outputs keep pointing the loss at their logits
                pred._keras_logits = logits
            if mask is not None:  # and a masked output keeps masking its loss and metrics
                pred._keras_mask = mask
        out.append(pred)
    return out


def _plain_output(y_pred: Any) -> bool:
    """Whether a model's output is one tensor the losses and metrics take as it is (not float16/bfloat16, which
    `_float32_predictions` casts)."""
    return isinstance(y_pred, torch.Tensor) and y_pred.dtype not in (torch.float16, torch.bfloat16)


def _masked_metric_weights(sample_weight: Any, mask: Any) -> torch.Tensor:
    """Keras 3's rule for a masked prediction in a mean metric (MeanMetricWrapper): the mask, as 0/1,
    multiplies the sample weights, so masked positions leave the mean (accuracy over unmasked steps)."""
    mask = torch.as_tensor(mask)
    float_mask = mask.to(torch.float32)
    if sample_weight is None:
        return float_mask
    weights = torch.as_tensor(sample_weight).to(device=float_mask.device, dtype=torch.float32)
    if weights.ndim == float_mask.ndim + 1 and weights.shape[-1] == 1:
        weights = weights.squeeze(-1)
    while weights.ndim < float_mask.ndim:  # per-sample weights spread over the masked (time) axis
        weights = weights.unsqueeze(-1)
    try:
        return weights * float_mask
    except RuntimeError:
        raise ValueError(f"sample_weight of shape {tuple(weights.shape)} does not fit the output's mask of shape "
                         f"{tuple(mask.shape)}: pass one weight per sample or per masked position.") from None


def _is_config(spec: Any) -> bool:
    """A serialized object ({'class_name', 'config'}), as opposed to a per-output dict."""
    return isinstance(spec, dict) and "class_name" in spec


def _per_output(model: Any, spec: Any, count: int, what: str) -> list:
    if isinstance(spec, dict) and not _is_config(spec):
        names = getattr(model, "output_names", None)
        if names is None:
            raise ValueError(f"A dict of {what} needs a functional model with named outputs.")
        unknown = sorted(set(spec) - set(names))
        if unknown:
            raise ValueError(f"Unknown output name(s) {unknown} in the {what} dict; the model's outputs are {names}.")
        return [spec.get(name) for name in names]
    if isinstance(spec, (list, tuple)) and count > 1:
        if len(spec) != count:
            raise ValueError(f"The model has {count} outputs but {len(spec)} {what} were given.")
        return list(spec)
    return [spec] * count


def _metric_leaves(spec: Any) -> list:
    """Every single metric spec in a metrics argument (lists, per-output dicts), configs kept whole."""
    if spec is None:
        return []
    if isinstance(spec, (list, tuple)):
        return [leaf for item in spec for leaf in _metric_leaves(item)]
    if isinstance(spec, dict) and not _is_config(spec):
        return [leaf for item in spec.values() for leaf in _metric_leaves(item)]
    return [spec]


def _state_layout(metrics: list) -> list:
    """Each metric's state shapes, in order (names may differ between processes; shapes must not)."""
    return [[tuple(t.shape) for t in metric._state_tensors()] for metric in metrics]


def _align_state_layouts(metrics: list, strategy: Any) -> None:
    """Makes every process's metric states line up before they are summed element-wise: a metric whose
    state is made at its first update (AUC(multi_label=True) without num_labels) and that saw no batch
    here is built like the other processes' copy; a layout that still differs is refused, not mis-summed."""
    layouts = strategy.gather_objects(_state_layout(metrics))
    if all(layout == layouts[0] for layout in layouts):  # the same answer on every process: no more collectives
        return
    for index, metric in enumerate(metrics):
        if metric._state_tensors() or not hasattr(metric, "_build_like"):
            continue
        built = [layout[index] for layout in layouts if index < len(layout) and layout[index]]
        if built:
            metric._build_like(built[0])
    local = _state_layout(metrics)
    layouts = strategy.gather_objects(local)
    if any(layout != local for layout in layouts):
        names = [metric.name for metric in metrics]
        detail = "; ".join(f"process {rank}: {layout}" for rank, layout in enumerate(layouts))
        raise ValueError(
            f"The metric states (of {names} here) differ between processes, so they cannot be summed across "
            f"replicas (state shapes per process: {detail}). Every replica must compute the same metrics on "
            "outputs of the same shape; for AUC(multi_label=True) pass num_labels= so its state exists before "
            "the first batch.")


class CompiledState:
    """Losses and metrics of a compiled model, and the per-step/epoch computations on them."""

    def __init__(self, model: Any, loss: Any, metrics: Any, loss_weights: Any = None,
                 weighted_metrics: Any = None, jit_compile: bool = False, steps_per_execution: int = 1) -> None:
        self.model = model
        self.loss_spec = loss
        self.metrics_spec = metrics
        self.weighted_metrics_spec = weighted_metrics
        self.loss_weights_spec = loss_weights
        self.jit_compile = jit_compile
        self.steps_per_execution = int(steps_per_execution)
        self.loss_tracker = metrics_module.Mean(name="loss")
        self._losses: Optional[list] = None
        self._weights: Optional[list] = None
        self._metrics: Optional[list] = None  # (output index, metric, weighted)
        self._output_names: list[str] = []
        self._output_trackers: list = []  # per-output loss means ('<output>_loss'), multi-output models only
        self._scratch: dict = {}  # thread id -> that replica thread's last per-output losses
        self._pending_states: Optional[list] = None  # metric states restored before the metrics exist
        self._agreed_layout: Optional[list] = None  # metric state shapes all processes last agreed on, all made
        self._single: Optional[tuple] = None  # (loss or None, metrics) of a single-output model: see _build
        if loss is not None:  # resolve eagerly so a bad name fails at compile time
            flat = list(loss.values()) if isinstance(loss, dict) and not _is_config(loss) else (
                loss if isinstance(loss, (list, tuple)) else [loss])
            for item in flat:
                if item is not None:
                    losses_module.get(item)
        for spec in (metrics, weighted_metrics):
            for item in _metric_leaves(spec):
                if not (isinstance(item, str) and item in ("accuracy", "acc")):
                    metrics_module.get(item)

    # ----- building on the first batch -----------------------------------------------------
    @property
    def built(self) -> bool:
        """True once the compiled metrics exist (built from the first batch's targets and outputs)."""
        return self._metrics is not None

    def build(self, y: Any, y_pred: Any) -> None:
        """Creates the compiled metrics from one batch's targets and outputs, unless they exist."""
        with _BUILD_LOCK:
            if self._metrics is None:
                self._build(y, y_pred)

    def _build(self, y: Any, y_pred: Any) -> None:
        preds = _output_list(self.model, y_pred)
        count = len(preds)
        names = list(getattr(self.model, "output_names", [])) if count > 1 else []
        self._output_names = names if len(names) == count else [f"output_{i + 1}" for i in range(count)] \
            if count > 1 else [""]
        raw_losses = _per_output(self.model, self.loss_spec, count, "losses")
        self._losses = [losses_module.get(spec) if spec is not None else None for spec in raw_losses]
        if count > 1:
            self._output_trackers = [metrics_module.Mean(name=f"{name}_loss") if loss is not None else None
                                     for name, loss in zip(self._output_names, self._losses)]
        if self.loss_weights_spec is None:
            self._weights = [1.0] * count
        else:
            spec = self.loss_weights_spec
            if isinstance(spec, (list, tuple)) and count == 1:  # Keras 3.15 takes [w] for one output
                if len(spec) != 1:
                    raise ValueError(f"`loss_weights` must match the number of losses, got 1 losses and "
                                     f"{len(spec)} weights.")
                spec = spec[0]
            self._weights = [1.0 if w is None else float(w) for w in _per_output(self.model, spec, count, "loss_weights")]
        trues = _output_list(self.model, y) if y is not None else [None] * count
        self._metrics = []
        for weighted, spec in ((False, self.metrics_spec), (True, self.weighted_metrics_spec)):
            if spec is None:
                continue
            per_output = spec if ((isinstance(spec, dict) and not _is_config(spec)) or (count > 1 and isinstance(spec, (list, tuple))
                                  and all(isinstance(s, (list, tuple)) for s in spec))) else [spec] * count
            per_output = _per_output(self.model, per_output, count, "metrics") if isinstance(per_output, dict) \
                else per_output
            for index, items in enumerate(per_output):
                for item in ([] if items is None else (items if isinstance(items, (list, tuple)) else [items])):
                    metric = self._resolve_metric(item, index, trues[index], preds[index])
                    self._metrics.append((index, metric, weighted))
        # What every step of a single-output model needs, decided once here (the only place _losses, _weights and
        # _metrics are set): its loss (None unless one at weight 1) and its metrics, used by the steps' fast paths
        self._single = (self._losses[0] if self._weights[0] == 1.0 else None, [(metric, weighted) for _, metric, weighted in self._metrics]) \
            if count == 1 else None
        if self._pending_states is not None:
            states, self._pending_states = self._pending_states, None
            self.load_metric_states(states)

    def _resolve_metric(self, item: Any, index: int, y_true: Any, y_pred: Any) -> Any:
        prefix = f"{self._output_names[index]}_" if self._output_names[index] else ""
        if isinstance(item, str) and item in ("accuracy", "acc"):
            loss = self._losses[index] if self._losses else None
            metric = metrics_module.resolve_accuracy(item, loss, y_true, y_pred)
        else:
            metric = metrics_module.get(item)
            if isinstance(item, metrics_module.Metric):
                metric = item
        if prefix:
            metric.name = prefix + metric.name
        return metric

    # ----- per step ------------------------------------------------------------------------
    def compute_loss(self, y: Any, y_pred: Any, sample_weight: Any, regularization: list) -> torch.Tensor:
        """The total loss: weighted sum over outputs plus regularization penalties."""
        if self._losses is None:
            with _BUILD_LOCK:  # replica threads of one process share this state: build it once
                if self._losses is None:
                    self._build(y, y_pred)
        single = self._single
        if single is not None and single[0] is not None and _plain_output(y_pred) and isinstance(y, torch.Tensor) \
                and not isinstance(sample_weight, (list, dict)):
            # one output, one loss at weight 1, tensors: the general path below without its per-output lists
            total = single[0](y, y_pred, sample_weight=sample_weight)
            for penalty in regularization:
                total = total + penalty
            return total
        if all(loss is None for loss in self._losses):
            raise ValueError("No loss to compute: pass loss= to compile(), e.g. compile(loss='mse').")
        if y is None:
            raise ValueError("The model has a loss but the data gives no targets: pass y, or a dataset of "
                             "(x, y) tuples.")
        trues = _output_list(self.model, y)
        preds = _float32_predictions(_output_list(self.model, y_pred))
        weights = _output_list(self.model, sample_weight) if isinstance(sample_weight, (list, dict)) \
            else [sample_weight] * len(preds)
        if len(trues) != len(preds):
            raise ValueError(f"The model has {len(preds)} output(s) but the data has {len(trues)} target(s).")
        total: Optional[torch.Tensor] = None
        self._scratch[threading.get_ident()] = outputs = []
        for loss_fn, weight, y_true, pred, sw in zip(self._losses, self._weights, trues, preds, weights):
            if loss_fn is None:
                outputs.append(None)
                continue
            value = loss_fn(y_true, pred, sample_weight=sw)
            outputs.append(value)
            value = value if weight == 1.0 else value * weight
            total = value if total is None else total + value
        for penalty in regularization:
            total = total + penalty
        return total

    def update_metrics(self, y: Any, y_pred: Any, sample_weight: Any, loss: torch.Tensor, batch_size: int) -> None:
        self.update_loss_trackers(loss, batch_size)
        self.update_compiled_metrics(y, y_pred, sample_weight)

    def update_loss_trackers(self, loss: torch.Tensor, batch_size: int) -> None:
        """The 'loss' mean and, for several outputs, each output's loss (from the last compute_loss)."""
        self.loss_tracker.update_state(loss.detach(), sample_weight=batch_size)
        for tracker, value in zip(self._output_trackers, self._scratch.get(threading.get_ident(), [])):
            if tracker is not None:
                tracker.update_state(value.detach(), sample_weight=batch_size)

    def update_compiled_metrics(self, y: Any, y_pred: Any, sample_weight: Any) -> None:
        """The metrics given to compile() (not the loss trackers)."""
        if self._metrics is None:
            with _BUILD_LOCK:
                if self._metrics is None:
                    self._build(y, y_pred)
        if not self._metrics:
            return
        single = self._single
        if single is not None and _plain_output(y_pred) and getattr(y_pred, "_keras_mask", None) is None \
                and not isinstance(y, (list, tuple, dict)):
            # one output without a mask: the general path below without its per-output lists
            prediction = y_pred.detach()
            for metric, weighted in single[1]:
                metric.update_state(y, prediction, sample_weight=sample_weight if weighted else None)
            return
        trues = _output_list(self.model, y)
        preds = _float32_predictions(_output_list(self.model, y_pred))
        for index, metric, weighted in self._metrics:
            weights = sample_weight if weighted else None
            mask = getattr(preds[index], "_keras_mask", None)
            if mask is not None and isinstance(metric, metrics_module.MeanMetricWrapper):
                weights = _masked_metric_weights(weights, mask)
            metric.update_state(trues[index], preds[index].detach(), sample_weight=weights)

    # ----- results -------------------------------------------------------------------------
    def all_metrics(self) -> list:
        trackers = [t for t in self._output_trackers if t is not None]
        return [self.loss_tracker] + trackers + [metric for _, metric, _ in (self._metrics or [])]

    def reset(self) -> None:
        for metric in self.all_metrics():
            metric.reset_state()

    def results(self) -> dict[str, torch.Tensor]:
        """Current metric values as 0-d tensors, keyed by log name ('loss', 'accuracy', ...).

        Names repeat as in Keras 3: a weighted metric named like an earlier one logs as 'weighted_<name>'
        (after the output's prefix), and any later repeat gets '_1', '_2', ... appended."""
        trackers = [self.loss_tracker] + [t for t in self._output_trackers if t is not None]
        logs = {metric.name: metric.result() for metric in trackers}
        seen: dict[str, int] = {}
        for index, metric, weighted in self._metrics or []:
            name = metric.name
            if name in seen and weighted:
                prefix = f"{self._output_names[index]}_" if self._output_names[index] else ""
                name = prefix + "weighted_" + name[len(prefix):]
            if name in seen:
                seen[name] += 1
                name = f"{name}_{seen[name] - 1}"
            else:
                seen[name] = 1
            logs[name] = metric.result()
        return logs

    def metric_states(self) -> Optional[list]:
        """This replica's metric states (CPU copies), or None before the metrics exist."""
        if self._metrics is None:
            return None
        return [[t.detach().cpu().clone() for t in metric._state_tensors()] for metric in self.all_metrics()]

    def load_metric_states(self, states: Optional[list]) -> None:
        """Puts back `metric_states()`; before the first batch builds the metrics, keeps them for then."""
        if states is None:
            return
        if self._metrics is None:
            self._pending_states = states
            return
        metrics = self.all_metrics()
        if len(metrics) != len(states):
            raise ValueError(f"The saved training state has {len(states)} metric(s), but the model is compiled with "
                             f"{len(metrics)} ({[m.name for m in metrics]}). Compile it as when it was saved.")
        for metric, values in zip(metrics, states):
            current = metric._state_tensors()
            metric._load_state_tensors([v.to(c.device, c.dtype) for v, c in zip(values, current)])

    def reduce_across_replicas(self, strategy: Any, flags: Sequence[float] = ()) -> Optional[list]:
        """Replaces each metric's states by their combination over replicas (a sum, a mean or replica 0's, as each
        state's aggregation says), so every rank logs the same: one collective (per state dtype). `flags`, small
        whole numbers from this process, are summed over the processes in the same collective; returns their
        sums, or None where nothing was summed across replicas."""
        if strategy.num_step_replicas == 1:
            return None  # one replica, or one SPMD program that updated the metrics with the whole global batch
        metrics = self.all_metrics()
        if strategy.num_processes > 1:
            # Every process once found the same layout with every metric's state made: as metrics make their
            # state once (lazily, never again), the layouts still agree while this process's is that one, and
            # all processes skip the check together (each holds the same agreed layout)
            layout = _state_layout(metrics)
            if layout != self._agreed_layout:
                _align_state_layouts(metrics, strategy)
                layout = _state_layout(metrics)
                self._agreed_layout = layout if self.built and all(layout) else None
        processes = strategy.num_processes
        states = [metric._state_contributions(strategy.process_rank, processes) for metric in metrics]
        tensors = [t for group in states for t in group]
        extra = [torch.tensor(list(flags), dtype=tensors[0].dtype, device=tensors[0].device)] if flags else []
        summed = strategy.sum_across_replicas(tensors + extra)  # flags in the first state's dtype: no collective more
        offset = 0
        for metric, group in zip(metrics, states):
            metric._load_state_tensors(summed[offset:offset + len(group)], processes=processes)
            offset += len(group)
        return [float(value) for value in summed[-1].tolist()] if extra else None

    def get_config(self) -> dict:
        def plain(spec: Any) -> Any:
            if spec is None or isinstance(spec, (str, int, float)):
                return spec
            if isinstance(spec, (list, tuple)):
                return [plain(s) for s in spec]
            if isinstance(spec, dict):
                return {k: plain(v) for k, v in spec.items()}
            if hasattr(spec, "get_config"):
                return {"class_name": type(spec).__name__, "config": spec.get_config()}
            return getattr(spec, "__name__", None)

        return {"loss": plain(self.loss_spec), "metrics": plain(self.metrics_spec),
                "weighted_metrics": plain(self.weighted_metrics_spec), "loss_weights": plain(self.loss_weights_spec)}
