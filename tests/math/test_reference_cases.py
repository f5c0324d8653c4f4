"""tf.math's special functions, safe variants, segment reductions and checks against TF 2.21 outputs frozen
in math_reference.json (tools/tf_reference/math_linalg_reference.py), inputs passed as NumPy arrays."""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

import torchstrategy as tf

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("_tf_cases", os.path.join(os.path.dirname(_HERE), "_tf_cases.py"))
_cases = importlib.util.module_from_spec(_spec)
sys.modules.setdefault(_spec.name, _cases)
_spec.loader.exec_module(_cases)
CASES = _cases.load(os.path.join(_HERE, "math_reference.json"))


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{_cases.case_id(c)}" for i, c in enumerate(CASES)])
def test_matches_tf(case):
    _cases.check_case(tf, case)
