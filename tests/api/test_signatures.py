"""Every TF 2.21 / Keras 3.15 name torchstrategy implements has TF's signature: parameter names, order,
kinds and defaults (the frozen manifest, tools/tf_api_manifest.py). Known deviations are listed in
signature_deviations.txt; that list only shrinks."""
from __future__ import annotations

import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("_api_tests_coverage", os.path.join(_HERE, "_coverage.py"))
_coverage = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _coverage
_spec.loader.exec_module(_coverage)


def _describe(names, mismatches) -> str:
    lines = []
    for name in sorted(names):
        expected, actual = mismatches[name]
        lines.append(f"{name}\n    TF 2.21/Keras 3.15: {expected}\n    torchstrategy:      {actual}")
    return "\n".join(lines)


def test_no_unlisted_signature_deviation():
    tool, report = _coverage.tool(), _coverage.report()
    listed = tool.read_deviations()
    new = [name for name in report.mismatches if name not in listed]
    assert not new, (f"{len(new)} implemented name(s) differ from TF's signature (copy TF's signature; a "
                     f"parameter we cannot honour raises NotImplementedError when set):\n"
                     + _describe(new, report.mismatches))


def test_listed_deviations_still_deviate():
    tool, report = _coverage.tool(), _coverage.report()
    fixed = sorted(name for name in tool.read_deviations() if name not in report.mismatches)
    assert not fixed, ("these names now match TF (or are gone): remove them from "
                       "tests/api/signature_deviations.txt:\n" + "\n".join(fixed))


def test_the_check_sees_core_names():
    """The walk finds what a script uses most (a resolver that found nothing would pass the tests above)."""
    report = _coverage.report()
    for namespace in ("keras.layers", "keras.losses", "keras.metrics", "keras.optimizers", "tf.data", "tf.math",
                      "tf.distribute", "tf.train"):
        total, implemented, matching = report.totals[namespace]
        assert implemented >= 5, namespace
        assert matching <= implemented <= total
    assert report.members_checked > 300


def test_comparison_catches_a_difference():
    """A wrong default, a renamed or a reordered parameter each count as a mismatch; a private optional
    hook parameter of ours does not."""
    tool = _coverage.tool()
    assert tool._same("(x, axis=None, name=None)", "(x, axis=None, name=None)")
    assert not tool._same("(x, axis=None, name=None)", "(x, axis=0, name=None)")
    assert not tool._same("(x, axis=None, name=None)", "(x, name=None, axis=None)")
    assert not tool._same("(x, axis=None, name=None)", "(x, dim=None, name=None)")
    assert not tool._same("(x, *, axis=None)", "(x, axis=None)")
    assert tool._same("(self, inputs)", "(self, inputs, _relu=False)")
    assert tool._same("(dtype=<DType>)", "(dtype=<DType>)")
    assert tool.explain("(x, axis=None)", "(x, axis=0, k=1)") == "extra k; default axis: want None, have 0"
