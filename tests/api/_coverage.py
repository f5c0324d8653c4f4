"""Loads tools/api_coverage.py once for the API tests (it resolves manifest names in torchstrategy and
compares signatures; the manifest is frozen from TF 2.21 / Keras 3.15, TF is never imported)."""
from __future__ import annotations

import functools
import importlib.util
import os
import sys

_TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                     "tools", "api_coverage.py")


@functools.lru_cache(maxsize=1)
def tool():
    """The api_coverage module (cached: the manifest and the analysis load once per session)."""
    spec = importlib.util.spec_from_file_location("_api_coverage_tool", _TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=1)
def report():
    """analyze() over the whole manifest, computed once."""
    return tool().analyze()
