"""Keyword arguments that left a TF-signature function: a call still spelling one gets a TypeError naming
its new home, while `inspect.signature` keeps showing TF's exact signature (through `__wrapped__`)."""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def moved_keywords(**moves: str) -> Callable[[F], F]:
    """Decorator for a function or `__init__` that keeps TF's signature: passing any keyword named in `moves`
    raises TypeError saying, in `moves[name]`, how to spell it now (a torchstrategy extension that moved)."""
    if not moves or not all(isinstance(text, str) and text for text in moves.values()):
        raise ValueError("moved_keywords needs keyword=new-spelling pairs, each a non-empty string.")

    def decorate(function: F) -> F:
        owner = function.__qualname__.removesuffix(".__init__")

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any) -> Any:
            moved = [name for name in kwargs if name in moves]
            if moved:
                name = moved[0]
                raise TypeError(f"{owner}() no longer takes `{name}` (torchstrategy extensions left TF's "
                                f"signature): {moves[name]}")
            return function(*args, **kwargs)

        return checked  # type: ignore[return-value]

    return decorate
