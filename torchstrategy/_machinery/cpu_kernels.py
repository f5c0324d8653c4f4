"""Hand-written CPU kernels (C in cpu_kernels.c, built by kernel_build.py) registered as torch operators,
for the memory-bound glue torch's own CPU ops spend most of a small CNN's step on, giving torch's numbers.

Today, over (batch, height, width, channels) tensors: max pooling with windows equal to strides
(optionally fused with the ReLU before it), and a first convolution (few input channels, an input that
needs no gradient; float32, or bfloat16 on AVX512-BF16 where the CPU has it) fused with its bias, ReLU
and 2x2 max pooling. Each is a `torch.library` custom op (namespace `torchstrategy`) with a shape-only
fake implementation and a registered backward (a second op), so torch.compile, torch.export and
tf.saved_model see one opaque op. The entry points `max_pool_nhwc` and `conv_relu_max_pool_nhwc` decide
whether the kernel applies and return None where it does not (no C compiler, CUDA/XLA tensors, other
dtypes or shapes, functorch transforms, other tensor subclasses); callers then use torch's ops.
TORCHSTRATEGY_CPU_KERNELS=0 turns the kernels off.
"""
from __future__ import annotations

import contextlib
import ctypes
from typing import Any, Iterator, Optional

import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensor
from torch._subclasses.functional_tensor import FunctionalTensor

from torchstrategy import _context
from torchstrategy._machinery import kernel_build as _kernel_build

_POOL_DTYPES = (torch.float32, torch.bfloat16)
#: tensors the ops take besides plain ones: the fake/functional tensors torch.compile and torch.export trace with
_TRACING_TYPES = (FakeTensor, FunctionalTensor)

#: the pooling kernel keeps one row of window state per channel on each thread's stack
MAX_POOL_CHANNELS = 1 << 16
#: the fused convolution's limits (cpu_kernels.c): taps = kh * kw * in, output channels in vectors of 16
_MAX_CONV_TAPS = 64
_CONV_CHANNEL_MULTIPLE = 16

_paused = 0  # > 0 inside torch_ops_only()


def library() -> Optional[ctypes.CDLL]:
    """The compiled kernels (built into the cache on first use), or None when they cannot be had."""
    return _kernel_build.library()


def _library_loaded() -> bool:
    """Whether the kernels can run here (torch.compile reads this once, at trace time, as a constant)."""
    return _kernel_build.library() is not None


# What `torch.compiler.assume_constant_result` does, without importing torch._dynamo (~1 s of every process's
# start): it only sets this mark. tests/machinery/test_cpu_kernels.py checks the decorator still sets just that.
_library_loaded._dynamo_marked_constant = True  # type: ignore[attr-defined]


@contextlib.contextmanager
def torch_ops_only() -> Iterator[None]:
    """Within this block the kernels are not used (torch's own ops run): for comparisons and debugging.

    Example: `with torch_ops_only(): reference = model(x)`.
    """
    global _paused
    _paused += 1
    try:
        yield
    finally:
        _paused -= 1


def _takes(tensor: torch.Tensor) -> bool:
    """A CPU tensor an op may be given: a plain one, or one torch.compile / torch.export traces with."""
    return tensor.device.type == "cpu" and (type(tensor) is torch.Tensor or isinstance(tensor, _TRACING_TYPES))


def _takes_weight(tensor: torch.Tensor) -> bool:
    """A weight an op may be given: as `_takes`, or a parameter (Keras variables are parameters)."""
    return _takes(tensor) or (tensor.device.type == "cpu" and isinstance(tensor, torch.nn.Parameter))


def _functorch_active() -> bool:
    active = getattr(torch._C, "_are_functorch_transforms_active", None)
    return bool(active and active())


def _kernels_apply() -> bool:
    return not _paused and not _functorch_active() and _library_loaded()


def _ptr(tensor: Optional[torch.Tensor]) -> int:
    return 0 if tensor is None else tensor.data_ptr()


# ----- max pooling -------------------------------------------------------------------------------
def _max_pool_kernel(x: torch.Tensor, kh: int, kw: int, relu: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(relu(max_pool(x)), code): code is the int8 window position of each output's max, -1 where the ReLU
    cut it. Without the C library or off the CPU (an exported program run elsewhere), the same from torch's ops."""
    x = x.contiguous()
    lib = _kernel_build.library() if x.device.type == "cpu" else None
    if lib is None:
        return _max_pool_from_torch(x, kh, kw, relu)
    n, h, w, c = x.shape
    y = torch.empty((n, h // kh, w // kw, c), dtype=x.dtype)
    code = torch.empty(y.shape, dtype=torch.int8)
    kernel = lib.ts_max_pool_forward_f32 if x.dtype == torch.float32 else lib.ts_max_pool_forward_bf16
    kernel(x.data_ptr(), y.data_ptr(), code.data_ptr(), n, h, w, c, kh, kw, int(relu), _context.thread_budget())
    return y, code


_max_pool_op = torch.library.custom_op("torchstrategy::max_pool_nhwc", _max_pool_kernel, mutates_args=())


@_max_pool_op.register_fake
def _max_pool_fake(x: torch.Tensor, kh: int, kw: int, relu: bool) -> tuple[torch.Tensor, torch.Tensor]:
    n, h, w, c = x.shape
    shape = (n, h // kh, w // kw, c)
    return x.new_empty(shape), x.new_empty(shape, dtype=torch.int8)


def _max_pool_from_torch(x: torch.Tensor, kh: int, kw: int, relu: bool) -> tuple[torch.Tensor, torch.Tensor]:
    y, index = F.max_pool2d(x.movedim(-1, 1), (kh, kw), return_indices=True)
    y, index = y.movedim(1, -1).contiguous(), index.movedim(1, -1)
    w = x.shape[2]
    code = ((index // w % kh) * kw + index % w % kw).to(torch.int8)
    if relu:
        cut = y <= 0
        y = y.masked_fill(cut, 0)
        code = code.masked_fill(cut, -1)
    return y, code.contiguous()


def _max_pool_backward_kernel(grad: torch.Tensor, code: torch.Tensor, h: int, w: int, kh: int,
                              kw: int) -> torch.Tensor:
    """The input's gradient of max_pool_nhwc (an (n, h, w, c) tensor) from its output's and the codes."""
    lib = _kernel_build.library() if grad.device.type == "cpu" else None
    n, _, _, c = code.shape
    if lib is None:
        return _max_pool_backward_from_torch(grad, code, (n, h, w, c), kh, kw)
    grad, code = grad.contiguous(), code.contiguous()
    grad_in = torch.empty((n, h, w, c), dtype=grad.dtype)
    kernel = lib.ts_max_pool_backward_32 if grad.element_size() == 4 else lib.ts_max_pool_backward_16
    kernel(grad.data_ptr(), code.data_ptr(), grad_in.data_ptr(), n, h, w, c, kh, kw, _context.thread_budget())
    return grad_in


_max_pool_backward_op = torch.library.custom_op("torchstrategy::max_pool_nhwc_backward", _max_pool_backward_kernel,
                                                mutates_args=())


@_max_pool_backward_op.register_fake
def _max_pool_backward_fake(grad: torch.Tensor, code: torch.Tensor, h: int, w: int, kh: int, kw: int) -> torch.Tensor:
    return grad.new_empty((code.shape[0], h, w, code.shape[3]))


def _max_pool_backward_from_torch(grad: torch.Tensor, code: torch.Tensor, shape: tuple, kh: int,
                                  kw: int) -> torch.Tensor:
    """The same gradient from torch ops, so a double backward (create_graph=True) can go through it."""
    n, h, w, c = shape
    oh, ow = h // kh, w // kw
    positions = torch.arange(kh * kw, dtype=torch.int8, device=code.device)
    picked = (code.unsqueeze(-1) == positions).to(grad.dtype)                    # (n, oh, ow, c, kh*kw)
    spread = (grad.unsqueeze(-1) * picked).reshape(n, oh, ow, c, kh, kw)
    grad_in = spread.permute(0, 1, 4, 2, 5, 3).reshape(n, oh * kh, ow * kw, c)
    return F.pad(grad_in, (0, 0, 0, w - ow * kw, 0, h - oh * kh))


def _max_pool_setup(ctx: Any, inputs: tuple, output: tuple) -> None:
    x, kh, kw, _ = inputs
    ctx.save_for_backward(output[1])
    ctx.size, ctx.window = (x.shape[1], x.shape[2]), (kh, kw)


def _max_pool_backward(ctx: Any, grad: torch.Tensor, _grad_code: Any) -> tuple:
    (code,) = ctx.saved_tensors
    h, w = ctx.size
    if torch.is_grad_enabled() or grad.dtype not in _POOL_DTYPES or not _takes(grad):
        # create_graph=True (double backward) or a gradient the op does not take: the torch form
        grad_in = _max_pool_backward_from_torch(grad, code, (code.shape[0], h, w, code.shape[3]), *ctx.window)
    else:
        grad_in = _call(_max_pool_backward_op, _max_pool_backward_kernel, grad, code, h, w, *ctx.window)
    return grad_in, None, None, None


_max_pool_op.register_autograd(_max_pool_backward, setup_context=_max_pool_setup)


class _MaxPoolNHWC(torch.autograd.Function):
    """The op as eager autograd records it: the registered autograd formula, under a stable node name, around
    the op's own implementation called directly (through the dispatcher, with the code as a second output,
    a call cost ~0.1 ms more)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, kh: int, kw: int, relu: bool) -> torch.Tensor:  # type: ignore[override]
        y, code = _max_pool_kernel(x, kh, kw, relu)
        _max_pool_setup(ctx, (x, kh, kw, relu), (y, code))
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple:  # type: ignore[override]
        return _max_pool_backward(ctx, grad, None)


def max_pool_nhwc(x: torch.Tensor, pool_size: tuple[int, int], relu: bool = False) -> Optional[torch.Tensor]:
    """`relu(max_pool(x))` (or the plain max pool) of a (batch, height, width, channels) tensor with
    windows equal to strides and no padding, from the C kernel; None where the kernel does not apply.

    Example: `max_pool_nhwc(torch.randn(8, 30, 30, 32), (2, 2), relu=True)` has shape (8, 15, 15, 32) and
    equals `F.relu(F.max_pool2d(x.movedim(-1, 1), 2)).movedim(1, -1)` exactly, gradients included.
    """
    kh, kw = pool_size
    if (not _takes(x) or x.dtype not in _POOL_DTYPES or x.dim() != 4 or not x.is_contiguous() or kh * kw > 127
            or x.shape[1] < kh or x.shape[2] < kw or x.numel() == 0 or x.shape[3] > MAX_POOL_CHANNELS):
        return None
    if not _kernels_apply():
        return None
    return _apply(_MaxPoolNHWC, _max_pool_op, x, kh, kw, relu)


def _apply(function: type, op: Any, *args: Any) -> torch.Tensor:
    """The op's first output. Eager: from the autograd.Function (its node named as before); traced: from the
    op itself, autograd included."""
    if torch.compiler.is_compiling() or type(args[0]) is not torch.Tensor:
        return op(*args)[0]
    return function.apply(*args)


def _call(op: Any, kernel: Any, *args: Any) -> Any:
    """`op(*args)`, or in eager on plain tensors its implementation `kernel(*args)` without the dispatcher."""
    if torch.compiler.is_compiling() or any(type(a) is not torch.Tensor for a in args if isinstance(a, torch.Tensor)):
        return op(*args)
    return kernel(*args)


# ----- the fused first convolution ---------------------------------------------------------------
def _bf16_dot_supported() -> bool:
    """Whether the library has the AVX512-BF16 convolution and this CPU runs it (else bfloat16 is widened)."""
    lib = _kernel_build.library()
    return lib is not None and bool(lib.ts_conv_pool_bf16_supported())


def _widened(tensor: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    return None if tensor is None else tensor.float()


def _conv_pool_kernel(x: torch.Tensor, kernel: torch.Tensor,
                  bias: Optional[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(relu(max_pool_2x2(conv2d(x, kernel) + bias)), code) in x's dtype (float32 sums, bfloat16 rounded once),
    the kernel in Keras's (kh, kw, in, out) layout; code as max_pool_nhwc's. Without the C library or off the
    CPU, the same from torch's ops."""
    x, kernel = x.contiguous(), kernel.contiguous()
    bias = None if bias is None else bias.contiguous()
    lib = _kernel_build.library() if x.device.type == "cpu" else None
    if lib is None:
        conv = F.conv2d(x.float().movedim(-1, 1), kernel.float().permute(3, 2, 0, 1), _widened(bias)).movedim(1, -1)
        y, code = _max_pool_from_torch(conv.contiguous(), 2, 2, True)
        return y.to(x.dtype), code
    n, h, w, channels = x.shape
    kh, kw, _, out = kernel.shape
    shape = (n, (h - kh + 1) // 2, (w - kw + 1) // 2, out)
    y = torch.empty(shape, dtype=x.dtype)
    code = torch.empty(shape, dtype=torch.int8)
    args = (n, h, w, channels, kh, kw, out, _context.thread_budget())
    if x.dtype == torch.bfloat16 and _bf16_dot_supported():
        failed = lib.ts_conv_pool_forward_bf16(x.data_ptr(), kernel.data_ptr(), _ptr(bias), y.data_ptr(),
                                               code.data_ptr(), *args)
        if failed:
            raise MemoryError("fused bfloat16 convolution: could not allocate its packed kernel")
    elif x.dtype == torch.bfloat16:  # no AVX512-BF16: the float32 kernel on the widened values (exact)
        wide, x32, kernel32, bias32 = torch.empty(shape, dtype=torch.float32), x.float(), kernel.float(), _widened(bias)
        lib.ts_conv_pool_forward(x32.data_ptr(), kernel32.data_ptr(), _ptr(bias32), wide.data_ptr(), code.data_ptr(),
                                 *args)
        y.copy_(wide)
    else:
        lib.ts_conv_pool_forward(x.data_ptr(), kernel.data_ptr(), _ptr(bias), y.data_ptr(), code.data_ptr(), *args)
    return y, code


_conv_pool_op = torch.library.custom_op("torchstrategy::conv_relu_max_pool_nhwc", _conv_pool_kernel,
                                        mutates_args=())


@_conv_pool_op.register_fake
def _conv_pool_fake(x: torch.Tensor, kernel: torch.Tensor,
                    bias: Optional[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    n, h, w, _ = x.shape
    kh, kw, _, out = kernel.shape
    shape = (n, (h - kh + 1) // 2, (w - kw + 1) // 2, out)
    return x.new_empty(shape), x.new_empty(shape, dtype=torch.int8)


def _conv_pool_backward_kernel(x: torch.Tensor, kernel: torch.Tensor, grad: torch.Tensor,
                           code: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The kernel's and the bias's gradients of conv_relu_max_pool_nhwc (float64 sums of float32 products;
    the kernel's values are not read, only its shape), in the kernel's dtype: bfloat16 ones rounded once."""
    lib = _kernel_build.library() if x.device.type == "cpu" else None
    dot = lib is not None and x.dtype == grad.dtype == torch.bfloat16 and _bf16_dot_supported()
    if kernel.dtype != torch.float32 and not dot:
        grads = _conv_pool_backward_kernel(x.float(), kernel.float(), grad.float(), code)
        return grads[0].to(kernel.dtype), grads[1].to(kernel.dtype)
    if lib is None:
        grad_kernel, grad_bias = _conv_pool_grads_from_torch(x, kernel, grad, code, True)
        return grad_kernel.contiguous(), grad_bias
    x, grad, code = x.contiguous(), grad.contiguous(), code.contiguous()
    n, h, w, channels = x.shape
    kh, kw, _, out = kernel.shape
    grad_kernel = torch.empty(kernel.shape, dtype=torch.float32)
    grad_bias = torch.empty(out, dtype=torch.float32)
    backward = lib.ts_conv_pool_backward_bf16 if dot else lib.ts_conv_pool_backward
    failed = backward(x.data_ptr(), grad.data_ptr(), code.data_ptr(), grad_kernel.data_ptr(), grad_bias.data_ptr(),
                      n, h, w, channels, kh, kw, out, _context.thread_budget())
    if failed:
        raise MemoryError("fused convolution backward: could not allocate its per-thread sums")
    return grad_kernel.to(kernel.dtype), grad_bias.to(kernel.dtype)


_conv_pool_backward_op = torch.library.custom_op("torchstrategy::conv_relu_max_pool_nhwc_backward",
                                                 _conv_pool_backward_kernel, mutates_args=())


@_conv_pool_backward_op.register_fake
def _conv_pool_backward_fake(x: torch.Tensor, kernel: torch.Tensor, grad: torch.Tensor,
                             code: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return kernel.new_empty(kernel.shape), kernel.new_empty((kernel.shape[3],))


def _conv_pool_grads_from_torch(x: torch.Tensor, kernel: torch.Tensor, grad: torch.Tensor, code: torch.Tensor,
                                has_bias: bool) -> tuple:
    """The same gradients from torch ops (differentiable: a double backward goes through them)."""
    n, h, w, _ = x.shape
    kh, kw, _, out = kernel.shape
    grad_conv = _max_pool_backward_from_torch(grad, code, (n, h - kh + 1, w - kw + 1, out), 2, 2)
    _, grad_kernel, grad_bias = torch.ops.aten.convolution_backward(
        grad_conv.movedim(-1, 1), x.movedim(-1, 1), kernel.permute(3, 2, 0, 1), [out] if has_bias else None,
        [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [False, True, has_bias])
    return grad_kernel.permute(2, 3, 1, 0), grad_bias


def _conv_pool_setup(ctx: Any, inputs: tuple, output: tuple) -> None:
    x, kernel, bias = inputs
    ctx.save_for_backward(x, kernel, output[1])
    ctx.has_bias = bias is not None


def _conv_pool_backward(ctx: Any, grad: torch.Tensor, _grad_code: Any) -> tuple:
    x, kernel, code = ctx.saved_tensors
    if torch.is_grad_enabled() or grad.dtype != x.dtype or not _takes(grad):
        # create_graph=True: the same gradients from torch ops (in float32, as the kernel sums)
        grad_kernel, grad_bias = _conv_pool_grads_from_torch(x.float(), kernel.float(), grad.float(), code,
                                                             ctx.has_bias)
        grad_kernel = grad_kernel.to(kernel.dtype)
        grad_bias = None if grad_bias is None else grad_bias.to(kernel.dtype)
    else:
        grad_kernel, grad_bias = _call(_conv_pool_backward_op, _conv_pool_backward_kernel, x, kernel, grad, code)
    return None, grad_kernel, grad_bias if ctx.has_bias else None


_conv_pool_op.register_autograd(_conv_pool_backward, setup_context=_conv_pool_setup)


class _ConvReluPoolNHWC(torch.autograd.Function):
    """The fused op as eager autograd records it (as _MaxPoolNHWC: the registered formula around the op's own
    implementation)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, kernel: torch.Tensor,  # type: ignore[override]
                bias: Optional[torch.Tensor]) -> torch.Tensor:
        y, code = _conv_pool_kernel(x, kernel, bias)
        _conv_pool_setup(ctx, (x, kernel, bias), (y, code))
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple:  # type: ignore[override]
        return _conv_pool_backward(ctx, grad, None)


def conv_relu_max_pool_nhwc(x: torch.Tensor, kernel: torch.Tensor,
                            bias: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """`relu(max_pool2d(conv2d(x) + bias, 2))` for a float32 or bfloat16 stride-1 'valid' convolution over a (batch,
    height, width, channels) input that needs no gradient, with a (kh, kw, in, out) kernel, from the fused
    C kernel; None where it does not apply. The convolution's output is never stored: forward and backward
    recompute it per pooling window in registers, where torch's path writes and reads it 3-4 times.

    The sums run in another order than oneDNN's, so the outputs agree to float32 rounding (and a window
    whose two largest values tie to within that rounding may pick the other one).

    bfloat16 (a mixed_bfloat16 model's first layer, x, kernel and bias all bfloat16) on a CPU without AMX:
    a bfloat16 convolution's numbers (exact products, float32 sums, the output rounded to bfloat16 once),
    from pairs of taps on the AVX512-BF16 dot product where the CPU has it, else from the float32 kernel on
    the widened values. The kernel's and bias's gradients are float32 sums (per image; float64 over images)
    rounded to bfloat16 once, the same bits from either path. There oneDNN's bfloat16 weight gradient for
    few input channels runs far below the roofline (and sums in bfloat16: ~4% off a float64 reference where
    this is ~0.2%). With AMX, oneDNN's bfloat16 convolution plus `max_pool_nhwc` measured faster: None.
    """
    dtype = x.dtype
    if dtype not in (torch.float32, torch.bfloat16) or (dtype == torch.bfloat16 and _kernel_build.cpu_has_amx()):
        return None
    if (not _takes(x) or x.dim() != 4 or x.requires_grad or kernel.dim() != 4 or kernel.dtype != dtype
            or not _takes_weight(kernel)):
        return None
    kh, kw, channels, out = kernel.shape
    if (x.shape[3] != channels or kh * kw * channels > _MAX_CONV_TAPS or out % _CONV_CHANNEL_MULTIPLE
            or x.shape[1] < kh + 1 or x.shape[2] < kw + 1 or x.shape[0] == 0):
        return None
    if bias is not None and (bias.dtype != dtype or bias.shape != (out,) or not _takes_weight(bias)):
        return None
    if not _kernels_apply():
        return None
    return _apply(_ConvReluPoolNHWC, _conv_pool_op, x, kernel, bias)
