"""The Keras `Optimizer` on top of `torch.optim.Optimizer`: deferred build, Keras learning rate and
`iterations`, clipping, decoupled weight decay, EMA, weight constraints, `apply_gradients`, config and state."""
from __future__ import annotations

import copy
import re
import threading
import warnings
from collections import defaultdict
from typing import Any, Callable, Iterable, Optional, Sequence

import torch

from torchstrategy import _context
from torchstrategy.keras.optimizers import _averaging, _gradients, _learning_rate
from torchstrategy.keras.optimizers import schedules as _schedules
from torchstrategy.keras.optimizers._learning_rate import LearningRate

# Replicas that run as threads of one process (MirroredStrategy's local replicas, CentralStorageStrategy) reach a
# custom loop's first apply_gradients together: the first of them builds the optimizer, the others wait for it.
_BUILD_LOCK = threading.Lock()
# ... and count their updates: `iterations += 1` is a read-modify-write that two threads could interleave
_COUNT_LOCK = threading.Lock()
_IGNORED_KWARGS = ("jit_compile", "is_legacy_optimizer")  # tf.keras 2.11+ arguments with no meaning here


class Optimizer(torch.optim.Optimizer):
    """Base class of the Keras optimizers; a real `torch.optim.Optimizer` once built.

    Created before the model's variables exist (`model.compile(optimizer=Adam())`); `build(var_list)`,
    the first `apply_gradients`, or `params=` attach the parameters. Subclasses define `_init_slots`
    (per-parameter state) and `_update` (the Keras update rule, multi-tensor). In a torch loop:
    `opt = Adam(params=model.parameters())`, then `loss.backward(); opt.step(); opt.zero_grad()`.

    The constructor takes Keras 3's `(*args, **kwargs)` (a subclass passes them on with `super().__init__`):
    `learning_rate`, `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`, `use_ema`, `ema_momentum`,
    `ema_overwrite_frequency`, `loss_scale_factor`, `gradient_accumulation_steps`, `name`, and here also
    `params` (torch's parameters to attach now).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._configure(*args, **kwargs)

    def _configure(
        self,
        learning_rate: LearningRate,
        weight_decay: Optional[float] = None,
        clipnorm: Optional[float] = None,
        clipvalue: Optional[float] = None,
        global_clipnorm: Optional[float] = None,
        use_ema: bool = False,
        ema_momentum: float = 0.99,
        ema_overwrite_frequency: Optional[int] = None,
        loss_scale_factor: Optional[float] = None,
        gradient_accumulation_steps: Optional[int] = None,
        name: Optional[str] = None,
        params: Optional[Iterable[Any]] = None,
        **kwargs: Any,
    ) -> None:
        if "lr" in kwargs:
            warnings.warn("`lr` is deprecated in Keras optimizers; use `learning_rate`.", DeprecationWarning, 2)
            learning_rate = kwargs.pop("lr")
        if kwargs.pop("decay", None):
            warnings.warn("Argument `decay` is no longer supported and will be ignored (as in Keras 3).", stacklevel=2)
        for key in _IGNORED_KWARGS:
            kwargs.pop(key, None)
        if kwargs:
            raise ValueError(
                f"Argument(s) not recognized: {kwargs}. {type(self).__name__} takes Keras argument names "
                "(e.g. learning_rate, beta_1/beta_2, epsilon, weight_decay, clipnorm), not torch's (lr, betas, eps)."
            )
        _gradients.check_clip_args(clipnorm, clipvalue, global_clipnorm)
        if weight_decay is not None and (not isinstance(weight_decay, (int, float)) or weight_decay < 0):
            raise ValueError(f"`weight_decay` must be a float >= 0 or None. Received: weight_decay={weight_decay!r}")
        _averaging.check_ema_args(use_ema, ema_momentum, ema_overwrite_frequency)
        if gradient_accumulation_steps:
            raise NotImplementedError("`gradient_accumulation_steps` is not supported yet; leave it None.")
        self._learning_rate = _learning_rate.to_learning_rate(learning_rate)
        self.name = name or _keras_snake_case(type(self).__name__)  # Keras: SGD -> sgd, RMSprop -> rm_sprop
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.use_ema, self.ema_momentum, self.ema_overwrite_frequency = use_ema, ema_momentum, ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self._iterations = torch.zeros((), dtype=torch.int64)  # host tensor: reading it never syncs a device
        self._variable_names: dict = {}
        self._decay_filter = _gradients.WeightDecayFilter()
        self._pending_state: Optional[dict] = None
        self._warned_missing_grads = False
        self._warned_remote_constraints = False
        # the strategy whose replicas this optimizer updates: recorded here, replaced when a model sets it up
        self._distribute_strategy = _context.get_strategy() if _context.has_strategy() else None
        # torch refuses an empty parameter list, so initialise its machinery on a placeholder and drop it.
        torch.optim.Optimizer.__init__(self, [torch.zeros(0, requires_grad=True)], {"lr": self._initial_lr_value()})
        self.param_groups.clear()
        self.state = defaultdict(dict)
        self.built = False
        if params is not None:
            self.build(params)

    # ----- learning rate and iterations ------------------------------------------------------------
    def _initial_lr_value(self) -> float:
        return self._learning_rate if isinstance(self._learning_rate, float) else self._scheduled_lr(0)

    def _scheduled_lr(self, step: int) -> float:
        rate = self._learning_rate
        value = rate(step) if isinstance(rate, _schedules.LearningRateSchedule) else rate()
        return float(value)

    @property
    def learning_rate(self) -> _learning_rate.LearningRateValue:
        """The current learning rate (a schedule is evaluated at `iterations`). Assign a float or a schedule."""
        if isinstance(self._learning_rate, float):
            value = float(self.param_groups[0]["lr"]) if self.param_groups else self._learning_rate
        else:
            value = self._scheduled_lr(int(self._iterations))
        result = _learning_rate.LearningRateValue(value)
        result._optimizer = self
        return result

    @learning_rate.setter
    def learning_rate(self, value: LearningRate) -> None:
        self._learning_rate = _learning_rate.to_learning_rate(value)
        if isinstance(self._learning_rate, float):  # schedules write the groups' "lr" at each step instead
            self.defaults["lr"] = self._learning_rate
            for group in self.param_groups:
                group["lr"] = self._learning_rate

    lr = learning_rate  # tf.keras 2 alias

    @property
    def iterations(self) -> torch.Tensor:
        """How many updates were applied (a 0-d int64 tensor, as Keras's `optimizer.iterations`)."""
        return self._iterations

    @iterations.setter
    def iterations(self, value: Any) -> None:
        self._iterations.fill_(int(value))

    # ----- building -------------------------------------------------------------------------------------
    def build(self, variables: Iterable[Any]) -> None:
        """Attaches the variables this optimizer updates (tensors, `named_parameters()` pairs or param groups).

        Building again with the same variables (or a subset, e.g. after freezing layers) does nothing;
        with variables it does not know it is an error.
        """
        groups, names = _gradients.as_param_list(variables)
        tensors = [p for group in groups for p in group["params"]]
        if not tensors:
            raise ValueError("`build()` got no variables; pass the model's trainable variables/parameters.")
        if self.built:
            if {id(p) for p in tensors} <= {id(p) for p in self._all_params()}:
                return
            raise ValueError(
                f"Optimizer '{self.name}' was already built with {len(self._all_params())} variables and cannot be "
                f"built again with a different set ({len(tensors)} variables). Create a new optimizer instance."
            )
        self._variable_names.update(names)
        for group in groups:
            self.add_param_group(group)
        self._load_pending_state()

    def add_param_group(self, param_group: dict) -> None:
        """torch's `add_param_group`; also creates the Keras slot variables of the new parameters."""
        groups, names = _gradients.as_param_list([param_group])
        self._variable_names.update(names)
        group = groups[0] if groups else {"params": []}
        super().add_param_group(group)
        if "built" not in self.__dict__:  # torch's own __init__ adding the placeholder group
            return
        for param in group["params"]:
            if param not in self.state:
                self.state[param] = self._new_state(param)
        self.built = True

    def _new_state(self, param: torch.Tensor) -> dict:
        # Keras creates the EMA copies ("average", zeros) in the base build, before the subclass's slots
        state = {"average": torch.zeros_like(param, memory_format=torch.preserve_format)} if self.use_ema else {}
        state.update(self._init_slots(param))
        return state

    def _all_params(self) -> list[torch.Tensor]:
        return [p for group in self.param_groups for p in group["params"]]

    def _require_built(self) -> None:
        if not self.built:
            raise RuntimeError(
                f"Optimizer '{self.name}' has no variables yet. Call `optimizer.build(model.trainable_variables)` "
                "(or pass `params=`), or use `apply_gradients` once, before `step()`."
            )

    # ----- what subclasses define ------------------------------------------------------------------------
    def _init_slots(self, param: torch.Tensor) -> dict:
        """Per-parameter optimizer variables (Keras slots), created at build."""
        return {}

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        """Applies the update rule in place; `step` counts from 1 (Keras's `iterations + 1`)."""
        raise NotImplementedError

    def _get_hyper_config(self) -> dict:
        return {}

    # ----- the update ------------------------------------------------------------------------------------
    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        """One Keras update of every parameter whose `.grad` is set: clip, weight-decay, update, EMA of every
        variable (and the EMA overwrite every `ema_overwrite_frequency` steps), each updated variable's
        `constraint`, then `iterations += 1` (Keras 3's order)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._require_built()
        entries = [(index, p) for index, group in enumerate(self.param_groups) for p in group["params"] if p.grad is not None]
        if not entries:
            return loss
        grads = [p.grad for _, p in entries]
        # a parameter-server worker: the ps tasks hold the variables and apply the update (row gradients too)
        owner = self._distribute_strategy
        remote = owner if owner is not None and owner.updates_variables_remotely else None
        sparse = any(g.is_sparse for g in grads)
        if sparse and (remote is None or self.clipnorm or self.global_clipnorm or self.clipvalue):
            raise ValueError(f"Optimizer '{self.name}' needs dense gradients here; got a sparse one"
                               f"{' (gradient clipping of embedding rows is not supported)' if remote else ''}.")
        if self.loss_scale_factor is not None:
            grads = [g / float(self.loss_scale_factor) for g in grads]
        if not sparse:
            grads = _gradients.clip_gradients(grads, self.clipnorm, self.global_clipnorm, self.clipvalue,
                                              norm_of=owner.global_norm if owner is not None else None)
        if remote is not None:
            self._check_remote_update([p for _, p in entries])
            remote.apply_updates_remotely(self, [p for _, p in entries], grads)
            return loss
        step_index = int(self._iterations)
        if not isinstance(self._learning_rate, float):
            current = self._scheduled_lr(step_index)
            for group in self.param_groups:
                group["lr"] = current
        for group_index, params, bucket_grads in _gradients.bucket(entries, grads):
            lr = float(self.param_groups[group_index]["lr"])
            states = self._bucket_states(params)
            if self.weight_decay:
                decayed = [p for p in params if self._decay_filter.applies(p, self._variable_names)]
                if decayed:
                    torch._foreach_mul_(decayed, 1.0 - lr * float(self.weight_decay))
            self._update(params, bucket_grads, states, lr, step_index + 1)
        if self.use_ema:
            self._update_moving_averages(first_step=step_index == 0)
            if self.ema_overwrite_frequency and (step_index + 1) % self.ema_overwrite_frequency == 0:
                self._overwrite_with_averages(self._all_params())
        _averaging.apply_constraints([p for _, p in entries])
        with _COUNT_LOCK:
            self._iterations += 1
        return loss

    # ----- EMA (the moving averages live in keras/optimizers/_averaging.py) -------------------------------
    def _update_moving_averages(self, first_step: bool) -> None:
        _averaging.update_moving_averages(self, first_step)

    def _overwrite_with_averages(self, var_list: Sequence[torch.Tensor]) -> None:
        _averaging.overwrite_with_averages(self, var_list)

    def _check_remote_update(self, params: list) -> None:
        _averaging.check_remote_update(self, params)

    def _bucket_states(self, params: list) -> list:
        """The slot dicts of `params` (one device): created if a parameter arrived without them (torch's
        `load_state_dict` of an older layout), moved if the model was moved to another device after build."""
        states = [self.state[p] for p in params]  # defaultdict: {} for an unknown parameter
        for param, state in zip(params, states):
            if not state:
                state.update(self._new_state(param))
        first = next(iter(states[0].values()), None)
        if isinstance(first, torch.Tensor) and first.device != params[0].device:
            for state in states:
                for key, value in state.items():
                    state[key] = value.to(params[0].device)
        return states

    # ----- Keras gradient API ----------------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars: Iterable[tuple]) -> torch.Tensor:
        """Applies `(gradient, variable)` pairs (None gradients are skipped with a warning); returns `iterations`.

        Builds on first use and aggregates the gradients across replicas of the current strategy.
        """
        grads, variables = _gradients.split_pairs(grads_and_vars)
        return self.apply(grads, variables)

    def apply(self, grads: Sequence[Any], trainable_variables: Optional[Sequence[Any]] = None) -> torch.Tensor:
        """Keras 3's `apply(grads, trainable_variables=None)`: one gradient per variable, in order."""
        return self._apply_across_replicas(grads, trainable_variables)

    def stateless_apply(self, optimizer_variables: Sequence[Any], grads: Sequence[Any],
                        trainable_variables: Sequence[Any]) -> tuple[list, list]:
        """`apply` on values instead of variables, changing none of them: `(new trainable values, new values of
        `variables`)`, each list in the order given (keras/stateless.py)."""
        from torchstrategy.keras import stateless

        return stateless.optimizer_apply(self, optimizer_variables, grads, trainable_variables)

    def _apply_across_replicas(self, grads: Sequence[Any], trainable_variables: Optional[Sequence[Any]] = None,
                               skip_gradients_aggregation: bool = False) -> torch.Tensor:
        grads = list(grads)
        if not grads:
            return self._iterations
        if trainable_variables is None:
            self._require_built()
            variables = self._all_params()
        else:
            variables = list(trainable_variables)
        _gradients.check_pairs(grads, variables)
        if not self.built:
            with _BUILD_LOCK:
                if not self.built:
                    self.build(variables)
        known = {id(p) for p in self._all_params()}
        for variable in variables:
            if id(variable) not in known:
                raise ValueError(
                    f"Unknown variable of shape {tuple(variable.shape)}: optimizer '{self.name}' can only update "
                    "the variables it was built with. Create a new optimizer for new variables."
                )
        strategy = self.distribute_strategy
        if not skip_gradients_aggregation:
            grads = _gradients.reduce_across_replicas(strategy, grads)
        present = [(g, v) for g, v in zip(grads, variables) if g is not None]
        if not present:
            raise ValueError("No gradients provided for any variable.")
        if len(present) < len(variables) and not self._warned_missing_grads:
            self._warned_missing_grads = True
            missing = [self._variable_names.get(v, f"#{i}") for i, (g, v) in enumerate(zip(grads, variables)) if g is None]
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the loss.", stacklevel=3)
        # replicas sharing one copy of the variables update it once
        strategy.optimizer_step(self, lambda: _gradients.step_with(self, present))
        return self._iterations

    @property
    def distribute_strategy(self) -> Any:
        """The strategy this optimizer was created in (or set up with by a model); else the current one."""
        if self._distribute_strategy is not None:
            return self._distribute_strategy
        replica = _context.current_replica()
        return replica.strategy if replica is not None else _context.get_strategy()

    def _set_distribute_strategy(self, strategy: Any) -> None:
        self._distribute_strategy = strategy

    def minimize(self, loss: Any, var_list: Any, tape: Any = None) -> torch.Tensor:
        """Computes the gradients of `loss` (a tensor with `tape`, or a zero-argument callable) and applies them."""
        variables = list(var_list() if callable(var_list) else var_list)
        if tape is not None:
            grads = tape.gradient(loss, variables)
        else:
            with torch.enable_grad():
                value = loss() if callable(loss) else loss
            grads = torch.autograd.grad(value, variables, allow_unused=True)
        return self.apply_gradients(zip(grads, variables))

    def scale_loss(self, loss: Any) -> Any:
        """Multiplies the loss by `loss_scale_factor` when one is set (Keras 3)."""
        return loss if self.loss_scale_factor is None else loss * self.loss_scale_factor

    @torch.no_grad()
    def finalize_variable_values(self, var_list: Any) -> None:
        """With `use_ema=True`, overwrites each variable of `var_list` with its moving average (Keras calls
        this at the end of `fit()`; a custom loop calls it after its last `apply_gradients`, e.g.
        `optimizer.finalize_variable_values(model.trainable_variables)`). Without EMA, or before any update,
        it does nothing."""
        if not self.use_ema or not self.built or int(self._iterations) == 0:
            return  # averages are only meaningful once a step has set them
        variables = [var_list] if isinstance(var_list, torch.Tensor) else list(var_list)
        unknown = [tuple(v.shape) for v in variables if v not in self.state or "average" not in self.state[v]]
        if unknown:
            raise ValueError(
                f"finalize_variable_values() got {len(unknown)} variable(s) (shapes {unknown}) that optimizer "
                f"'{self.name}' keeps no moving average of; pass the variables it updates, e.g. "
                "`model.trainable_variables`.")
        self._overwrite_with_averages(variables)

    def exclude_from_weight_decay(self, var_list: Optional[Iterable] = None, var_names: Optional[Iterable[str]] = None) -> None:
        """Exempts variables, or variables whose name contains any of `var_names`, from weight decay."""
        self._decay_filter = _gradients.WeightDecayFilter(var_list, var_names)

    # ----- config, state, checkpoints ---------------------------------------------------------------------
    def _learning_rate_config(self) -> Any:
        if isinstance(self._learning_rate, _schedules.LearningRateSchedule):
            return _schedules.serialize(self._learning_rate)
        if isinstance(self._learning_rate, float):
            return float(self.learning_rate)
        return None  # a plain callable has no config

    def get_config(self) -> dict:
        """The constructor arguments as a dict (schedules serialized), as Keras's `get_config()`."""
        config = {
            "name": self.name, "learning_rate": self._learning_rate_config(), "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm, "global_clipnorm": self.global_clipnorm, "clipvalue": self.clipvalue,
            "use_ema": self.use_ema, "ema_momentum": self.ema_momentum,
            "ema_overwrite_frequency": self.ema_overwrite_frequency, "loss_scale_factor": self.loss_scale_factor,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
        }
        config.update(self._get_hyper_config())
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Optimizer":
        """Rebuilds an optimizer (without its state) from `get_config()` output."""
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = _schedules.deserialize(config["learning_rate"], custom_objects=custom_objects)
        return cls(**config)

    @property
    def variables(self) -> list[torch.Tensor]:
        """`iterations` followed by every slot tensor (slot kind by slot kind, as Keras orders them)."""
        states = [self.state[p] for p in self._all_params() if p in self.state]
        keys = list(states[0]) if states else []
        return [self._iterations] + [state[key] for key in keys for state in states if key in state]

    def state_dict(self) -> dict:
        """torch's optimizer state plus `iterations` and the learning rate (float or serialized schedule)."""
        state = super().state_dict() if self.built else {"state": {}, "param_groups": []}
        state["iterations"] = self._iterations.clone()
        state["learning_rate"] = self._learning_rate_config()
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores `state_dict()` output; before `build()` the slot state waits until the variables arrive."""
        state_dict = dict(state_dict)
        iterations = state_dict.pop("iterations", None)
        rate = state_dict.pop("learning_rate", None)
        if iterations is not None:
            self._iterations.fill_(int(iterations))
        if isinstance(rate, dict):
            try:
                self._learning_rate = _schedules.deserialize(rate)
            except ValueError:  # a custom schedule class: keep the instance this optimizer was given
                if not isinstance(self._learning_rate, _schedules.LearningRateSchedule):
                    raise
        elif rate is not None:
            self.learning_rate = rate
        if self.built:
            super().load_state_dict(state_dict)
            self._lay_out_state_like_parameters()
        elif state_dict.get("param_groups"):
            self._pending_state = state_dict

    def _replace_parameters(self, mapping: dict) -> None:
        """After a strategy replaced the parameters (sharding: id(old) -> new), re-keys what Keras keeps per
        variable (names, the weight-decay exclusions); torch's groups and state were re-pointed already."""
        self._variable_names = {mapping.get(id(param), param): name for param, name in self._variable_names.items()}
        decay = copy.copy(self._decay_filter)
        decay._excluded = [mapping.get(id(param), param) for param in decay._excluded]
        self._decay_filter = decay

    def _lay_out_state_like_parameters(self) -> None:
        from torchstrategy.distribute.parts.sharding import lay_out_state_like_parameters

        lay_out_state_like_parameters(self)

    def _load_pending_state(self) -> None:
        if self._pending_state is not None:
            pending, self._pending_state = self._pending_state, None
            super().load_state_dict(pending)
            self._lay_out_state_like_parameters()

    def __getstate__(self) -> dict:  # torch keeps only groups/state; Keras attributes must survive copies too
        return dict(self.__dict__)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._decay_filter = copy.copy(self._decay_filter)  # its cache is keyed by id(): stale in a copy

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, learning_rate={self._learning_rate!r}, built={self.built})"


def _keras_snake_case(name: str) -> str:
    """Keras's default object names from class names (Adam -> adam, SGD -> sgd, RMSprop -> rm_sprop)."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()
