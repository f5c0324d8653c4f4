"""Runs the frozen TF 2.21 cases (see _reference.py) of a set of tnp functions, one test per function, and
reports every failing case of that function at once."""
from __future__ import annotations

import pytest

from tests.experimental_numpy import _reference


def functions_with_cases(names: list) -> list:
    """The names (of `names`) that have frozen cases, for parametrize."""
    return [name for name in names if name in _reference.by_function()]


def check_function(name: str) -> None:
    """Every frozen case whose first call is tnp.<name> gives TF's (or NumPy's) result."""
    found = _reference.cases({name})
    if not found:
        pytest.fail(f"no frozen TF cases for tnp.{name}")
    failures = []
    for expr, expected in found:
        try:
            _reference.check(expr, expected)
        except Exception as error:  # noqa: BLE001 - collected and reported together
            failures.append(f"{expr}: {type(error).__name__}: {error}")
    assert not failures, f"{len(failures)} of {len(found)} cases differ:\n" + "\n".join(failures)
