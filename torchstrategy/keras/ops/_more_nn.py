"""keras.ops.nn's further ops: shrink/threshold/sparse activations, sparsemax, glu, celu, the normalizations,
psnr, polar, depth_to_space/space_to_depth, pooling, convolutions (Keras kernel layouts, channels_last by
default), dot_product_attention, fold/unfold and CTC (loss, greedy decoding)."""
from __future__ import annotations

import math
from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy.keras.ops._core import _float, _t


def _fmt(data_format: Optional[str]) -> str:
    if data_format is None:
        from torchstrategy.keras import backend

        data_format = backend.image_data_format()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first'; got {data_format!r}.")
    return data_format


# ----- activations --------------------------------------------------------------------------------------------


def celu(x: Any, alpha: float = 1.0) -> torch.Tensor:
    return F.celu(_float(x), alpha=alpha)


def glu(x: Any, axis: int = -1) -> torch.Tensor:
    """a * sigmoid(b), `x` split in halves a, b along `axis`."""
    return F.glu(_float(x), dim=axis)


def hard_tanh(x: Any) -> torch.Tensor:
    return F.hardtanh(_float(x), -1.0, 1.0)


def hard_shrink(x: Any, threshold: float = 0.5) -> torch.Tensor:
    return F.hardshrink(_float(x), lambd=threshold)


def soft_shrink(x: Any, threshold: float = 0.5) -> torch.Tensor:
    return F.softshrink(_float(x), lambd=threshold)


def tanh_shrink(x: Any) -> torch.Tensor:
    return F.tanhshrink(_float(x))


def threshold(x: Any, threshold: float, default_value: float) -> torch.Tensor:
    """x where x > threshold, else default_value."""
    return F.threshold(_float(x), threshold, default_value)


def sparse_plus(x: Any) -> torch.Tensor:
    """0 for x <= -1, (x + 1)^2 / 4 in between, x for x >= 1."""
    tensor = _float(x)
    return torch.where(tensor <= -1, torch.zeros_like(tensor),
                       torch.where(tensor >= 1, tensor, (tensor + 1).square() / 4))


def sparse_sigmoid(x: Any) -> torch.Tensor:
    """0 for x <= -1, (x + 1) / 2 in between, 1 for x >= 1."""
    tensor = _float(x)
    return torch.where(tensor <= -1, torch.zeros_like(tensor),
                       torch.where(tensor >= 1, torch.ones_like(tensor), 0.5 * (tensor + 1)))


def squareplus(x: Any, b: float = 4) -> torch.Tensor:
    """(x + sqrt(x^2 + b)) / 2."""
    tensor = _float(x)
    return (tensor + torch.sqrt(tensor.square() + b)) / 2


def sparsemax(x: Any, axis: int = -1) -> torch.Tensor:
    """Sparsemax along `axis` with Keras's threshold: tau = (sum of the cumulative sums over the support - 1) / k
    (every Keras backend computes it so; Martins & Astudillo's tau uses only the k-th cumulative sum)."""
    logits = _float(x)
    ordered = torch.sort(logits, dim=axis, descending=True).values
    cumulative = ordered.cumsum(dim=axis)
    shape = [1] * logits.ndim
    shape[axis] = -1
    ks = torch.arange(1, logits.shape[axis] + 1, dtype=logits.dtype, device=logits.device).reshape(shape)
    support = ordered - (cumulative - 1) / ks > 0
    k = support.sum(dim=axis, keepdim=True).to(logits.dtype)
    tau = (torch.where(support, cumulative, torch.zeros_like(cumulative)).sum(dim=axis, keepdim=True) - 1) / k
    return (logits - tau).clamp_min(0)


def polar(abs_: Any, angle: Any) -> torch.Tensor:
    """The complex numbers abs_ * exp(i * angle)."""
    magnitude = _float(abs_)
    return torch.polar(magnitude, _float(angle).to(magnitude.dtype))


def psnr(x1: Any, x2: Any, max_val: float) -> torch.Tensor:
    """Peak signal-to-noise ratio: 20 log10(max_val) - 10 log10(mean((x1 - x2)^2))."""
    a, b = _float(x1), _float(x2)
    if a.shape != b.shape:
        raise ValueError(f"Input shapes {tuple(a.shape)} and {tuple(b.shape)} must match for PSNR calculation.")
    mse = (a - b).square().mean()
    return 20 * math.log10(max_val) - 10 * torch.log10(mse)


# ----- normalization ----------------------------------------------------------------------------------------


def batch_normalization(x: Any, mean: Any, variance: Any, axis: int, offset: Any = None, scale: Any = None,
                        epsilon: float = 0.001) -> torch.Tensor:
    """(x - mean) / sqrt(variance + epsilon) * scale + offset, the statistics laid along `axis`."""
    tensor = _float(x)
    shape = [1] * tensor.ndim
    shape[axis] = tensor.shape[axis]

    def laid(value: Any) -> torch.Tensor:
        return _t(value).to(tensor.dtype).reshape(shape)

    out = (tensor - laid(mean)) * torch.rsqrt(laid(variance) + epsilon)
    if scale is not None:
        out = out * laid(scale)
    if offset is not None:
        out = out + laid(offset)
    return out


def layer_normalization(x: Any, gamma: Any = None, beta: Any = None, axis: Any = -1, epsilon: Optional[float] = None,
                        **kwargs: Any) -> torch.Tensor:
    """Normalizes over `axis` (mean 0, variance 1), then scales by gamma and shifts by beta; with
    `rms_scaling=True` divides by the root of the variance only (Keras's RMS variant)."""
    from torchstrategy.keras import backend

    rms_scaling = kwargs.pop("rms_scaling", False)
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
    epsilon = backend.epsilon() if epsilon is None else epsilon
    tensor = _float(x)
    axes = sorted(a % tensor.ndim for a in (axis if isinstance(axis, (list, tuple)) else [axis]))
    shape = [tensor.shape[d] if d in axes else 1 for d in range(tensor.ndim)]

    def laid(value: Any) -> torch.Tensor:
        value = _t(value).to(tensor.dtype)
        return value.reshape(shape) if value.ndim != tensor.ndim else value

    variance = tensor.var(dim=axes, keepdim=True, unbiased=False)
    if rms_scaling:
        out = tensor * torch.rsqrt(variance + epsilon)
        return out * laid(gamma) if gamma is not None else out
    out = (tensor - tensor.mean(dim=axes, keepdim=True)) * torch.rsqrt(variance + epsilon)
    if gamma is not None:
        out = out * laid(gamma)
    if beta is not None:
        out = out + laid(beta)
    return out


def rms_normalization(x: Any, scale: Any = None, axis: Any = -1, epsilon: Optional[float] = None) -> torch.Tensor:
    """x / sqrt(mean(x^2 over axis) + epsilon) * scale."""
    from torchstrategy.keras import backend

    epsilon = backend.epsilon() if epsilon is None else epsilon
    tensor = _float(x)
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    out = tensor * torch.rsqrt(tensor.square().mean(dim=axes, keepdim=True) + epsilon)
    return out if scale is None else out * _t(scale).to(tensor.dtype)


# ----- rearranging pixels -------------------------------------------------------------------------------------


def depth_to_space(x: Any, block_size: int, data_format: str = "channels_last") -> torch.Tensor:
    """Moves channel blocks into block_size x block_size spatial blocks (TF's DCR order)."""
    tensor = _t(x)
    if _fmt(data_format) == "channels_first":
        tensor = tensor.permute(0, 2, 3, 1)
    n, h, w, c = tensor.shape
    b = int(block_size)
    out = tensor.reshape(n, h, w, b, b, c // (b * b)).permute(0, 1, 3, 2, 4, 5).reshape(n, h * b, w * b, c // (b * b))
    return out.permute(0, 3, 1, 2) if data_format == "channels_first" else out


def space_to_depth(x: Any, block_size: int, data_format: str = "channels_last") -> torch.Tensor:
    """Moves block_size x block_size spatial blocks into channels (the inverse of depth_to_space)."""
    tensor = _t(x)
    if _fmt(data_format) == "channels_first":
        tensor = tensor.permute(0, 2, 3, 1)
    n, h, w, c = tensor.shape
    b = int(block_size)
    out = tensor.reshape(n, h // b, b, w // b, b, c).permute(0, 1, 3, 2, 4, 5).reshape(n, h // b, w // b, b * b * c)
    return out.permute(0, 3, 1, 2) if data_format == "channels_first" else out


# ----- pooling and convolution ------------------------------------------------------------------------------------


def _tuple(value: Any, n: int) -> tuple:
    return tuple(int(v) for v in value) if isinstance(value, (list, tuple)) else (int(value),) * n


def _to_first(tensor: torch.Tensor, data_format: Optional[str]) -> torch.Tensor:
    return tensor if _fmt(data_format) == "channels_first" else tensor.movedim(-1, 1)


def _from_first(tensor: torch.Tensor, data_format: Optional[str]) -> torch.Tensor:
    return tensor if _fmt(data_format) == "channels_first" else tensor.movedim(1, -1)


def _same_padding(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """TF's 'same' padding (the extra pixel goes after)."""
    effective = (kernel - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def _pad_same(tensor: torch.Tensor, kernels: tuple, strides: tuple, dilations: tuple, value: float = 0.0
              ) -> torch.Tensor:
    pads = []
    for size, k, s, d in reversed(list(zip(tensor.shape[2:], kernels, strides, dilations))):
        pads.extend(_same_padding(size, k, s, d))
    return F.pad(tensor, pads, value=value)


def _pool(inputs: Any, pool_size: Any, strides: Any, padding: str, data_format: Optional[str], kind: str
          ) -> torch.Tensor:
    tensor = _to_first(_float(inputs), data_format)
    n = tensor.ndim - 2
    size = _tuple(pool_size, n)
    stride = size if strides is None else _tuple(strides, n)
    padding = padding.lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"padding must be 'valid' or 'same'; got {padding!r}.")
    pool = {1: (F.max_pool1d, F.avg_pool1d), 2: (F.max_pool2d, F.avg_pool2d), 3: (F.max_pool3d, F.avg_pool3d)}[n]
    if kind == "max":
        if padding == "same":
            tensor = _pad_same(tensor, size, stride, (1,) * n, value=float("-inf"))
        out = pool[0](tensor, size, stride)
    else:
        if padding == "same":  # average over the valid pixels only, as TF
            ones = torch.ones_like(tensor[:, :1])
            summed = pool[1](_pad_same(tensor, size, stride, (1,) * n), size, stride) * math.prod(size)
            counts = pool[1](_pad_same(ones, size, stride, (1,) * n), size, stride) * math.prod(size)
            out = summed / counts
        else:
            out = pool[1](tensor, size, stride)
    return _from_first(out, data_format)


def max_pool(inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid",
             data_format: Optional[str] = None) -> torch.Tensor:
    """Max pooling over 1-3 spatial dims ('same' pads with -inf, as TF)."""
    return _pool(inputs, pool_size, strides, padding, data_format, "max")


def average_pool(inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid",
                 data_format: Optional[str] = None) -> torch.Tensor:
    """Average pooling over 1-3 spatial dims ('same' averages the valid pixels only)."""
    return _pool(inputs, pool_size, strides, padding, data_format, "avg")


def _adaptive(inputs: Any, output_size: Any, data_format: Optional[str], kind: str) -> torch.Tensor:
    tensor = _to_first(_float(inputs), data_format)
    n = tensor.ndim - 2
    size = _tuple(output_size, n)
    fns = {"avg": (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d),
           "max": (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)}[kind]
    return _from_first(fns[n - 1](tensor, size), data_format)


def adaptive_average_pool(inputs: Any, output_size: Any, data_format: Optional[str] = None) -> torch.Tensor:
    return _adaptive(inputs, output_size, data_format, "avg")


def adaptive_max_pool(inputs: Any, output_size: Any, data_format: Optional[str] = None) -> torch.Tensor:
    return _adaptive(inputs, output_size, data_format, "max")


def _conv(tensor: torch.Tensor, weight: torch.Tensor, strides: Any, padding: str, dilation_rate: Any,
          groups: int) -> torch.Tensor:
    n = tensor.ndim - 2
    stride, dilation = _tuple(strides, n), _tuple(dilation_rate, n)
    padding = padding.lower()
    if padding == "same":
        tensor = _pad_same(tensor, tuple(weight.shape[2:]), stride, dilation)
    elif padding != "valid":
        raise ValueError(f"padding must be 'valid' or 'same'; got {padding!r}.")
    fn = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    return fn(tensor, weight, stride=stride, dilation=dilation, groups=groups)


def conv(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid", data_format: Optional[str] = None,
         dilation_rate: Any = 1) -> torch.Tensor:
    """N-D convolution; `kernel` is Keras's (spatial..., in_channels / groups, out_channels)."""
    tensor = _to_first(_float(inputs), data_format)
    weight = _t(kernel).to(tensor.dtype)
    n = tensor.ndim - 2
    weight = weight.permute(n + 1, n, *range(n))  # -> (out, in/groups, spatial...)
    groups = tensor.shape[1] // weight.shape[1]
    return _from_first(_conv(tensor, weight, strides, padding, dilation_rate, groups), data_format)


def depthwise_conv(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid",
                   data_format: Optional[str] = None, dilation_rate: Any = 1) -> torch.Tensor:
    """Depthwise convolution; `kernel` is (spatial..., in_channels, depth_multiplier)."""
    tensor = _to_first(_float(inputs), data_format)
    weight = _t(kernel).to(tensor.dtype)
    n = tensor.ndim - 2
    channels, multiplier = weight.shape[-2], weight.shape[-1]
    weight = weight.reshape(*weight.shape[:n], 1, channels * multiplier).permute(n + 1, n, *range(n))
    return _from_first(_conv(tensor, weight, strides, padding, dilation_rate, channels), data_format)


def separable_conv(inputs: Any, depthwise_kernel: Any, pointwise_kernel: Any, strides: Any = 1,
                   padding: str = "valid", data_format: Optional[str] = None, dilation_rate: Any = 1
                   ) -> torch.Tensor:
    """A depthwise convolution followed by a 1x1 (pointwise) convolution."""
    depthwise = depthwise_conv(inputs, depthwise_kernel, strides, padding, data_format, dilation_rate)
    return conv(depthwise, pointwise_kernel, 1, "valid", data_format, 1)


def conv_transpose(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid", output_padding: Any = None,
                   data_format: Optional[str] = None, dilation_rate: Any = 1) -> torch.Tensor:
    """Transposed convolution; `kernel` is Keras's (spatial..., out_channels, in_channels); output lengths follow
    Keras's rule and 'same' crops the full result as TF does (the odd extra pixel at the end)."""
    tensor = _to_first(_float(inputs), data_format)
    weight = _t(kernel).to(tensor.dtype)
    n = tensor.ndim - 2
    weight = weight.permute(n + 1, n, *range(n))  # -> (in, out, spatial...)
    stride, dilation = _tuple(strides, n), _tuple(dilation_rate, n)
    padding = padding.lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"padding must be 'valid' or 'same'; got {padding!r}.")
    fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
    full = fn(tensor, weight, stride=stride, dilation=dilation)
    index: list = [slice(None), slice(None)]
    pads: list = []
    for i, (size, k, s_, d) in enumerate(zip(tensor.shape[2:], weight.shape[2:], stride, dilation)):
        effective = (k - 1) * d + 1
        if output_padding is None:
            length = size * s_ + max(effective - s_, 0) if padding == "valid" else size * s_
        else:
            pad = effective // 2 if padding == "same" else 0
            length = (size - 1) * s_ + effective - 2 * pad + _tuple(output_padding, n)[i]
        full_length = (size - 1) * s_ + effective
        before = max(full_length - length, 0) // 2 if padding == "same" else 0
        index.append(slice(before, before + length))
        pads.append(max(before + length - full_length, 0))
    out = full[tuple(index)]
    if any(pads):
        out = F.pad(out, [p for pad in reversed(pads) for p in (0, pad)])
    return _from_first(out, data_format)


# ----- attention, folding ---------------------------------------------------------------------------------------


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          scale: Optional[float] = None, is_causal: bool = False, flash_attention: Optional[bool] = None,
                          attn_logits_soft_cap: Optional[float] = None) -> torch.Tensor:
    """softmax(q k^T * scale + bias, masked) v for (batch, seq, heads, dim) inputs (Keras's layout)."""
    if flash_attention:
        raise NotImplementedError("dot_product_attention(flash_attention=True) is not supported; leave it None.")
    q, k, v = _float(query), _float(key), _float(value)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    logits = torch.einsum("bqhd,bkhd->bhqk", q, k.to(q.dtype)) * scale
    if attn_logits_soft_cap is not None:
        logits = attn_logits_soft_cap * torch.tanh(logits / attn_logits_soft_cap)
    if bias is not None:
        logits = logits + _t(bias).to(logits.dtype)
    allowed = None
    if mask is not None:
        allowed = _t(mask).bool()
    if is_causal:
        causal = torch.ones(logits.shape[-2], logits.shape[-1], dtype=torch.bool, device=logits.device).tril()
        allowed = causal if allowed is None else allowed & causal
    if allowed is not None:
        logits = torch.where(allowed, logits, torch.full_like(logits, -0.7 * 3.38953e38))
    weights = torch.softmax(logits, dim=-1)
    return torch.einsum("bhqk,bkhd->bqhd", weights, v.to(weights.dtype))


def unfold(x: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> torch.Tensor:
    """Sliding blocks of a (N, C, H, W) tensor as columns (N, C * kh * kw, L), as torch's unfold."""
    return F.unfold(_float(x), kernel_size, dilation=dilation, padding=padding, stride=stride)


def fold(x: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
         ) -> torch.Tensor:
    """Sums columns (N, C * kh * kw, L) back into a (N, C, H, W) tensor (the inverse layout of unfold)."""
    return F.fold(_float(x), output_size, kernel_size, dilation=dilation, padding=padding, stride=stride)


# ----- CTC ----------------------------------------------------------------------------------------------------


def ctc_loss(target: Any, output: Any, target_length: Any, output_length: Any, mask_index: int = 0
             ) -> torch.Tensor:
    """Per-sample CTC loss of integer `target` (batch, max_label_length) against logits `output`
    (batch, time, classes); `mask_index` is the blank."""
    logits = _float(output)
    log_probs = F.log_softmax(logits, dim=-1).transpose(0, 1)
    return F.ctc_loss(log_probs, _t(target).to(torch.int64), _t(output_length).to(torch.int64),
                      _t(target_length).to(torch.int64), blank=mask_index, reduction="none", zero_infinity=False)


def ctc_decode(inputs: Any, sequence_lengths: Any, strategy: str = "greedy", beam_width: int = 100,
               top_paths: int = 1, merge_repeated: bool = True, mask_index: int = 0) -> tuple:
    """Greedy CTC decoding of (batch, time, classes) scores: (decoded (1, batch, time) padded with -1,
    negative sum of the best log-probabilities (batch, 1))."""
    if strategy != "greedy":
        raise NotImplementedError(f"ctc_decode(strategy={strategy!r}) is not supported; use 'greedy'.")
    scores = F.log_softmax(_float(inputs), dim=-1)
    lengths = _t(sequence_lengths).to(torch.int64)
    best, indices = scores.max(dim=-1)
    batch, steps = indices.shape
    valid = torch.arange(steps, device=indices.device).unsqueeze(0) < lengths.unsqueeze(1)
    keep = valid & (indices != mask_index)
    if merge_repeated:
        repeated = torch.cat([torch.zeros_like(indices[:, :1], dtype=torch.bool), indices[:, 1:] == indices[:, :-1]],
                             dim=1)
        keep = keep & ~repeated
    decoded = torch.full_like(indices, -1)
    for row in range(batch):
        kept = indices[row][keep[row]]
        decoded[row, :kept.numel()] = kept
    log_prob = -(best * valid).sum(dim=1, keepdim=True)
    return decoded.unsqueeze(0).to(torch.int32), log_prob

