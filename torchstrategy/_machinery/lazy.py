"""Lazy attribute tables for the tf-shaped namespaces, so `import torchstrategy as tf`
stays cheap and each submodule is imported only when a script touches it."""
from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_namespace(module_name: str, table: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list]]:
    """Returns `__getattr__`/`__dir__` for a module; table maps name -> 'module' or 'module:attr'."""

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        path, _, attr = target.partition(":")
        module = importlib.import_module(path)
        value = getattr(module, attr) if attr else module
        import sys

        setattr(sys.modules[module_name], name, value)
        return value

    def __dir__() -> list:
        return sorted(table)

    return __getattr__, __dir__
