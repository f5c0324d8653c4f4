"""Keras BatchNormalization (Keras moving-statistics semantics, optional cross-replica
synchronisation), LayerNormalization, GroupNormalization, UnitNormalization and RMSNormalization."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from torchstrategy.keras import initializers, regularizers
from torchstrategy.keras.layers.base import InputSpec, Layer
from torchstrategy.keras.layers.core import _require_defined


def _normalize_axes(layer: Layer, axis: Union[int, Sequence[int]], input_shape: Any) -> list[int]:
    if not isinstance(input_shape, tuple):
        raise ValueError(f"Layer '{layer.name}' expects a single tensor input, got shapes {input_shape!r}.")
    ndim = len(input_shape)
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"Layer '{layer.name}': invalid axis {a} for an input of shape {input_shape} "
                             f"(rank {ndim}). Pass an axis in [{-ndim}, {ndim - 1}].")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"Layer '{layer.name}': duplicate axis in {axis!r}.")
    for a in out:
        _require_defined(layer, input_shape, a, "normalised")
    return sorted(out)


def _cross_replica_sum(layer: Layer, tensor: torch.Tensor) -> torch.Tensor:
    """Differentiable sum over the replicas of the layer's strategy (identity with one replica)."""
    return layer._strategy_for_weights().cross_replica_sum(tensor)


def _masked_moments(x: torch.Tensor, mask: torch.Tensor, reduce_axes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and biased variance over the positions the mask keeps (Keras 3 divides by count + 1e-7,
    so an all-masked batch gives 0, 0)."""
    keep = torch.broadcast_to(mask.bool().unsqueeze(-1), x.shape)
    count = keep.to(x.dtype).sum(dim=reduce_axes, keepdim=True) + 1e-7
    mean = torch.where(keep, x, torch.zeros_like(x)).sum(dim=reduce_axes, keepdim=True) / count
    centred = torch.where(keep, x - mean, torch.zeros_like(x))
    return mean, centred.square().sum(dim=reduce_axes, keepdim=True) / count


class BatchNormalization(Layer):
    """Normalises over all axes but `axis` (the channels): batch statistics when training, moving ones otherwise.

    Weights (Keras order): gamma, beta (trainable), moving_mean, moving_variance (non-trainable).
    Training updates `moving = moving * momentum + batch_stat * (1 - momentum)` with the biased batch
    variance, as Keras does. A layer with `trainable=False` always runs in inference mode (Keras 2).
    `synchronized=True` computes the batch statistics over the global batch of all replicas.
    """

    def __init__(
        self, axis: Union[int, Sequence[int]] = -1, momentum: float = 0.99, epsilon: float = 1e-3,
        center: bool = True, scale: bool = True, beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
        moving_mean_initializer: Any = "zeros", moving_variance_initializer: Any = "ones",
        beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None,
        gamma_constraint: Any = None, renorm: bool = False, renorm_clipping: Optional[dict] = None,
        renorm_momentum: float = 0.99, synchronized: bool = False, **kwargs: Any,
    ) -> None:
        if renorm:
            raise NotImplementedError("BatchNormalization(renorm=True): batch renormalization is not supported by "
                                      "torchstrategy; use renorm=False (plain batch normalization).")
        super().__init__(**kwargs)
        self.axis = axis if isinstance(axis, int) else list(axis)
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self.center, self.scale, self.synchronized = bool(center), bool(scale), bool(synchronized)
        self.renorm, self.renorm_clipping, self.renorm_momentum = False, renorm_clipping, float(renorm_momentum)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.supports_masking = True

    def build(self, input_shape: Any) -> None:
        axes = _normalize_axes(self, self.axis, input_shape)
        ndim = len(input_shape)
        self._axes = axes
        self._broadcast_shape = [input_shape[i] if i in axes else 1 for i in range(ndim)]
        # Keras: one axis -> (C,); several -> full-rank shape with 1 on the other axes.
        param_shape = (input_shape[axes[0]],) if len(axes) == 1 else tuple(self._broadcast_shape)
        self.gamma = self.add_weight("gamma", shape=param_shape, initializer=self.gamma_initializer, autocast=False,
                                     regularizer=self.gamma_regularizer, constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight("beta", shape=param_shape, initializer=self.beta_initializer, autocast=False,
                                    regularizer=self.beta_regularizer, constraint=self.beta_constraint) if self.center else None
        self.add_weight("moving_mean", shape=param_shape, initializer=self.moving_mean_initializer, trainable=False)
        self.add_weight("moving_variance", shape=param_shape, initializer=self.moving_variance_initializer,
                        trainable=False)
        self.input_spec = InputSpec(ndim=ndim, axes={a: input_shape[a] for a in axes})
        self.built = True

    def call(self, inputs: torch.Tensor, training: Optional[bool] = None, mask: Any = None) -> torch.Tensor:
        """`mask` (Keras 3): a bool tensor of the input's shape without its last axis; in training the batch
        moments then come from the unmasked positions only (the mask covers every feature of a position)."""
        if mask is not None:
            mask = torch.as_tensor(mask, device=inputs.device)
            if mask.dim() != inputs.dim() - 1:
                raise ValueError(f"Layer '{self.name}': the mask must have one dimension less than the inputs, got "
                                 f"mask.shape={tuple(mask.shape)} for inputs.shape={tuple(inputs.shape)}.")
        training = bool(training) and self.trainable
        per_channel = inputs.numel() // max(1, math.prod(inputs.shape[a] for a in self._axes))
        fused_ok = len(self._axes) == 1 and not (training and (self.synchronized or per_channel < 2
                                                               or mask is not None))
        # As Keras: float16/bfloat16 statistics overflow or lose precision, so they run in float32
        # (weights read as stored), and the result comes back in the layer's compute dtype. A bfloat16
        # input on the CPU goes to the fused kernel as it is: torch's CPU batch norm takes it with float32
        # weights and statistics and accumulates in float32 (the same numbers as casting first, without
        # two extra passes over the activation each way).
        if fused_ok and inputs.dtype == torch.bfloat16 == self._compute_torch_dtype and inputs.device.type == "cpu":
            return self._fused(inputs, training, per_channel).to(self._compute_torch_dtype)
        x = inputs.float() if inputs.dtype in (torch.float16, torch.bfloat16) else inputs
        outputs = self._fused(x, training, per_channel) if fused_ok else self._explicit(x, training, mask)
        return outputs.to(self._compute_torch_dtype)

    def _fused(self, inputs: torch.Tensor, training: bool, count: int) -> torch.Tensor:
        axis = self._axes[0]
        # For NHWC this is the free channels_last view; F.batch_norm keeps that layout.
        x = inputs.movedim(axis, 1) if axis != 1 else inputs
        # float32 even for a float16-policy layer, whose weights are float16, and for a bfloat16 input
        dtype = torch.float32 if x.dtype == torch.bfloat16 else x.dtype
        gamma = None if self.gamma is None else self.gamma.to(dtype)
        beta = None if self.beta is None else self.beta.to(dtype)
        if not training:
            y = F.batch_norm(x, self.moving_mean.to(dtype), self.moving_variance.to(dtype), gamma, beta, False, 0.0,
                             self.epsilon)
            return y.movedim(1, axis) if axis != 1 else y
        m = self.momentum
        # F.batch_norm updates the running stats in place and autograd saves them, so it gets copies.
        new_mean, new_variance = self.moving_mean.to(dtype, copy=True), self.moving_variance.to(dtype, copy=True)
        y = F.batch_norm(x, new_mean, new_variance, gamma, beta, True, 1.0 - m, self.epsilon)
        with torch.no_grad():
            # PyTorch blended in the unbiased batch variance v*n/(n-1); Keras blends the biased v.
            # new - m*old = (1-m)*v*n/(n-1), so rescale that part by (n-1)/n.
            old_variance = self.moving_variance
            strategy = self._strategy_for_weights()
            strategy.assign_mean(self.moving_variance,
                                 m * old_variance + (new_variance - m * old_variance) * ((count - 1) / count))
            strategy.assign_mean(self.moving_mean, new_mean)
        return y.movedim(1, axis) if axis != 1 else y

    def _explicit(self, inputs: torch.Tensor, training: bool, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        reduce_axes = [i for i in range(inputs.dim()) if i not in self._axes]
        x = inputs.float() if inputs.dtype in (torch.float16, torch.bfloat16) else inputs
        shape = self._broadcast_shape
        if training:
            if mask is not None:  # Keras 3 computes masked moments per replica, even when synchronized
                mean, variance = _masked_moments(x, mask, reduce_axes)
            elif self.synchronized:
                mean, variance = self._global_moments(x, reduce_axes)
            else:
                variance, mean = torch.var_mean(x, dim=reduce_axes, correction=0, keepdim=True)
            with torch.no_grad():
                m = self.momentum
                param_shape = self.moving_mean.shape
                strategy = self._strategy_for_weights()
                strategy.assign_mean(self.moving_mean, self.moving_mean * m + mean.detach().reshape(
                    param_shape).to(self.moving_mean.dtype) * (1 - m))
                strategy.assign_mean(self.moving_variance, self.moving_variance * m + variance.detach().reshape(
                    param_shape).to(self.moving_variance.dtype) * (1 - m))
        else:
            mean, variance = self.moving_mean.reshape(shape), self.moving_variance.reshape(shape)
        scale = torch.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            scale = scale * self.gamma.reshape(shape)
        shift = -mean * scale
        if self.beta is not None:
            shift = shift + self.beta.reshape(shape)
        return (x * scale + shift).to(inputs.dtype)

    def _global_moments(self, x: torch.Tensor, reduce_axes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and biased variance over the batch of every replica: sum [sum, sum of squares, count]."""
        local_sum = x.sum(dim=reduce_axes, keepdim=True)
        local_squares = x.square().sum(dim=reduce_axes, keepdim=True)
        count = torch.full((1,), float(math.prod(x.shape[i] for i in reduce_axes)), dtype=x.dtype, device=x.device)
        packed = torch.cat([local_sum.reshape(-1), local_squares.reshape(-1), count])
        total = _cross_replica_sum(self, packed)
        channels = local_sum.numel()
        n = total[-1].clamp_min(1.0)
        mean = (total[:channels] / n).reshape(local_sum.shape)
        variance = (total[channels:2 * channels] / n).reshape(local_sum.shape) - mean.square()
        return mean, variance.clamp_min(0.0)

    def get_config(self) -> dict:
        s = initializers.serialize
        return {
            **super().get_config(), "axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon,
            "center": self.center, "scale": self.scale, "beta_initializer": s(self.beta_initializer),
            "gamma_initializer": s(self.gamma_initializer), "moving_mean_initializer": s(self.moving_mean_initializer),
            "moving_variance_initializer": s(self.moving_variance_initializer),
            "beta_regularizer": regularizers.serialize(self.beta_regularizer),
            "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
            "beta_constraint": self.beta_constraint, "gamma_constraint": self.gamma_constraint,
            "synchronized": self.synchronized, "renorm": self.renorm, "renorm_clipping": self.renorm_clipping,
            "renorm_momentum": self.renorm_momentum,
        }


class LayerNormalization(Layer):
    """Normalises each sample over `axis` (default the last): (x - mean) / sqrt(var + epsilon) * gamma + beta.

    Weights (Keras order): gamma, beta, each shaped like the normalised axes.
    """

    def __init__(
        self, axis: Union[int, Sequence[int]] = -1, epsilon: float = 1e-3, center: bool = True, scale: bool = True,
        beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", beta_regularizer: Any = None,
        gamma_regularizer: Any = None, beta_constraint: Any = None, gamma_constraint: Any = None, **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.axis = axis if isinstance(axis, int) else list(axis)
        self.epsilon, self.center, self.scale = float(epsilon), bool(center), bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.supports_masking = True

    def build(self, input_shape: Any) -> None:
        axes = _normalize_axes(self, self.axis, input_shape)
        ndim = len(input_shape)
        self._axes = axes
        param_shape = tuple(input_shape[a] for a in axes)
        self._broadcast_shape = [input_shape[i] if i in axes else 1 for i in range(ndim)]
        # F.layer_norm normalises trailing axes; other axis sets take the explicit path.
        self._trailing = axes == list(range(ndim - len(axes), ndim))
        self.gamma = self.add_weight("gamma", shape=param_shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer, constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight("beta", shape=param_shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer, constraint=self.beta_constraint) if self.center else None
        self.input_spec = InputSpec(ndim=ndim, axes={a: input_shape[a] for a in axes})
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if self._trailing:
            normalized_shape = tuple(inputs.shape[a] for a in self._axes)
            return F.layer_norm(inputs, normalized_shape, self.gamma, self.beta, self.epsilon)
        x = inputs.float() if inputs.dtype in (torch.float16, torch.bfloat16) else inputs
        variance, mean = torch.var_mean(x, dim=self._axes, correction=0, keepdim=True)
        y = (x - mean) * torch.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            y = y * self.gamma.reshape(self._broadcast_shape)
        if self.beta is not None:
            y = y + self.beta.reshape(self._broadcast_shape)
        return y.to(inputs.dtype)

    def get_config(self) -> dict:
        return {
            **super().get_config(), "axis": self.axis, "epsilon": self.epsilon, "center": self.center,
            "scale": self.scale, "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            "beta_regularizer": regularizers.serialize(self.beta_regularizer),
            "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
            "beta_constraint": self.beta_constraint, "gamma_constraint": self.gamma_constraint,
        }


class GroupNormalization(Layer):
    """Normalizes each sample over groups of channels (Keras 3): the channel axis is split into `groups`;
    mean and variance run over each group's channels and every other non-batch axis; `groups=-1` is
    instance normalization. gamma/beta are per channel; computed in at least float32.

    >>> GroupNormalization(groups=2)(torch.ones(1, 3, 4)).shape
    torch.Size([1, 3, 4])
    """

    def __init__(
        self, groups: int = 32, axis: int = -1, epsilon: float = 0.001, center: bool = True, scale: bool = True,
        beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", beta_regularizer: Any = None,
        gamma_regularizer: Any = None, beta_constraint: Any = None, gamma_constraint: Any = None, **kwargs: Any,
    ) -> None:
        if not isinstance(groups, int) or isinstance(groups, bool) or (groups <= 0 and groups != -1):
            raise ValueError("Received an invalid value for argument `groups`, expected a positive integer (or "
                             f"`-1` for instance normalization). Received: groups={groups!r}")
        super().__init__(**kwargs)
        self.supports_masking = True
        self.autocast = False
        self.groups, self.axis, self.epsilon = groups, int(axis), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint

    def build(self, input_shape: Any) -> None:
        dim = _require_defined(self, input_shape, self.axis, "channel")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number of channels "
                             f"({dim}). Pass groups that divide {dim}.")
        if dim % self.groups != 0:
            raise ValueError(f"Number of groups ({self.groups}) must divide the number of channels ({dim}) "
                             f"of layer '{self.name}'. Pass a divisor of {dim}, or -1 for one group per channel.")
        self.input_spec = InputSpec(ndim=len(input_shape), axes={self.axis: dim})
        self.gamma = self.add_weight("gamma", (dim,), initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer, constraint=self.gamma_constraint,
                                     autocast=False) if self.scale else None
        self.beta = self.add_weight("beta", (dim,), initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer, constraint=self.beta_constraint,
                                    autocast=False) if self.center else None
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        dtype = inputs.dtype
        x = inputs.to(torch.promote_types(dtype, torch.float32))
        ndim = x.dim()
        axis = self.axis % ndim
        channels = x.shape[axis]
        grouped_shape = list(x.shape[:axis]) + [self.groups, channels // self.groups] + list(x.shape[axis + 1:])
        grouped = x.reshape(grouped_shape)
        reduce = [d for d in range(1, ndim + 1) if d != axis]
        variance, mean = torch.var_mean(grouped, dim=reduce, keepdim=True, correction=0)
        inv = torch.rsqrt(variance + self.epsilon)
        param_shape = [1] * (ndim + 1)
        param_shape[axis], param_shape[axis + 1] = self.groups, channels // self.groups
        if self.gamma is not None:
            inv = inv * self.gamma.to(x.dtype).reshape(param_shape)
        shift = -mean * inv
        if self.beta is not None:
            shift = shift + self.beta.to(x.dtype).reshape(param_shape)
        return (grouped * inv + shift).reshape(x.shape).to(dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {
            **super().get_config(), "groups": self.groups, "axis": self.axis, "epsilon": self.epsilon,
            "center": self.center, "scale": self.scale,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            "beta_regularizer": regularizers.serialize(self.beta_regularizer),
            "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
            "beta_constraint": self.beta_constraint, "gamma_constraint": self.gamma_constraint,
        }


def _check_axes_in(layer: Layer, axis: Any, input_shape: Any) -> None:
    for a in ([axis] if isinstance(axis, int) else list(axis)):
        if a >= len(input_shape) or a < -len(input_shape):
            raise ValueError(f"Axis {axis} is out of bounds for input shape {input_shape} of layer '{layer.name}'.")


class UnitNormalization(Layer):
    """Scales each sample to unit L2 norm along `axis`: `x * min(rsqrt(sum(x**2)), 1e12)` (Keras 3).

    >>> UnitNormalization()(torch.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """

    def __init__(self, axis: Union[int, Sequence[int]] = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis: Any = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError("Invalid value for `axis` argument: expected an int or a list/tuple of ints. "
                            f"Received: axis={axis!r}")
        self.supports_masking = True
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        dims = self.axis if isinstance(self.axis, int) else tuple(self.axis)
        square_sum = torch.sum(inputs * inputs, dim=dims, keepdim=True)
        return inputs * torch.clamp(torch.rsqrt(square_sum), max=1.0 / 1e-12)

    def compute_output_shape(self, input_shape: Any) -> Any:
        _check_axes_in(self, self.axis, input_shape)
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}


class RMSNormalization(Layer):
    """`x * rsqrt(mean(x**2 over axis) + epsilon) * scale` with a learned `scale` (Keras 3), in at least float32.

    >>> RMSNormalization()(torch.ones(2, 3)).shape
    torch.Size([2, 3])
    """

    def __init__(self, axis: Union[int, Sequence[int]] = -1, epsilon: float = 1e-06, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis: Any = axis
        self.epsilon = float(epsilon)

    def build(self, input_shape: Any) -> None:
        _check_axes_in(self, self.axis, input_shape)
        if isinstance(self.axis, (list, tuple)):
            self.axis = sorted(self.axis)
            shape = tuple(input_shape[a] for a in self.axis)
        else:
            shape = (input_shape[self.axis],)
            self.axis = [self.axis]
        if any(d is None for d in shape):
            raise ValueError(f"Layer '{self.name}' needs the normalized axes {self.axis} of its input to be known, "
                             f"got input shape {input_shape}.")
        self.scale = self.add_weight("scale", shape, initializer="ones")
        self.built = True

    def call(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.to(torch.promote_types(dtype, torch.float32))
        rrms = torch.rsqrt(torch.mean(x * x, dim=tuple(self.axis), keepdim=True) + self.epsilon)
        ndim = x.dim()
        axes = sorted(a % ndim for a in self.axis)
        scale_shape = [x.shape[d] if d in axes else 1 for d in range(ndim)]
        return (x * rrms * self.scale.to(x.dtype).reshape(scale_shape)).to(dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        _check_axes_in(self, self.axis, input_shape)
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}
