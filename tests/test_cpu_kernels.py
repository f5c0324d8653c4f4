"""The C kernels of torchstrategy/_cpu_kernels.py: exactly torch's numbers (values and gradients, NaNs and
ties included), a cached build, and torch's own ops wherever the kernels cannot be had."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from torchstrategy import _cpu_kernels

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
    code = ("from torchstrategy import _cpu_kernels as k; import torch; lib = k.library(); "
            "out = k.max_pool_nhwc(torch.ones(1, 2, 2, 1), (2, 2)); print(lib is not None, out is not None)")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@needs_kernels
def test_the_build_is_cached_per_machine_and_reused(tmp_path):
    assert _probe({}, tmp_path) == ["True", "True"]
    built = list((tmp_path / "cache" / "kernels").iterdir())
    assert len(built) == 1 and built[0].suffix == ".so"       # no temp files left behind
    stamp = built[0].stat().st_mtime_ns
    assert _probe({}, tmp_path) == ["True", "True"]
    assert [p.stat().st_mtime_ns for p in (tmp_path / "cache" / "kernels").iterdir()] == [stamp]


def test_off_switch_and_a_machine_without_a_compiler_use_torchs_ops(tmp_path):
    assert _probe({"TORCHSTRATEGY_CPU_KERNELS": "0"}, tmp_path) == ["False", "False"]
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    assert _probe({"PATH": str(empty_bin)}, tmp_path) == ["False", "False"]
    assert not (tmp_path / "cache" / "kernels").exists()
