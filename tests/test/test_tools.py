"""tf.test's module functions: device queries against torch, compute_gradient against the analytic Jacobian
(TF 2.21 gives the same matrices), disable_with_predicate."""
from __future__ import annotations

import io
import unittest

import numpy as np
import torch

import torchstrategy as tf


def test_device_queries_agree_with_torch():
    assert tf.test.is_gpu_available() == torch.cuda.is_available()
    assert tf.test.gpu_device_name() == ("/device:GPU:0" if torch.cuda.is_available() else "")
    assert tf.test.is_built_with_cuda() == (torch.version.cuda is not None)
    assert tf.test.is_built_with_gpu_support() >= tf.test.is_built_with_cuda()
    if torch.cuda.is_available():
        assert tf.test.is_gpu_available(min_cuda_compute_capability=(1, 0))
        assert not tf.test.is_gpu_available(min_cuda_compute_capability=(99, 0))


def test_compute_gradient_matches_the_analytic_jacobian():
    # TF 2.21: compute_gradient(lambda x: x * x, [[1., 2.]]) -> ([[2, 0], [0, 4]],) twice
    theoretical, numerical = tf.test.compute_gradient(lambda x: x * x, [torch.tensor([1.0, 2.0])])
    np.testing.assert_allclose(theoretical[0], [[2.0, 0.0], [0.0, 4.0]])
    np.testing.assert_allclose(numerical[0], [[2.0, 0.0], [0.0, 4.0]], atol=1e-3)
    theoretical, _ = tf.test.compute_gradient(lambda a, b: a @ b, [torch.ones(1, 2), torch.tensor([[3.0], [5.0]])])
    np.testing.assert_allclose(theoretical[0], [[3.0], [5.0]])
    np.testing.assert_allclose(theoretical[1], [[1.0], [1.0]])


def test_disable_with_predicate_skips_when_the_predicate_holds():
    class Case(tf.test.TestCase):
        @tf.test.disable_with_predicate(lambda: True, "not here")
        def test_skipped(self):
            raise AssertionError("must not run")

        @tf.test.disable_with_predicate(lambda: False, "runs")
        def test_runs(self):
            pass

    result = unittest.TextTestRunner(stream=io.StringIO()).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(Case))
    skipped = sorted(test.id().rsplit(".", 1)[1] for test, _ in result.skipped)
    assert result.wasSuccessful() and result.testsRun == 3 and skipped == ["test_session", "test_skipped"]
