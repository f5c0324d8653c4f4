"""Layer-pair rewrites a model applies when running its layers, each giving exactly the numbers of the
plain order: a ReLU followed by max pooling runs as pooling first, then the ReLU on the 4x smaller output
(both in one C kernel pass where _cpu_kernels applies; a model's first convolution joins them there)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras import activations


def _plain_relu(function: Any) -> bool:
    return function is activations.relu


def _relu_of(layer: Any) -> Optional[str]:
    """'conv' for a convolution whose activation is a plain ReLU, 'layer' for a ReLU layer; else None.
    Layers with hooks, activity regularizers or remat are left alone (they observe the ReLU's output)."""
    from torchstrategy.keras.layers.conv import _Conv
    from torchstrategy.keras.layers.core import Activation, ReLU

    if layer._forward_hooks or layer._forward_pre_hooks or getattr(layer, "_remat_mode", None) is not None:
        return None
    if isinstance(layer, _Conv) and type(layer).call is _Conv.call and _plain_relu(layer.activation):
        return "conv" if getattr(layer, "activity_regularizer", None) is None else None
    if type(layer) is Activation and _plain_relu(layer.activation):
        return "layer"
    if type(layer) is ReLU and layer.max_value is None and layer.negative_slope == 0.0 and layer.threshold == 0.0:
        return "layer"
    return None


def pools_before_relu(first: Any, second: Any) -> bool:
    """True when `first` ends in a plain ReLU and `second` max-pools its output (same layout), so the pool
    may run first: max and ReLU commute, and the gradients are equal too (ReLU adds no ties above 0,
    and a window at or below 0 gets no gradient either way)."""
    from torchstrategy.keras.layers.pooling import _Pooling

    if not isinstance(second, _Pooling) or second._MODE != "max" or type(second).call is not _Pooling.call:
        return False
    if second._forward_hooks or second._forward_pre_hooks or getattr(second, "_remat_mode", None) is not None:
        return False
    kind = _relu_of(first)
    if kind == "conv":
        return first._RANK == second._RANK and first.data_format == second.data_format
    return kind == "layer"


def _fits_fused_conv_kernel(conv: Any, pool: Any, inputs: Any) -> bool:
    """Whether conv -> ReLU -> pool is configured as _cpu_kernels.conv_relu_max_pool_nhwc computes it: a
    plain stride-1 'valid' Conv2D, then 2x2 pooling that drops (not pads) an odd last row or column.
    That function checks the tensors (dtype, input channels, filters, no input gradient) and declines
    into the unfused pool-then-ReLU path."""
    from torchstrategy.keras.layers.conv import Conv2D

    if type(conv) is not Conv2D or not conv.built or not pool.built or conv.groups != 1:
        return False
    if (conv.data_format != "channels_last" or conv.padding != "valid" or tuple(conv.strides) != (1, 1)
            or tuple(conv.dilation_rate) != (1, 1) or tuple(pool.pool_size) != (2, 2) or tuple(pool.strides) != (2, 2)):
        return False
    if pool.padding == "valid":
        return True
    kh, kw = conv.kernel_size
    return isinstance(inputs, torch.Tensor) and (int(inputs.shape[1]) - kh + 1) % 2 == 0 \
        and (int(inputs.shape[2]) - kw + 1) % 2 == 0


def pool_then_relu(first: Any, second: Any, inputs: Any, training: Optional[bool]) -> Any:
    """`second(first(inputs))` computed as relu(pool(...)) (call only where `pools_before_relu` is True),
    the pool and the conv's ReLU in one pass of the C pooling kernel where it applies."""
    if _relu_of(first) == "conv":
        if _fits_fused_conv_kernel(first, second, inputs):
            return first(inputs, training=training, _fused_pool=second)
        return second(first(inputs, training=training, _defer_activation=True), training=training, _relu=True)
    if _relu_layer_folds_into(first, second):
        return second(inputs, training=training, _relu=True)
    return first(second(inputs, training=training), training=training)


def _relu_layer_folds_into(relu: Any, pool: Any) -> bool:
    """Whether a ReLU layer after max pooling may be left uncalled, the pool applying the ReLU itself (in the
    same pass of the C kernel): the layer is built, adds no activity loss, and would not cast the pool's
    output to another dtype."""
    if not relu.built or getattr(relu, "activity_regularizer", None) is not None:
        return False
    return not relu.autocast or relu._compute_torch_dtype == pool._compute_torch_dtype
