"""The C kernels as torch operators (torchstrategy::*): one op in torch.compile and torch.export graphs with
eager's numbers, torch.library.opcheck, one build per job on a cold cache, replica threads' share of cores."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from tests import _multiprocess as mp
from torchstrategy import _context
from torchstrategy._machinery import cpu_kernels as _cpu_kernels

needs_kernels = pytest.mark.skipif(_cpu_kernels.library() is None, reason="no C compiler to build the kernels")
OPS = torch.ops.torchstrategy


def _graph_targets(graphs) -> set:
    return {str(node.target) for graph in graphs for node in graph.graph.nodes if node.op == "call_function"}


@needs_kernels
def test_a_compiled_max_pooling_layer_runs_the_op_without_graph_breaks():
    import torchstrategy as tf

    layer = tf.keras.layers.MaxPooling2D(2)
    x = torch.randn(4, 12, 10, 8)
    x[0, :2, :2, 0] = 0.25                                  # a window of ties
    torch._dynamo.reset()
    explained = torch._dynamo.explain(lambda v: layer(v))(x)
    assert explained.graph_break_count == 0, explained.break_reasons
    assert "torchstrategy.max_pool_nhwc.default" in _graph_targets(explained.graphs)

    torch._dynamo.reset()
    compiled = torch.compile(lambda v: layer(v))
    results = []
    for run in (compiled, layer):
        v = x.clone().requires_grad_()
        out = run(v)
        out.backward(torch.arange(out.numel(), dtype=torch.float32).reshape(out.shape))
        results.append((out.detach(), v.grad))
    assert torch.equal(results[0][0], results[1][0]) and torch.equal(results[0][1], results[1][1])
    reference = F.max_pool2d(x.movedim(-1, 1), 2).movedim(1, -1)
    assert torch.equal(results[0][0], reference)


@pytest.mark.slow  # inductor compiles C++ for the CPU (g++ processes)
@needs_kernels
def test_a_compiled_cnn_fuses_its_first_convolution_into_the_op():
    import torchstrategy as tf

    L = tf.keras.layers
    tf.random.set_seed(2)
    model = tf.keras.Sequential([tf.keras.Input((14, 14, 3)), L.Conv2D(16, 3, activation="relu"), L.MaxPooling2D(),
                                 L.Conv2D(16, 3, activation="relu"), L.MaxPooling2D(), L.Flatten(), L.Dense(3)])
    x = torch.rand(4, 14, 14, 3)
    torch._dynamo.reset()
    explained = torch._dynamo.explain(lambda v: model(v, training=True))(x)
    assert explained.graph_break_count == 0, explained.break_reasons
    targets = _graph_targets(explained.graphs)
    assert {"torchstrategy.conv_relu_max_pool_nhwc.default", "torchstrategy.max_pool_nhwc.default"} <= targets
    torch._dynamo.reset()
    compiled = torch.compile(lambda v: model(v, training=True))
    grads = []
    for run in (compiled, lambda v: model(v, training=True)):
        model.zero_grad(set_to_none=True)
        out = run(x)
        out.square().sum().backward()
        grads.append((out.detach(), [p.grad.clone() for p in model.parameters()]))
    assert torch.equal(grads[0][0], grads[1][0])
    for a, b in zip(grads[0][1], grads[1][1]):
        assert torch.equal(a, b)


@needs_kernels
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_opcheck_max_pool(relu, dtype):
    x = torch.randn(3, 9, 8, 5).to(dtype).requires_grad_()
    torch.library.opcheck(OPS.max_pool_nhwc.default, (x, 2, 2, relu))
    torch.library.opcheck(OPS.max_pool_nhwc.default, (x, 3, 2, relu))
    y, code = OPS.max_pool_nhwc(x.detach(), 2, 2, relu)
    torch.library.opcheck(OPS.max_pool_nhwc_backward.default, (torch.randn(y.shape).to(dtype), code, 9, 8, 2, 2))


@needs_kernels
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_opcheck_fused_convolution(with_bias, dtype):
    x = torch.rand(2, 9, 10, 3).to(dtype)
    kernel = torch.randn(3, 3, 3, 32).to(dtype).requires_grad_()
    bias = torch.randn(32).to(dtype).requires_grad_() if with_bias else None
    torch.library.opcheck(OPS.conv_relu_max_pool_nhwc.default, (x, kernel, bias))
    y, code = OPS.conv_relu_max_pool_nhwc(x, kernel.detach(), None if bias is None else bias.detach())
    assert y.dtype == dtype
    grad = torch.randn(y.shape).to(dtype)
    torch.library.opcheck(OPS.conv_relu_max_pool_nhwc_backward.default, (x, kernel.detach(), grad, code))


def test_the_ops_give_shapes_on_meta_tensors_without_the_library():
    x = torch.empty(2, 11, 9, 4, device="meta", dtype=torch.bfloat16)
    y, code = OPS.max_pool_nhwc(x, 3, 2, True)
    assert (y.shape, y.dtype, code.dtype) == ((2, 3, 4, 4), torch.bfloat16, torch.int8)
    assert OPS.max_pool_nhwc_backward(y, code, 11, 9, 3, 2).shape == x.shape
    kernel = torch.empty(3, 2, 4, 16, device="meta")
    y, code = OPS.conv_relu_max_pool_nhwc(x.float(), kernel, None)
    assert y.shape == code.shape == (2, 4, 4, 16) and y.device.type == "meta"
    grad_kernel, grad_bias = OPS.conv_relu_max_pool_nhwc_backward(x.float(), kernel, y, code)
    assert grad_kernel.shape == kernel.shape and grad_bias.shape == (16,)


def test_replica_threads_give_each_kernel_call_its_share_of_the_cores():
    from torchstrategy.distribute.parts.threads import ReplicaThreads

    saved = torch.get_num_threads()
    torch.set_num_threads(6)
    threads = ReplicaThreads(4)
    try:
        budgets = threads.run_replicas(lambda replica: _context.thread_budget(), [(), (), (), ()])
        assert budgets == [1, 1, 1, 1] and _context.thread_budget() == 6
        threads_two = ReplicaThreads(2)
        try:
            assert threads_two.run_replicas(lambda replica: _context.thread_budget(), [(), ()]) == [3, 3]
        finally:
            threads_two.teardown()
    finally:
        threads.teardown()
        torch.set_num_threads(saved)


@needs_kernels
@pytest.mark.slow
def test_a_saved_model_holds_the_op_and_serves_eagers_numbers(tmp_path):
    import torchstrategy as tf

    L = tf.keras.layers
    tf.random.set_seed(4)
    model = tf.keras.Sequential([tf.keras.Input((10, 10, 3)), L.Conv2D(16, 3, activation="relu"), L.MaxPooling2D(),
                                 L.Flatten(), L.Dense(2)])
    x = torch.rand(3, 10, 10, 3)
    expected = model(x)
    tf.saved_model.save(model, str(tmp_path / "served"))
    programs = [torch.export.load(str(path)) for path in (tmp_path / "served").rglob("*.pt2")]
    assert programs and all("torchstrategy.conv_relu_max_pool_nhwc.default" in _graph_targets([p.graph_module])
                            for p in programs)
    (served,) = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"](x).values()
    assert torch.equal(torch.as_tensor(served), expected.detach())


# ----- builds in real processes ----------------------------------------------------------------
_BUILD = ("from torchstrategy._machinery import cpu_kernels as k; import torch; "
          "print(k.library() is not None, k.max_pool_nhwc(torch.ones(1, 2, 2, 1), (2, 2)) is not None)")


@needs_kernels
@pytest.mark.slow
def test_two_processes_on_a_cold_cache_build_the_library_once(tmp_path):
    """A `cc` on PATH that logs each call, then takes its time: unserialized, both processes would compile."""
    real = _cpu_kernels._kernel_build._compiler()
    bin_dir, log = tmp_path / "bin", tmp_path / "compiles.log"
    bin_dir.mkdir()
    wrapper = bin_dir / "cc"
    wrapper.write_text(f'#!/bin/sh\necho "$$" >> "{log}"\nsleep 2\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = mp.clean_env(TORCHSTRATEGY_CACHE_DIR=str(tmp_path / "cache"),
                       PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    runs = [subprocess.Popen([sys.executable, "-c", _BUILD], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=300) for run in runs]
    for run, (out, err) in zip(runs, outputs):
        assert run.returncode == 0, err
        assert out.split() == ["True", "True"]
    assert len(log.read_text().split()) == 1                      # one compiler call for both processes
    # the library and its checksum record; no lock or temp left
    assert sorted(p.suffix for p in (tmp_path / "cache" / "kernels").iterdir()) == [".sha256", ".so"]


@pytest.mark.slow
def test_without_the_library_the_ops_compute_torchs_numbers(tmp_path):
    """An exported program run where the kernels are off (or cannot be built) still runs its ops."""
    code = r'''
import json, torch, torch.nn.functional as F
from torchstrategy._machinery import cpu_kernels as _cpu_kernels
assert _cpu_kernels.library() is None
g = torch.Generator().manual_seed(0)
x = torch.randn(3, 9, 8, 5, generator=g)
x[0, :3, :2, 0] = float("nan")
ok = []
for relu in (False, True):
    v = x.clone().requires_grad_()
    y, _ = torch.ops.torchstrategy.max_pool_nhwc(v, 3, 2, relu)
    r = x.clone().requires_grad_()
    ref = F.max_pool2d(r.movedim(-1, 1), (3, 2)).movedim(1, -1)
    ref = F.relu(ref) if relu else ref
    grad = torch.randn(ref.shape, generator=g)
    y.backward(grad); ref.backward(grad)
    ok.append(torch.equal(y.nan_to_num(7.0), ref.nan_to_num(7.0)) and torch.equal(v.grad, r.grad))
img, kernel = torch.rand(2, 9, 9, 3, generator=g), torch.randn(3, 3, 3, 16, generator=g)
y, _ = torch.ops.torchstrategy.conv_relu_max_pool_nhwc(img, kernel, None)
ref = F.relu(F.max_pool2d(F.conv2d(img.movedim(-1, 1), kernel.permute(3, 2, 0, 1)), 2)).movedim(1, -1)
ok.append(torch.equal(y, ref))
print(json.dumps(ok))
'''
    env = mp.clean_env(TORCHSTRATEGY_CACHE_DIR=str(tmp_path / "cache"), TORCHSTRATEGY_CPU_KERNELS="0")
    done = mp.run_python(["-c", code], env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [True, True, True]
