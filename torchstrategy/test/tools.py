"""tf.test's module functions: device and build queries, compute_gradient, main, Benchmark, the decorators, and
the refused graph/cluster helpers."""
from __future__ import annotations

import importlib.util
import platform
import unittest
from typing import Any, Callable, Optional

import numpy as np
import torch

from torchstrategy.test.case import evaluate


def _numpy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        return value.float().numpy() if value.dtype == torch.bfloat16 else value.numpy()
    return value


def is_built_with_cuda() -> bool:
    """Whether torch was built with CUDA."""
    return torch.version.cuda is not None


def is_built_with_rocm() -> bool:
    """Whether torch was built with ROCm."""
    return getattr(torch.version, "hip", None) is not None


def is_built_with_gpu_support() -> bool:
    """Whether torch was built with CUDA or ROCm."""
    return is_built_with_cuda() or is_built_with_rocm()


def is_built_with_xla() -> bool:
    """Whether torch-xla is installed."""
    return importlib.util.find_spec("torch_xla") is not None


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability: Optional[tuple] = None) -> bool:
    """Whether a GPU is usable (with at least `min_cuda_compute_capability` (major, minor) when given)."""
    if not torch.cuda.is_available():
        return False
    if cuda_only and is_built_with_rocm():
        return False
    if min_cuda_compute_capability is None:
        return True
    wanted = tuple(int(v) for v in min_cuda_compute_capability)
    return any(torch.cuda.get_device_capability(i) >= wanted for i in range(torch.cuda.device_count()))


def gpu_device_name() -> str:
    """'/device:GPU:0' when a GPU is usable, else ''."""
    return "/device:GPU:0" if torch.cuda.is_available() else ""


def is_cpu_target_available(target: str) -> bool:
    """Whether this machine's CPU is of the given LLVM target family ('x86', 'aarch64', ...)."""
    machine = platform.machine().lower()
    families = {"x86": ("x86_64", "amd64", "i386", "i686"), "aarch64": ("aarch64", "arm64"), "arm": ("arm",)}
    return machine in families.get(str(target).lower(), (str(target).lower(),))


def compute_gradient(f: Callable[..., Any], x: Any, delta: Optional[float] = None) -> tuple[tuple, tuple]:
    """(theoretical, numerical) Jacobians of f at the list of inputs x, each [x_i.size, y.size]: autograd's and
    central differences with step `delta` (default 1/1024)."""
    step = 1.0 / 1024 if delta is None else float(delta)
    inputs = [torch.as_tensor(_numpy(v)).detach().clone() for v in x]
    theoretical, numerical = [], []
    for index, value in enumerate(inputs):
        def only(v: torch.Tensor, index: int = index) -> torch.Tensor:
            args = list(inputs)
            args[index] = v
            return torch.as_tensor(f(*args))
        y = only(value)
        jacobian = torch.autograd.functional.jacobian(only, value)
        theoretical.append(jacobian.reshape(y.numel(), value.numel()).t().numpy())
        estimate = np.zeros((value.numel(), y.numel()), dtype=value.numpy().dtype)
        for i in range(value.numel()):
            shifted = value.clone().reshape(-1)
            shifted[i] += step
            up = only(shifted.reshape(value.shape))
            shifted[i] -= 2 * step
            down = only(shifted.reshape(value.shape))
            estimate[i] = ((up - down) / (2 * step)).reshape(-1).detach().numpy()
        numerical.append(estimate)
    return tuple(theoretical), tuple(numerical)


def disable_with_predicate(pred: Callable[[], bool], skip_message: str) -> Callable:
    """Decorator: the test is skipped with skip_message when pred() is true."""
    def decorator(test: Callable) -> Callable:
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            if pred():
                self.skipTest(skip_message)
            return test(self, *args, **kwargs)
        wrapper.__name__, wrapper.__doc__ = test.__name__, test.__doc__
        return wrapper
    return decorator


def with_eager_op_as_function(cls: Optional[type] = None, only_as_function: bool = False) -> Any:
    """Accepted for TF compatibility: eager torch ops have no 'as function' variant, so the class is unchanged."""
    return (lambda c: c) if cls is None else cls


def main(argv: Optional[list] = None) -> None:
    """Runs the tests of the __main__ module (unittest's runner)."""
    unittest.main(module="__main__", argv=argv)


class Benchmark:
    """Base of benchmarks: report_benchmark prints one result line."""

    def report_benchmark(self, iters: Optional[int] = None, cpu_time: Optional[float] = None,
                         wall_time: Optional[float] = None, throughput: Optional[float] = None,
                         extras: Optional[dict] = None, name: Optional[str] = None,
                         metrics: Optional[list] = None) -> None:
        """Prints the benchmark's name, iterations, times, throughput, extras and metrics."""
        fields = {"iters": iters, "cpu_time": cpu_time, "wall_time": wall_time, "throughput": throughput,
                  "extras": extras, "metrics": metrics}
        shown = " ".join(f"{key}={value}" for key, value in fields.items() if value is not None)
        print(f"benchmark {name or type(self).__name__}: {shown}")

    def evaluate(self, tensors: Any) -> Any:
        """The NumPy values of tensors (nested)."""
        return evaluate(tensors)


def benchmark_config() -> None:
    """TF returns a ConfigProto for benchmarks; torch needs none, so this returns None."""
    return None


def create_local_cluster(num_workers: int, num_ps: int, protocol: str = "grpc", worker_config: Any = None,
                         ps_config: Any = None) -> tuple:
    """Refused: start tf.distribute.Server tasks (or a ParameterServerStrategy cluster) instead."""
    raise NotImplementedError("tf.test.create_local_cluster is not provided; start the tasks with "
                              "tf.distribute.Server(cluster_spec, job_name, task_index) in child processes.")


def assert_equal_graph_def(expected: Any, actual: Any) -> None:
    """Refused: torch programs have no GraphDef."""
    raise NotImplementedError("tf.test.assert_equal_graph_def compares TF GraphDefs; torch programs have none.")


class experimental:  # noqa: N801 - tf.test.experimental's namespace
    """tf.test.experimental: sync_devices."""

    @staticmethod
    def sync_devices() -> None:
        """Waits for every queued GPU operation to finish (no-op without a GPU)."""
        if torch.cuda.is_available():
            torch.cuda.synchronize()
