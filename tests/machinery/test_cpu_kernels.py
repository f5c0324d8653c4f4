"""The C kernels of torchstrategy/_machinery/cpu_kernels.py: exactly torch's numbers (values and gradients, NaNs and
ties included), a cached build, and torch's own ops wherever the kernels cannot be had."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from torchstrategy._machinery import cpu_kernels as _cpu_kernels

needs_kernels = pytest.mark.skipif(_cpu_kernels.library() is None, reason="no C compiler to build the kernels")


def _torch_pool(x, window, relu):
    y = F.max_pool2d(x.movedim(-1, 1), window).movedim(1, -1)
    return F.relu(y) if relu else y


def _awkward_input(shape, dtype, seed):
    """Random values with the cases that decide max pooling's semantics: ties, NaNs, zeros, -0.0."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    x[0, :4, :4, 0] = 0.5                   # a whole window of ties
    x[0, 0, 0, 1] = float("nan")            # a NaN wins its window
    x[1, :2, :2, 0] = float("nan")          # a window of NaNs
    x[1, 2:4, 2:4, 1] = 0.0                 # a window at exactly 0: the ReLU cuts it
    x[1, 4, 4, 2] = -0.0
    x[2, :, :, 3] = -1.0                    # a channel the ReLU cuts everywhere
    return x.to(dtype)


def _same(a, b):
    return torch.equal(torch.nan_to_num(a, nan=7.0), torch.nan_to_num(b, nan=7.0))


@needs_kernels
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("shape,window", [((4, 30, 30, 32), (2, 2)), ((3, 13, 13, 64), (2, 2)),
                                          ((3, 11, 14, 5), (3, 2)), ((3, 9, 9, 7), (3, 3))])
def test_max_pool_values_and_gradients_are_torchs(dtype, relu, shape, window):
    x = _awkward_input(shape, dtype, seed=sum(shape))
    reference_in = x.clone().requires_grad_()
    reference = _torch_pool(reference_in, window, relu)
    kernel_in = x.clone().requires_grad_()
    out = _cpu_kernels.max_pool_nhwc(kernel_in, window, relu=relu)
    assert out is not None and out.dtype == dtype and out.shape == reference.shape
    assert _same(out, reference.detach())
    grad = torch.randn(reference.shape, generator=torch.Generator().manual_seed(3)).to(dtype)
    reference.backward(grad)
    out.backward(grad)
    assert torch.equal(kernel_in.grad, reference_in.grad)


@needs_kernels
def test_double_backward_goes_through_the_torch_form_of_the_gradient():
    x = _awkward_input((3, 8, 8, 6), torch.float32, seed=4).nan_to_num(0.0)
    results = []
    for pool in (lambda v: _torch_pool(v, (2, 2), True), lambda v: _cpu_kernels.max_pool_nhwc(v, (2, 2), True)):
        v = x.clone().requires_grad_()
        (grad,) = torch.autograd.grad(pool(v).pow(3).sum(), v, create_graph=True)
        (second,) = torch.autograd.grad(grad.square().sum(), v)
        results.append((grad.detach(), second))
    assert torch.equal(results[0][0], results[1][0])
    assert torch.allclose(results[0][1], results[1][1], rtol=1e-6, atol=0)
    assert results[0][1].abs().sum() > 0


@needs_kernels
def test_gradients_that_are_not_contiguous_are_taken():
    x = torch.randn(2, 6, 6, 4, requires_grad=True)
    out = _cpu_kernels.max_pool_nhwc(x, (2, 2))
    grad = torch.randn(2, 4, 3, 3).movedim(1, -1)  # same shape, channels-first memory
    out.backward(grad)
    reference = x.detach().clone().requires_grad_()
    _torch_pool(reference, (2, 2), False).backward(grad)
    assert torch.equal(x.grad, reference.grad)


def test_the_kernel_declines_what_it_does_not_cover():
    x = torch.randn(2, 6, 6, 4)
    assert _cpu_kernels.max_pool_nhwc(x.double(), (2, 2)) is None              # dtype
    assert _cpu_kernels.max_pool_nhwc(x[0], (2, 2)) is None                    # not 4-D
    assert _cpu_kernels.max_pool_nhwc(x.transpose(1, 2), (2, 2)) is None      # not contiguous
    assert _cpu_kernels.max_pool_nhwc(x[:, :1], (2, 2)) is None                # smaller than a window
    assert _cpu_kernels.max_pool_nhwc(x, (12, 12)) is None                     # window > 127 positions
    with _cpu_kernels.torch_ops_only():
        assert _cpu_kernels.max_pool_nhwc(x, (2, 2)) is None


def _probe(env_changes, tmp_path):
    """Runs a fresh interpreter that tries to load the kernels; returns what it printed."""
    env = dict(os.environ, TORCHSTRATEGY_CACHE_DIR=str(tmp_path / "cache"), **env_changes)
    code = ("from torchstrategy._machinery import cpu_kernels as k; import torch; lib = k.library(); "
            "out = k.max_pool_nhwc(torch.ones(1, 2, 2, 1), (2, 2)); print(lib is not None, out is not None)")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.slow
@needs_kernels
def test_the_build_is_cached_per_machine_and_reused(tmp_path):
    assert _probe({}, tmp_path) == ["True", "True"]
    built = sorted((tmp_path / "cache" / "kernels").iterdir(), key=lambda p: p.suffix)
    # the library and the record of its size and checksum; no temp files left behind
    assert [p.suffix for p in built] == [".sha256", ".so"] and built[0].name == built[1].name + ".sha256"
    stamps = [p.stat().st_mtime_ns for p in built]
    assert _probe({}, tmp_path) == ["True", "True"]
    assert [p.stat().st_mtime_ns for p in sorted((tmp_path / "cache" / "kernels").iterdir(),
                                                 key=lambda p: p.suffix)] == stamps


@pytest.mark.slow
@needs_kernels
def test_a_damaged_library_in_the_cache_is_built_again_not_loaded(tmp_path):
    assert _probe({}, tmp_path) == ["True", "True"]
    (library,) = (tmp_path / "cache" / "kernels").glob("*.so")
    intact = library.read_bytes()
    library.write_bytes(intact[:len(intact) // 3])  # an interrupted copy: loading it would SIGBUS
    env = dict(os.environ, TORCHSTRATEGY_CACHE_DIR=str(tmp_path / "cache"))
    code = ("import warnings; warnings.simplefilter('always'); from torchstrategy._machinery import cpu_kernels as k; "
            "import torch; print(k.library() is not None, k.max_pool_nhwc(torch.ones(1, 2, 2, 1), (2, 2)) is not None)")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
    assert "was damaged (cut short or overwritten); building it again" in done.stderr
    assert len(library.read_bytes()) > len(intact) // 3  # rebuilt whole


@pytest.mark.slow
def test_off_switch_and_a_machine_without_a_compiler_use_torchs_ops(tmp_path):
    assert _probe({"TORCHSTRATEGY_CPU_KERNELS": "0"}, tmp_path) == ["False", "False"]
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    assert _probe({"PATH": str(empty_bin)}, tmp_path) == ["False", "False"]
    assert not (tmp_path / "cache" / "kernels").exists()
    # without a compiler: one warning per process (even with every warning shown), naming the off switch and
    # the speed at stake; only on rank 0, and none when the kernels are switched off
    warned = {}
    for name, changes in (("rank 0", {"PATH": str(empty_bin)}), ("rank 1", {"PATH": str(empty_bin), "RANK": "1"}),
                          ("off", {"PATH": str(empty_bin), "TORCHSTRATEGY_CPU_KERNELS": "0"})):
        env = dict(os.environ, TORCHSTRATEGY_CACHE_DIR=str(tmp_path / "cache"), **changes)
        code = ("from torchstrategy._machinery import cpu_kernels as k; import torch; x = torch.ones(1, 4, 4, 2); "
                "print([k.max_pool_nhwc(x, (2, 2)) is None for _ in range(3)], k.library() is None)")
        done = subprocess.run([sys.executable, "-W", "always", "-c", code], env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["[True,", "True,", "True]", "True"]
        warned[name] = done.stderr
    assert warned["rank 0"].count("no C compiler") == 1, warned["rank 0"]
    assert "TORCHSTRATEGY_CPU_KERNELS=0" in warned["rank 0"] and "4.7x" in warned["rank 0"]
    assert "2.6x" in warned["rank 0"]
    assert "no C compiler" not in warned["rank 1"] and "no C compiler" not in warned["off"]


def _torch_conv_pool(x, kernel, bias):
    y = F.conv2d(x.movedim(-1, 1), kernel.permute(3, 2, 0, 1), bias)
    return F.relu(F.max_pool2d(y, 2)).movedim(1, -1)


def _close(a, b, rtol=1e-5):
    """Equal to float32 rounding, scaled by the largest magnitude (sums run in another order)."""
    a, b = torch.nan_to_num(a, nan=7.0), torch.nan_to_num(b, nan=7.0)
    return bool((a - b).abs().max() <= rtol * max(b.abs().max().item(), 1e-30))


@needs_kernels
@pytest.mark.parametrize("image,kernel_shape,bias", [
    ((6, 32, 32, 3), (3, 3, 3, 32), True),    # the classic CIFAR CNN's first layer
    ((5, 15, 14, 1), (3, 3, 1, 64), True),    # odd conv output (13 x 12): the last row is dropped
    ((4, 12, 12, 1), (5, 5, 1, 16), False),   # no bias, 25 taps
    ((3, 9, 10, 2), (2, 3, 2, 48), True),     # 48 channels: blocks of 32 and 16
])
def test_fused_first_convolution_gives_torchs_numbers(image, kernel_shape, bias):
    g = torch.Generator().manual_seed(5)
    x = torch.rand(image, generator=g)
    x[0, 3, 4, 0] = float("nan")              # NaNs win their windows and reach the gradients
    kernel = (torch.randn(kernel_shape, generator=g) * 0.3).requires_grad_()
    b = (torch.randn(kernel_shape[-1], generator=g) * 0.1).requires_grad_() if bias else None
    params = [kernel] + ([b] if bias else [])
    out = _cpu_kernels.conv_relu_max_pool_nhwc(x, kernel, b)
    reference = _torch_conv_pool(x, kernel, b)
    assert out is not None and out.shape == reference.shape and out.dtype == torch.float32
    assert _close(out, reference)
    grad = torch.randn(reference.shape, generator=g)
    mine = torch.autograd.grad(out, params, grad)
    theirs = torch.autograd.grad(reference, params, grad)
    assert torch.isnan(mine[0]).any()         # the kernel's gradient meets the NaN input
    for a, b_ in zip(mine, theirs):
        assert _close(a, b_)
    # without the NaN: every gradient finite and still torch's
    x[0, 3, 4, 0] = 0.5
    mine = torch.autograd.grad(_cpu_kernels.conv_relu_max_pool_nhwc(x, kernel, b), params, grad)
    theirs = torch.autograd.grad(_torch_conv_pool(x, kernel, b), params, grad)
    for a, b_ in zip(mine, theirs):
        assert torch.isfinite(a).all() and _close(a, b_)


@needs_kernels
def test_fused_convolution_double_backward_is_torchs():
    g = torch.Generator().manual_seed(6)
    x = torch.rand(3, 10, 10, 3, generator=g)
    kernel = (torch.randn(3, 3, 3, 16, generator=g) * 0.3).requires_grad_()
    bias = torch.zeros(16, requires_grad=True)
    results = []
    for fn in (_cpu_kernels.conv_relu_max_pool_nhwc, _torch_conv_pool):
        (grad,) = torch.autograd.grad(fn(x, kernel, bias).square().sum(), kernel, create_graph=True)
        (second,) = torch.autograd.grad(grad.square().sum(), kernel)
        results.append((grad.detach(), second))
    assert _close(results[0][0], results[1][0]) and _close(results[0][1], results[1][1])


@needs_kernels
@pytest.mark.parametrize("image,kernel_shape", [
    ((6, 33, 33, 3), (3, 3, 3, 64)),    # the one-conv CNN's layer (channels in blocks of 32), 31 conv rows
    ((5, 15, 14, 1), (3, 3, 1, 16)),    # blocks of 16, 14 taps at a time
    ((4, 14, 13, 5), (2, 2, 5, 48)),    # 5 input channels; 48 channels = a block of 32 and one of 16
    ((3, 11, 11, 16), (1, 1, 16, 32)),  # 16 input channels, 1x1 taps
])
def test_the_float32_kernel_gradient_is_a_float64_references_and_the_dense_loops_bits(image, kernel_shape):
    """The float32 kernel's and bias's gradients against torch's in float64 on the same values, and the picked
    loop (each channel's own window position) against the dense loop (all four, three times zero) bit for bit:
    an infinity in image 1's last row, which no window reads, sends that image to the dense loop and changes
    no bit of the result. The ReLU cuts some windows (code -1) of every channel."""
    g = torch.Generator().manual_seed(11)
    x = torch.randn(image, generator=g)
    weights = [(torch.randn(kernel_shape, generator=g) * 0.3).requires_grad_(),
               (torch.randn(kernel_shape[-1], generator=g) * 0.1).requires_grad_()]
    out = _cpu_kernels.conv_relu_max_pool_nhwc(x, *weights)
    assert out is not None and ((out == 0).sum((0, 1, 2)) > 0).all()
    grad = torch.randn(out.shape, generator=g)
    mine = torch.autograd.grad(out, weights, grad)
    exact = [w.detach().double().requires_grad_() for w in weights]
    truth = torch.autograd.grad(_torch_conv_pool(x.double(), *exact), exact, grad.double())
    for a, t in zip(mine, truth):
        assert a.dtype == torch.float32 and _close(a.double(), t)
    x[1, -1, 0, 0] = float("inf")  # unread: the last conv row is odd, pooling drops it
    dense = torch.autograd.grad(_cpu_kernels.conv_relu_max_pool_nhwc(x, *weights), weights, grad)
    for a, b_ in zip(mine, dense):
        assert torch.equal(a, b_)


@needs_kernels
def test_the_picked_gradient_loop_takes_the_finite_images_on_avx512():
    """ts_conv_grad_picked_image (cpu_kernels_conv_grad.c) runs where the build has AVX-512 and sums what a float64
    reference does; it declines (0, nothing added) an image with an infinity or a NaN, and builds without AVX-512."""
    from torchstrategy._machinery import kernel_build

    lib = _cpu_kernels.library()
    avx512 = "avx512f" in kernel_build._cpu_flags().split()
    g = torch.Generator().manual_seed(12)
    for h, w, channels, kh, kw, out_channels in ((12, 11, 3, 3, 3, 32), (9, 9, 16, 1, 1, 16), (7, 8, 5, 2, 3, 48)):
        x = torch.rand(1, h, w, channels, generator=g)
        kernel = torch.randn(kh, kw, channels, out_channels, generator=g) * 0.3
        out, code = torch.ops.torchstrategy.conv_relu_max_pool_nhwc(x, kernel, None)
        grad = torch.randn(out.shape, generator=g)
        _, oh, ow, _ = out.shape
        taps = kh * kw * channels
        offsets = torch.tensor([(ky * w + kx) * channels + c for ky in range(kh) for kx in range(kw)
                                for c in range(channels)] + [0] * 14, dtype=torch.int64)
        exact = kernel.double().requires_grad_()
        bias = torch.zeros(out_channels, dtype=torch.float64, requires_grad=True)
        truth = torch.cat([t.reshape(-1) for t in torch.autograd.grad(
            _torch_conv_pool(x.double(), exact, bias), (exact, bias), grad.double())])
        for poison in (None, float("inf"), float("nan")):
            image = x.clone()
            if poison is not None:
                image[0, 2, 3, 0] = poison
            totals = torch.zeros(taps * out_channels + out_channels, dtype=torch.float64)
            scratch = torch.empty(lib.ts_conv_grad_scratch_floats(h, w, channels))
            done = lib.ts_conv_grad_picked_image(image.data_ptr(), grad.data_ptr(), code.data_ptr(),
                                                 offsets.data_ptr(), h, w, channels, oh, ow, taps, out_channels,
                                                 totals.data_ptr(), scratch.data_ptr())
            takes = avx512 and poison is None
            assert done == int(takes)
            if takes:
                assert _close(totals, truth)
            else:
                assert not totals.any()


@needs_kernels
def test_the_fused_convolution_in_bfloat16_gives_a_bfloat16_convolutions_numbers():
    from torchstrategy._machinery import kernel_build

    g = torch.Generator().manual_seed(7)
    x = torch.rand(16, 32, 32, 3, generator=g).bfloat16()
    weights = [(torch.randn(3, 3, 3, 32, generator=g) * 0.3).requires_grad_(),
               (torch.randn(32, generator=g) * 0.1).requires_grad_()]
    kernel, bias = (w.bfloat16() for w in weights)  # a mixed_bfloat16 layer reads its float32 weights so
    out = _cpu_kernels.conv_relu_max_pool_nhwc(x, kernel, bias)
    if kernel_build.cpu_has_amx():  # oneDNN's AMX convolution is the faster path there
        assert out is None
        return
    assert out is not None and out.dtype == torch.bfloat16
    # float64 on the same bfloat16 values: the output is that rounded once to bfloat16
    exact = [w.detach().bfloat16().double().requires_grad_() for w in weights]
    reference = _torch_conv_pool(x.double(), *exact)
    assert torch.equal(out.float(), reference.bfloat16().float()) or _close(out.double(), reference, rtol=2 ** -8)
    grad = torch.randn(reference.shape, generator=g).bfloat16()
    mine = torch.autograd.grad(out, weights, grad)
    truth = torch.autograd.grad(reference, exact, grad.double())
    for a, b_ in zip(mine, truth):
        assert a.dtype == torch.float32
        assert torch.equal(a, a.bfloat16().float())  # rounded to bfloat16 once, by the cast's backward
        assert _close(a.double(), b_, rtol=2 ** -8)   # float32 sums: within bfloat16 rounding of float64


needs_bf16_dot = pytest.mark.skipif(_cpu_kernels.library() is None or not _cpu_kernels._bf16_dot_supported()
                                    or _cpu_kernels._kernel_build.cpu_has_amx(),
                                    reason="the CPU has no AVX512-BF16 (or has AMX, where oneDNN runs bfloat16)")


@pytest.fixture
def widened_bf16(monkeypatch):
    """Within the test, bfloat16 runs the float32 kernel on widened values, as on a CPU without AVX512-BF16."""
    def widen():
        monkeypatch.setattr(_cpu_kernels, "_bf16_dot_supported", lambda: False)
    return widen


@needs_bf16_dot
@pytest.mark.parametrize("image,kernel_shape,bias", [
    ((6, 32, 32, 3), (3, 3, 3, 32), True),    # the CIFAR CNN's first layer: 27 taps, 13 pairs + 1 padded
    ((5, 15, 14, 1), (3, 3, 1, 64), True),    # 9 taps, one input channel, 64 channels (4 vectors)
    ((4, 12, 12, 1), (5, 5, 1, 16), False),   # no bias, 25 taps: pairs across kernel rows
    ((3, 9, 10, 2), (2, 3, 2, 48), True),     # 12 taps, 48 channels (vectors of 16)
    ((2, 7, 7, 4), (4, 4, 4, 32), True),      # 64 taps, the most the kernel takes
])
def test_the_bfloat16_dot_product_convolution_gives_a_bfloat16_convolutions_numbers(image, kernel_shape, bias,
                                                                                      widened_bf16):
    g = torch.Generator().manual_seed(8)
    x = torch.rand(image, generator=g).bfloat16()
    x[0, 3, 4, 0] = float("nan")              # a NaN wins its windows (as torch's 0x7FC0)
    x[-1, -1, -1, -1] = float("inf")          # the last element: read by the last pair, never past it
    kernel = (torch.randn(kernel_shape, generator=g) * 0.3).bfloat16()
    b = (torch.randn(kernel_shape[-1], generator=g) * 0.1).bfloat16() if bias else None
    out = _cpu_kernels.conv_relu_max_pool_nhwc(x, kernel, b)
    reference = _torch_conv_pool(x.double(), kernel.double(), None if b is None else b.double())
    assert out is not None and out.shape == reference.shape and out.dtype == torch.bfloat16
    assert torch.isnan(out).any() and torch.isinf(out).any() == torch.isinf(reference).any()
    rounded = reference.bfloat16()
    # float32 sums of exact products, rounded once: the float64 result's rounding, or 1 bfloat16 step off it
    # where the float32 sum straddles a rounding boundary
    assert _close(out.double(), reference, rtol=2 ** -8)
    finite = torch.isfinite(reference)
    assert (out[finite] == rounded[finite]).float().mean() > 0.99
    assert torch.equal(torch.isnan(out), torch.isnan(reference))
    assert (out[torch.isnan(out)].view(torch.int16) == 0x7FC0).all()
    params = [kernel.float().requires_grad_()] + ([] if b is None else [b.float().requires_grad_()])
    fused = _cpu_kernels.conv_relu_max_pool_nhwc(x, *(p.bfloat16() for p in params), *([None] if b is None else []))
    grads = torch.autograd.grad(fused, params, torch.ones_like(fused))
    assert torch.isnan(grads[0]).any()        # the kernel's gradient meets the NaN input, as torch's does
    widened_bf16()
    widened = _cpu_kernels.conv_relu_max_pool_nhwc(x, kernel, b)
    assert _close(out.double(), widened.double(), rtol=2 ** -8)


@needs_bf16_dot
@pytest.mark.parametrize("image,kernel_shape", [((8, 20, 20, 3), (3, 3, 3, 32)), ((5, 15, 14, 1), (3, 3, 1, 64)),
                                                ((4, 12, 13, 1), (5, 5, 1, 16)), ((3, 9, 10, 2), (2, 3, 2, 48))])
def test_the_bfloat16_dot_product_gradients_are_the_widened_kernels_bits(image, kernel_shape, widened_bf16):
    """Each output channel takes one position of each window, so pairing the window's positions changes no sum:
    the AVX512-BF16 backward gives the float32 kernel's gradients on the widened values bit for bit (float32
    from the C function, and bfloat16 after the op's rounding), and both are a float64 reference's within
    bfloat16 rounding. The codes (forward) agree too where the pooled values do."""
    g = torch.Generator().manual_seed(9)
    x = torch.rand(image, generator=g).bfloat16()
    kernel = (torch.randn(kernel_shape, generator=g) * 0.3).bfloat16()
    out, code = torch.ops.torchstrategy.conv_relu_max_pool_nhwc(x, kernel, None)
    grad = torch.randn(out.shape, generator=g).bfloat16()
    lib = _cpu_kernels.library()
    sums = []
    for name, args in (("ts_conv_pool_backward_bf16", (x, grad)), ("ts_conv_pool_backward", (x.float(), grad.float()))):
        grad_kernel, grad_bias = torch.empty(kernel_shape), torch.empty(kernel_shape[-1])
        assert getattr(lib, name)(args[0].data_ptr(), args[1].data_ptr(), code.data_ptr(), grad_kernel.data_ptr(),
                                  grad_bias.data_ptr(), *x.shape, *kernel_shape[:2], kernel_shape[-1], 2) == 0
        sums.append((grad_kernel, grad_bias))
    assert torch.equal(sums[0][0], sums[1][0]) and torch.equal(sums[0][1], sums[1][1])

    weights = [(torch.randn(kernel_shape, generator=g) * 0.3).requires_grad_(),
               (torch.randn(kernel_shape[-1], generator=g) * 0.1).requires_grad_()]
    exact = [w.detach().bfloat16().double().requires_grad_() for w in weights]
    reference = _torch_conv_pool(x.double(), *exact)
    truth = torch.autograd.grad(reference, exact, grad.double())
    results = []
    for widen in (False, True):
        if widen:
            widened_bf16()
        out = _cpu_kernels.conv_relu_max_pool_nhwc(x, *(w.bfloat16() for w in weights))
        results.append((out, torch.autograd.grad(out, weights, grad)))
    (out, grads), (wide, wide_grads) = results
    assert _close(out.double(), wide.double(), rtol=2 ** -8)
    for a, b_, t in zip(grads, wide_grads, truth):
        assert a.dtype == torch.float32 and torch.equal(a, b_)
        assert _close(a.double(), t, rtol=2 ** -8)


@needs_bf16_dot
@pytest.mark.parametrize("image,kernel_shape", [((4, 15, 15, 3), (3, 3, 3, 32)), ((3, 14, 12, 2), (2, 3, 2, 48))])
def test_the_bfloat16_dot_product_loop_and_the_picked_loop_give_the_same_gradient_bits(image, kernel_shape):
    """The picked loop (cpu_kernels_conv_grad.c) takes finite bfloat16 images; an infinity in every image's last
    row, which no window reads, sends them all to the AVX512-BF16 dot product loop: the same bits."""
    g = torch.Generator().manual_seed(13)
    x = torch.randn(image, generator=g).bfloat16()
    kernel = (torch.randn(kernel_shape, generator=g) * 0.3).bfloat16()
    out, code = torch.ops.torchstrategy.conv_relu_max_pool_nhwc(x, kernel, None)
    grad = torch.randn(out.shape, generator=g).bfloat16()
    poisoned = x.clone()
    poisoned[:, -1] = float("inf")
    sums = []
    for images in (x, poisoned):
        grad_kernel, grad_bias = torch.empty(kernel_shape), torch.empty(kernel_shape[-1])
        assert _cpu_kernels.library().ts_conv_pool_backward_bf16(
            images.data_ptr(), grad.data_ptr(), code.data_ptr(), grad_kernel.data_ptr(), grad_bias.data_ptr(),
            *x.shape, *kernel_shape[:2], kernel_shape[-1], 2) == 0
        sums.append((grad_kernel, grad_bias))
    assert torch.isfinite(sums[0][0]).all() and torch.equal(sums[0][0], sums[1][0])
    assert torch.equal(sums[0][1], sums[1][1])


@pytest.mark.slow  # runs the C compiler
@needs_bf16_dot
def test_a_build_without_cpu_flags_still_has_the_bfloat16_kernel_by_its_target_attribute(tmp_path):
    """Built as for any x86-64 (no -march=native, as the fallback flag sets do): the AVX512-BF16 functions
    carry their own target, so the library builds, and on this CPU gives the native build's bits."""
    import ctypes

    from torchstrategy._machinery import kernel_build

    target = tmp_path / "plain.so"
    done = subprocess.run([kernel_build._compiler(), "-O3", "-fopenmp", "-shared", "-fPIC", "-o", str(target),
                           *map(str, kernel_build.SOURCES)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    plain = ctypes.CDLL(str(target))
    plain.ts_conv_pool_forward_bf16.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_long] * 7 + [ctypes.c_int]
    assert plain.ts_conv_pool_bf16_supported() == 1
    g = torch.Generator().manual_seed(10)
    x = torch.rand(3, 11, 12, 3, generator=g).bfloat16()
    kernel, bias = (torch.randn(3, 3, 3, 32, generator=g) * 0.3).bfloat16(), torch.randn(32, generator=g).bfloat16()
    y, code = torch.empty(3, 4, 5, 32, dtype=torch.bfloat16), torch.empty(3, 4, 5, 32, dtype=torch.int8)
    assert plain.ts_conv_pool_forward_bf16(x.data_ptr(), kernel.data_ptr(), bias.data_ptr(), y.data_ptr(),
                                           code.data_ptr(), 3, 11, 12, 3, 3, 3, 32, 1) == 0
    expected, expected_code = torch.ops.torchstrategy.conv_relu_max_pool_nhwc(x, kernel, bias)
    assert torch.equal(y, expected) and torch.equal(code, expected_code)


def test_the_fused_convolution_declines_what_it_does_not_cover():
    x, kernel, bias = torch.rand(2, 8, 8, 3), torch.randn(3, 3, 3, 16), torch.zeros(16)
    fused = _cpu_kernels.conv_relu_max_pool_nhwc
    assert fused(x.bfloat16(), kernel, bias) is None                          # dtypes mixed
    assert fused(x.bfloat16().requires_grad_(), kernel.bfloat16(), bias.bfloat16()) is None
    assert fused(x.requires_grad_(), kernel, bias) is None                    # the input needs a gradient
    x = x.detach()
    assert fused(x, torch.randn(3, 3, 3, 24), torch.zeros(24)) is None         # channels not in 16s
    assert fused(torch.rand(2, 8, 8, 8), torch.randn(3, 3, 8, 16), bias) is None  # 72 taps
    assert fused(x, kernel, torch.zeros(32)) is None                          # bias of the wrong size
    assert fused(x[:, :3], kernel, bias) is None                              # conv output under 2 rows
    with _cpu_kernels.torch_ops_only():
        assert fused(x, kernel, bias) is None


def test_the_constant_mark_is_the_one_torch_compiler_sets():
    # _library_loaded carries torch.compiler.assume_constant_result's mark, set by hand so that importing the
    # kernels does not import torch._dynamo; the decorator must still set exactly that and nothing else.
    marked = torch.compiler.assume_constant_result(lambda: True)
    added = set(vars(marked)) - set(vars(lambda: True))
    assert added == {"_dynamo_marked_constant"} and marked._dynamo_marked_constant is True
    assert _cpu_kernels._library_loaded._dynamo_marked_constant is True


@pytest.mark.slow
def test_importing_the_keras_layers_does_not_import_torch_dynamo():
    code = ("import sys, torchstrategy as tf; tf.keras.layers.Conv2D; tf.keras.Model; "
            "print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
