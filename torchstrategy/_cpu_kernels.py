"""Hand-written CPU kernels (C in _cpu_kernels.c, compiled once per machine, called through ctypes) for the
memory-bound glue torch's own CPU ops spend most of a small CNN's step on, giving torch's numbers.

Today, over (batch, height, width, channels) tensors: max pooling with windows equal to strides
(optionally fused with the ReLU before it), and a first convolution (few input channels, an input that
needs no gradient) fused with its bias, ReLU and 2x2 max pooling. Both entry points return None wherever
their kernel does not apply (no C compiler, CUDA/XLA tensors, other dtypes or shapes, torch.compile
tracing), and callers then use torch's ops. TORCHSTRATEGY_CPU_KERNELS=0 turns the kernels off.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Iterator, Optional

import torch

_log = logging.getLogger(__name__)
_SOURCE = Path(__file__).with_name("_cpu_kernels.c")
#: -march=native builds for the machine at hand (the cache key holds its CPU flags); -fopenmp links libgomp,
#: which the loader resolves to the copy torch already has loaded. Tried in order: a compiler without
#: -march=native or OpenMP support still gives a (slower, then single-threaded) library.
_FLAG_SETS = (["-O3", "-march=native", "-fopenmp"], ["-O3", "-fopenmp"], ["-O3"])
_POOL_DTYPES = (torch.float32, torch.bfloat16)

#: the pooling kernel keeps one row of window state per channel on each thread's stack
MAX_POOL_CHANNELS = 1 << 16

_library: Optional[ctypes.CDLL] = None
_load_tried = False
_load_lock = threading.Lock()  # replicas that are threads (CentralStorageStrategy) may ask at once
_paused = 0  # > 0 inside torch_ops_only()


def _cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line
    except OSError:
        pass
    return platform.processor()


def _compiler() -> Optional[str]:
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def _build(compiler: str, target: Path) -> bool:
    """Compiles the kernels to `target` (a temp file, then a rename: processes racing here each end
    with a whole library). False if no flag set compiles."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for flags in _FLAG_SETS:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".build-", suffix=".so")
        os.close(fd)
        try:
            done = subprocess.run([compiler, *flags, "-shared", "-fPIC", "-o", temp, str(_SOURCE)],
                                  capture_output=True, text=True, timeout=120)
            if done.returncode == 0:
                os.replace(temp, target)
                return True
            _log.debug("cpu kernels: %s %s failed: %s", compiler, " ".join(flags), done.stderr[-2000:])
        except (OSError, subprocess.SubprocessError) as error:
            _log.debug("cpu kernels: %s failed: %s", compiler, error)
        finally:
            if os.path.exists(temp):
                os.unlink(temp)
    return False


def library() -> Optional[ctypes.CDLL]:
    """The compiled kernels (built into the cache on first use), or None when they cannot be had."""
    global _library, _load_tried
    if _load_tried:
        return _library
    with _load_lock:
        if not _load_tried:
            _library = _load()
            _load_tried = True
    return _library


def _load() -> Optional[ctypes.CDLL]:
    from torchstrategy.cluster import environment

    if not environment.cpu_kernels_enabled():
        return None
    compiler = _compiler()
    if compiler is None:
        _log.info("cpu kernels: no C compiler on PATH; using torch's own ops (same numbers, slower pooling)")
        return None
    key = hashlib.sha256(b"\0".join([_SOURCE.read_bytes(), compiler.encode(), repr(_FLAG_SETS).encode(),
                                     platform.machine().encode(), _cpu_flags().encode()])).hexdigest()[:16]
    target = Path(environment.cache_dir()) / "kernels" / f"cpu_kernels-{key}.so"
    try:
        if not target.exists() and not _build(compiler, target):
            _log.warning("cpu kernels: %s could not compile %s; using torch's own ops", compiler, _SOURCE)
            return None
        lib = ctypes.CDLL(str(target))
    except OSError as error:
        _log.warning("cpu kernels: could not load %s (%s); using torch's own ops", target, error)
        return None
    long_, int_, ptr = ctypes.c_long, ctypes.c_int, ctypes.c_void_p
    for name in ("ts_max_pool_forward_f32", "ts_max_pool_forward_bf16"):
        getattr(lib, name).argtypes = [ptr, ptr, ptr] + [long_] * 6 + [int_, int_]
    for name in ("ts_max_pool_backward_32", "ts_max_pool_backward_16"):
        getattr(lib, name).argtypes = [ptr, ptr, ptr] + [long_] * 6 + [int_]
    lib.ts_conv_pool_forward.argtypes = [ptr] * 5 + [long_] * 7 + [int_]
    lib.ts_conv_pool_backward.argtypes = [ptr] * 5 + [long_] * 7 + [int_]
    lib.ts_conv_pool_backward.restype = int_
    return lib


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


def _forward(x: torch.Tensor, kh: int, kw: int, relu: bool) -> tuple[torch.Tensor, torch.Tensor]:
    n, h, w, c = x.shape
    y = torch.empty((n, h // kh, w // kw, c), dtype=x.dtype)
    code = torch.empty(y.shape, dtype=torch.int8)
    kernel = _library.ts_max_pool_forward_f32 if x.dtype == torch.float32 else _library.ts_max_pool_forward_bf16
    kernel(x.data_ptr(), y.data_ptr(), code.data_ptr(), n, h, w, c, kh, kw, int(relu), torch.get_num_threads())
    return y, code


def _backward(grad: torch.Tensor, code: torch.Tensor, shape: torch.Size, kh: int, kw: int) -> torch.Tensor:
    grad_in = torch.empty(shape, dtype=grad.dtype)
    kernel = _library.ts_max_pool_backward_32 if grad.element_size() == 4 else _library.ts_max_pool_backward_16
    kernel(grad.data_ptr(), code.data_ptr(), grad_in.data_ptr(), *shape, kh, kw, torch.get_num_threads())
    return grad_in


def _backward_differentiable(grad: torch.Tensor, code: torch.Tensor, shape: torch.Size, kh: int, kw: int):
    """The same gradient from torch ops, so a double backward (create_graph=True) can go through it."""
    n, h, w, c = shape
    oh, ow = h // kh, w // kw
    positions = torch.arange(kh * kw, dtype=torch.int8)
    picked = (code.unsqueeze(-1) == positions).to(grad.dtype)                    # (n, oh, ow, c, kh*kw)
    spread = (grad.unsqueeze(-1) * picked).reshape(n, oh, ow, c, kh, kw)
    grad_in = spread.permute(0, 1, 4, 2, 5, 3).reshape(n, oh * kh, ow * kw, c)
    return torch.nn.functional.pad(grad_in, (0, 0, 0, w - ow * kw, 0, h - oh * kh))


class _MaxPoolNHWC(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, kh: int, kw: int, relu: bool) -> torch.Tensor:
        y, code = _forward(x, kh, kw, relu)
        ctx.save_for_backward(code)
        ctx.shape, ctx.window = x.shape, (kh, kw)
        return y

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (code,) = ctx.saved_tensors
        if torch.is_grad_enabled():
            return _backward_differentiable(grad, code, ctx.shape, *ctx.window), None, None, None
        grad = grad.contiguous()
        if grad.dtype not in _POOL_DTYPES or grad.device.type != "cpu" or type(grad) is not torch.Tensor:
            return _backward_differentiable(grad, code, ctx.shape, *ctx.window), None, None, None
        return _backward(grad, code, ctx.shape, *ctx.window), None, None, None


#: the fused convolution's limits (_cpu_kernels.c): taps = kh * kw * in, output channels in vectors of 16
_MAX_CONV_TAPS = 64
_CONV_CHANNEL_MULTIPLE = 16


class _ConvReluPoolNHWC(torch.autograd.Function):
    """relu(max_pool_2x2(conv2d(x, kernel) + bias)) in float32 with the kernel in Keras's (kh, kw, in, out)
    layout; gradients for the kernel and the bias only (the input never needs one here)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, kernel: torch.Tensor, bias: Optional[torch.Tensor]) -> torch.Tensor:
        n, h, w, channels = x.shape
        kh, kw, _, out = kernel.shape
        kernel = kernel.contiguous()
        bias = None if bias is None else bias.contiguous()
        shape = (n, (h - kh + 1) // 2, (w - kw + 1) // 2, out)
        y = torch.empty(shape, dtype=torch.float32)
        code = torch.empty(shape, dtype=torch.int8)
        _library.ts_conv_pool_forward(x.data_ptr(), kernel.data_ptr(), 0 if bias is None else bias.data_ptr(),
                                      y.data_ptr(), code.data_ptr(), n, h, w, channels, kh, kw, out,
                                      torch.get_num_threads())
        ctx.save_for_backward(x, kernel, code)
        ctx.has_bias = bias is not None
        return y

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        x, kernel, code = ctx.saved_tensors
        n, h, w, channels = x.shape
        kh, kw, _, out = kernel.shape
        plain = grad.dtype == torch.float32 and grad.device.type == "cpu" and type(grad) is torch.Tensor
        if torch.is_grad_enabled() or not plain:  # create_graph=True: the same gradients from torch ops
            conv_shape = (n, h - kh + 1, w - kw + 1, out)
            grad_conv = _backward_differentiable(grad, code, conv_shape, 2, 2)
            _, grad_kernel, grad_bias = torch.ops.aten.convolution_backward(
                grad_conv.movedim(-1, 1), x.movedim(-1, 1), kernel.permute(3, 2, 0, 1),
                [out] if ctx.has_bias else None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                [False, True, ctx.has_bias])
            grad_kernel = grad_kernel.permute(2, 3, 1, 0)
        else:
            grad = grad.contiguous()
            grad_kernel = torch.empty(kernel.shape, dtype=torch.float32)
            grad_bias = torch.empty(out, dtype=torch.float32) if ctx.has_bias else None
            failed = _library.ts_conv_pool_backward(
                x.data_ptr(), grad.data_ptr(), code.data_ptr(), grad_kernel.data_ptr(),
                0 if grad_bias is None else grad_bias.data_ptr(), n, h, w, channels, kh, kw, out,
                torch.get_num_threads())
            if failed:
                raise MemoryError("fused convolution backward: could not allocate its per-thread sums")
        return None, grad_kernel, grad_bias


def conv_relu_max_pool_nhwc(x: torch.Tensor, kernel: torch.Tensor,
                            bias: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """`relu(max_pool2d(conv2d(x) + bias, 2))` for a float32 stride-1 'valid' convolution over a (batch,
    height, width, channels) input that needs no gradient, with a (kh, kw, in, out) kernel, from the fused
    C kernel; None where it does not apply. The convolution's output is never stored: forward and backward
    recompute it per pooling window in registers, where torch's path writes and reads it 3-4 times.

    The sums run in another order than oneDNN's, so the outputs agree to float32 rounding (and a window
    whose two largest values tie to within that rounding may pick the other one). Float32 only: in
    bfloat16, oneDNN's AMX convolution plus `max_pool_nhwc` measured faster than this kernel.
    """
    if (type(x) is not torch.Tensor or x.device.type != "cpu" or x.dtype != torch.float32 or x.dim() != 4
            or x.requires_grad or kernel.dim() != 4 or kernel.dtype != torch.float32 or kernel.device.type != "cpu"):
        return None
    kh, kw, channels, out = kernel.shape
    if (x.shape[3] != channels or kh * kw * channels > _MAX_CONV_TAPS or out % _CONV_CHANNEL_MULTIPLE
            or x.shape[1] < kh + 1 or x.shape[2] < kw + 1 or x.shape[0] == 0):
        return None
    if bias is not None and (bias.dtype != torch.float32 or bias.shape != (out,) or bias.device.type != "cpu"):
        return None
    if _paused or torch.compiler.is_compiling() or _functorch_active() or library() is None:
        return None
    return _ConvReluPoolNHWC.apply(x.contiguous(), kernel, bias)


def _functorch_active() -> bool:
    active = getattr(torch._C, "_are_functorch_transforms_active", None)
    return bool(active and active())


def max_pool_nhwc(x: torch.Tensor, pool_size: tuple[int, int], relu: bool = False) -> Optional[torch.Tensor]:
    """`relu(max_pool(x))` (or the plain max pool) of a (batch, height, width, channels) tensor with
    windows equal to strides and no padding, from the C kernel; None where the kernel does not apply.

    Example: `max_pool_nhwc(torch.randn(8, 30, 30, 32), (2, 2), relu=True)` has shape (8, 15, 15, 32) and
    equals `F.relu(F.max_pool2d(x.movedim(-1, 1), 2)).movedim(1, -1)` exactly, gradients included.
    """
    kh, kw = pool_size
    if (type(x) is not torch.Tensor or x.device.type != "cpu" or x.dtype not in _POOL_DTYPES or x.dim() != 4
            or not x.is_contiguous() or kh * kw > 127 or x.shape[1] < kh or x.shape[2] < kw or x.numel() == 0
            or x.shape[3] > MAX_POOL_CHANNELS):
        return None
    if _paused or torch.compiler.is_compiling() or _functorch_active() or library() is None:
        return None
    return _MaxPoolNHWC.apply(x, kh, kw, relu)
