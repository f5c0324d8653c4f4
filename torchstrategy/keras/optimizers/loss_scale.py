"""Keras's `LossScaleOptimizer`: dynamic loss scaling around another optimizer (scale the loss, unscale
the gradients once, skip non-finite steps and halve the scale, grow it after enough finite steps)."""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import torch

from torchstrategy.keras.optimizers.base import Optimizer

_DEFAULT_INITIAL_SCALE = 2.0**15
_DEFAULT_GROWTH_STEPS = 2000


_BASE_DEFAULTS = {
    "weight_decay": None, "clipnorm": None, "global_clipnorm": None, "clipvalue": None, "use_ema": False,
    "ema_momentum": 0.99, "ema_overwrite_frequency": None, "loss_scale_factor": None,
    "gradient_accumulation_steps": None,
}


def _delegated(name: str) -> property:
    """torch's bookkeeping attribute `name` (param_groups, state, defaults) read from and written to the
    inner optimizer, so zero_grad, LR schedulers and the inner's own load_state_dict (which replaces these
    objects) all see one copy. While the base class initialises, it keeps a private placeholder."""
    private = f"_own_{name}"

    def get(self: "LossScaleOptimizer") -> Any:
        if "_delegating" in self.__dict__:
            return getattr(self.inner_optimizer, name)
        return self.__dict__[private]

    def set(self: "LossScaleOptimizer", value: Any) -> None:
        if "_delegating" in self.__dict__:
            setattr(self.inner_optimizer, name, value)
        else:
            self.__dict__[private] = value

    return property(get, set)


class LossScaleOptimizer(Optimizer):
    """Wraps an optimizer with dynamic loss scaling, so float16 gradients do not underflow (Keras's).

    The loss is multiplied by the scale (`scale_loss`), the gradients are divided by it before the
    inner optimizer's update. A step with any inf/NaN gradient is skipped (weights, slots and
    `iterations` unchanged) and halves the scale; after `dynamic_growth_steps` finite steps in a row
    the scale doubles. Under a strategy the check runs on the gradients after they are combined
    across replicas, so every replica takes the same decision.

    How each training style unscales exactly once: the optimizer divides by the scale only the
    gradients of a loss that `scale_loss` / `get_scaled_loss` scaled since its previous update.
    - fit / torch loops: `scaled = opt.scale_loss(loss); scaled.backward(); opt.step()`.
    - Keras 3 custom loops: `scale_loss` -> `tape.gradient` -> `apply_gradients` (which unscales).
    - Keras 2 custom loops: `get_scaled_loss` -> `tape.gradient` -> `get_unscaled_gradients` (which
      unscales and marks the step done) -> `apply_gradients` (which then does not divide again).

    >>> import torchstrategy as tf
    >>> opt = LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    >>> float(opt.dynamic_scale)
    32768.0
    """

    def __init__(
        self, inner_optimizer: Optimizer, initial_scale: Optional[float] = _DEFAULT_INITIAL_SCALE,
        dynamic_growth_steps: Optional[int] = _DEFAULT_GROWTH_STEPS, name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        dynamic = kwargs.pop("dynamic", True)  # Keras 2's argument: a fixed scale when False
        if isinstance(inner_optimizer, LossScaleOptimizer):
            raise TypeError("LossScaleOptimizer cannot wrap another LossScaleOptimizer; pass its inner optimizer.")
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(
                "LossScaleOptimizer wraps a Keras optimizer, e.g. LossScaleOptimizer(tf.keras.optimizers.Adam()); "
                f"got {type(inner_optimizer).__name__} {inner_optimizer!r}. (A name such as 'adam' becomes an "
                "optimizer with tf.keras.optimizers.get('adam').)"
            )
        for key, default in _BASE_DEFAULTS.items():
            if key in kwargs and kwargs.pop(key) != default:
                raise ValueError(f"LossScaleOptimizer does not support `{key}`. Instead, set `{key}` on the "
                                 "`inner_optimizer`.")
        if kwargs:
            raise ValueError(f"LossScaleOptimizer does not support arguments: {sorted(kwargs)}.")
        initial_scale = _DEFAULT_INITIAL_SCALE if initial_scale is None else initial_scale
        growth = _DEFAULT_GROWTH_STEPS if dynamic_growth_steps is None else dynamic_growth_steps
        if isinstance(initial_scale, bool) or not isinstance(initial_scale, (int, float)) or \
                not math.isfinite(initial_scale) or initial_scale <= 0:
            raise ValueError(f"`initial_scale` must be a finite number > 0. Received: initial_scale={initial_scale!r}")
        if isinstance(growth, bool) or not isinstance(growth, int) or growth < 1:
            raise ValueError(f"`dynamic_growth_steps` must be an integer >= 1. "
                             f"Received: dynamic_growth_steps={growth!r}")
        self.inner_optimizer = inner_optimizer  # first: `built` reads it while the base class initialises
        self.dynamic = bool(dynamic)
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = growth
        super().__init__(learning_rate=0.0, name=name or "loss_scale_optimizer")
        self._variable_names = inner_optimizer._variable_names
        self._iterations = inner_optimizer._iterations  # the base class's `apply` returns this tensor
        self._scale = torch.tensor(self.initial_scale, dtype=torch.float32)  # host tensors: no device sync
        self._counter = torch.zeros((), dtype=torch.int64)
        self._unscale_pending = False
        self._delegating = True  # from here on torch's bookkeeping is the inner optimizer's (see _delegated)
        inner_optimizer.loss_scale_factor = None  # as Keras: the inner optimizer must not scale again

    param_groups = _delegated("param_groups")
    state = _delegated("state")
    defaults = _delegated("defaults")

    # ----- Keras attributes ---------------------------------------------------------------------------
    @property
    def built(self) -> bool:
        return self.inner_optimizer.built

    @built.setter
    def built(self, value: bool) -> None:
        pass  # the inner optimizer's variables decide (the base class assigns this while initialising)

    @property
    def dynamic_scale(self) -> torch.Tensor:
        """The current loss scale (0-d float32 tensor; Keras 3's name)."""
        return self._scale

    loss_scale = dynamic_scale  # Keras 2's name

    @property
    def step_counter(self) -> torch.Tensor:
        """Finite steps since the scale last changed (0-d int64 tensor; Keras 3's name)."""
        return self._counter

    dynamic_counter = step_counter  # Keras 2's name

    @property
    def iterations(self) -> torch.Tensor:
        """The inner optimizer's `iterations`: skipped steps do not count (as in Keras)."""
        return self.inner_optimizer.iterations

    @iterations.setter
    def iterations(self, value: Any) -> None:
        self.inner_optimizer.iterations = value

    @property
    def learning_rate(self) -> Any:
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        self.inner_optimizer.learning_rate = value

    lr = learning_rate

    @property
    def variables(self) -> list[torch.Tensor]:
        """`step_counter`, `dynamic_scale`, then the inner optimizer's variables."""
        return [self._counter, self._scale] + self.inner_optimizer.variables

    # ----- building -------------------------------------------------------------------------------------
    def build(self, var_list: Iterable[Any]) -> None:
        self.inner_optimizer.build(var_list)

    def add_param_group(self, param_group: dict) -> None:
        if "_delegating" not in self.__dict__:  # torch's placeholder group while the base initialises
            super().add_param_group(param_group)
            return
        self.inner_optimizer.add_param_group(param_group)

    # ----- scaling ----------------------------------------------------------------------------------------
    def scale_loss(self, loss: Any) -> Any:
        """`loss * dynamic_scale`; the next update divides the gradients by the scale."""
        self._unscale_pending = True
        return loss * self._scale

    def get_scaled_loss(self, loss: Union[Any, Callable[[], Any]]) -> Any:
        """Keras 2: `loss * loss_scale` (a callable loss gives a callable scaled loss)."""
        if callable(loss):
            return lambda: self.scale_loss(loss())
        return self.scale_loss(loss)

    def get_unscaled_gradients(self, grads: Sequence[Optional[torch.Tensor]]) -> list:
        """Keras 2: each gradient divided by the loss scale (None stays None). `apply_gradients` then
        applies them as given."""
        self._unscale_pending = False
        inverse = 1.0 / float(self._scale)
        return [None if g is None else g * inverse for g in grads]

    def _unscale_and_check(self, grads: list[torch.Tensor]) -> bool:
        """Divides `grads` in place by the scale if the loss was scaled; True if all are finite."""
        inverse = 1.0 / float(self._scale) if self._unscale_pending else 1.0
        self._unscale_pending = False
        groups: dict = {}
        for grad in grads:
            groups.setdefault((grad.device, grad.dtype), []).append(grad)
        largest = []
        for group in groups.values():
            if inverse != 1.0:
                torch._foreach_mul_(group, inverse)
            # the max-abs norm is inf/NaN exactly when some element is (no overflow, unlike the 2-norm);
            # faster on CPU than GradScaler's fused kernel, two passes on GPU
            largest.append(torch.stack(torch._foreach_norm(group, math.inf)).float().max().to("cpu"))
        return bool(torch.isfinite(torch.stack(largest)).all())  # one host sync per step

    def _update_scale(self, finite: bool) -> None:
        if not self.dynamic:
            return
        if not finite:
            self._counter.zero_()
            self._scale.mul_(0.5)
        elif int(self._counter) == self.dynamic_growth_steps - 1:
            self._counter.zero_()
            self._scale.mul_(2.0)
        else:
            self._counter += 1

    # ----- updates ----------------------------------------------------------------------------------------
    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        """Unscales every `.grad` in place (if the loss was scaled), then runs the inner optimizer's step,
        or skips it and halves the scale if any gradient is inf/NaN. Under DDP the `.grad`s are already
        averaged across replicas when this runs, so every replica decides alike."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._require_built()
        grads = [p.grad for group in self.param_groups for p in group["params"] if p.grad is not None]
        if not grads:
            return loss
        finite = self._unscale_and_check(grads)
        if finite or not self.dynamic:  # a fixed scale (Keras 2's dynamic=False) never skips
            self.inner_optimizer.step()
        self._update_scale(finite)
        return loss

    def apply(self, grads: Sequence[Any], trainable_variables: Optional[Sequence[Any]] = None) -> torch.Tensor:
        """Keras 3's `apply`: the base class combines the gradients across replicas and runs `step()`
        once, which unscales them (if the loss was scaled) and updates, or skips a non-finite step."""
        # `step()` divides the gradients in place: it gets copies, so the caller's tensors stay as given
        grads = [g.detach().clone() if isinstance(g, torch.Tensor) else g for g in grads]
        return super().apply(grads, trainable_variables)

    def stateless_apply(self, optimizer_variables: Sequence[Any], grads: Sequence[Any],
                        trainable_variables: Sequence[Any]) -> tuple[list, list]:
        """Keras 3's stateless update: `grads` are of the scaled loss (`scale_loss`), so they are always divided
        by the scale held in `optimizer_variables`; a non-finite step only updates the scale."""
        self._unscale_pending = True
        try:
            return super().stateless_apply(optimizer_variables, grads, trainable_variables)
        finally:
            self._unscale_pending = False

    def minimize(self, loss: Any, var_list: Any, tape: Any = None) -> torch.Tensor:
        """Scales the loss, differentiates it, and applies the (unscaled) gradients."""
        variables = list(var_list() if callable(var_list) else var_list)
        if tape is not None:
            grads = tape.gradient(self.scale_loss(loss), variables)
        else:
            with torch.enable_grad():
                scaled = self.scale_loss(loss() if callable(loss) else loss)
            grads = torch.autograd.grad(scaled, variables, allow_unused=True)
        return self.apply_gradients(zip(grads, variables))

    def _set_distribute_strategy(self, strategy: Any) -> None:
        super()._set_distribute_strategy(strategy)
        self.inner_optimizer._set_distribute_strategy(strategy)

    def finalize_variable_values(self, var_list: Any) -> None:
        self.inner_optimizer.finalize_variable_values(var_list)

    def exclude_from_weight_decay(self, var_list: Optional[Iterable] = None,
                                  var_names: Optional[Iterable[str]] = None) -> None:
        self.inner_optimizer.exclude_from_weight_decay(var_list, var_names)

    # ----- config and state -------------------------------------------------------------------------------
    def get_config(self) -> dict:
        """Keras 3's layout: name, the serialized inner optimizer, initial_scale, dynamic_growth_steps."""
        from torchstrategy.keras import optimizers

        config = {"name": self.name, "inner_optimizer": optimizers.serialize(self.inner_optimizer),
                  "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}
        if not self.dynamic:
            config["dynamic"] = False
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "LossScaleOptimizer":
        from torchstrategy.keras import optimizers

        config = dict(config)
        inner = config.pop("inner_optimizer")
        if isinstance(inner, dict):
            inner = optimizers.deserialize(inner, custom_objects=custom_objects)
        return cls(inner, **config)

    def state_dict(self) -> dict:
        """The inner optimizer's state plus the loss scale and its counter (so a resumed run continues them)."""
        return {"inner": self.inner_optimizer.state_dict(), "loss_scale": self._scale.clone(),
                "step_counter": self._counter.clone()}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores `state_dict()` output; a plain inner-optimizer state dict restores the inner one alone."""
        if "inner" not in state_dict:
            self.inner_optimizer.load_state_dict(state_dict)
            return
        self.inner_optimizer.load_state_dict(state_dict["inner"])
        self._scale.fill_(float(state_dict["loss_scale"]))
        self._counter.fill_(int(state_dict["step_counter"]))

    def __repr__(self) -> str:
        return (f"LossScaleOptimizer(inner_optimizer={self.inner_optimizer!r}, "
                f"dynamic_scale={float(self._scale)}, dynamic_growth_steps={self.dynamic_growth_steps})")




def wrap_for_policy(policy: Any, optimizer: Any) -> Any:
    """What `Model.compile` does under 'mixed_float16' (the model's dtype policy, as Keras checks it):
    wraps a Keras optimizer in a LossScaleOptimizer unless it already is one."""
    if policy.name == "mixed_float16" and isinstance(optimizer, Optimizer) \
            and not isinstance(optimizer, LossScaleOptimizer):
        return LossScaleOptimizer(optimizer)
    return optimizer
