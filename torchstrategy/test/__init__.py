"""`tf.test` for torch programs: TestCase (case.py, with absl's helpers from absl_asserts.py) and the module
functions (tools.py: device queries, compute_gradient, main, Benchmark, ...)."""
from __future__ import annotations

from torchstrategy.test.case import TestCase
from torchstrategy.test.tools import (Benchmark, assert_equal_graph_def, benchmark_config, compute_gradient,
                                      create_local_cluster, disable_with_predicate, experimental, gpu_device_name,
                                      is_built_with_cuda, is_built_with_gpu_support, is_built_with_rocm,
                                      is_built_with_xla, is_cpu_target_available, is_gpu_available, main,
                                      with_eager_op_as_function)

__all__ = [name for name in dir() if not name.startswith("_") and name not in {"annotations", "case", "tools"}]
