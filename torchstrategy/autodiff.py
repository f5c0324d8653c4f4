"""`tf.autodiff`: ForwardAccumulator (Jacobian-vector products of what runs inside its `with` block, along the
tangents given for its primals) and GradientTape under its tf.autodiff name."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.graph_compat import UnconnectedGradients
from torchstrategy.nest import assert_same_structure, flatten, pack_sequence_as
from torchstrategy.tape import GradientTape


class ForwardAccumulator:
    """Computes directional derivatives J(primals)·tangents of the values computed in its block
    (tf.autodiff.ForwardAccumulator); `acc.jvp(y)` is the derivative of `y` along the tangents.

    TF code computes with the primal objects themselves (variables, watched tensors), so the block records
    the computation as autograd does and `jvp` takes the Jacobian-vector product from it (the transpose of a
    vector-Jacobian product, differentiated again): the same numbers as forward mode, also nested inside a
    GradientTape for Hessian-vector products.

    >>> import torch
    >>> x = torch.tensor([1.0, 2.0])
    >>> with ForwardAccumulator(x, torch.tensor([1.0, 0.0])) as acc:
    ...     y = (x * x).sum()
    >>> float(acc.jvp(y))
    2.0
    """

    def __init__(self, primals: Any, tangents: Any) -> None:
        assert_same_structure(primals, tangents)
        self._primals = [self._primal(p) for p in flatten(primals)]
        self._tangents = []
        for primal, tangent in zip(self._primals, flatten(tangents)):
            tangent = torch.as_tensor(tangent, dtype=primal.dtype, device=primal.device)
            if tangent.shape != primal.shape:
                raise ValueError(f"ForwardAccumulator: a tangent has shape {list(tangent.shape)}, its primal "
                                 f"{list(primal.shape)}: each tangent must have its primal's shape.")
            self._tangents.append(tangent.detach())
        self._grad_mode: Any = None

    @staticmethod
    def _primal(value: Any) -> torch.Tensor:
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"ForwardAccumulator primals are tensors or variables; got {type(value).__name__}.")
        if not (value.is_floating_point() or value.is_complex()):
            raise ValueError(f"ForwardAccumulator: a primal of dtype {value.dtype} has no derivative; cast it to a "
                             f"float dtype first.")
        return value

    def __enter__(self) -> "ForwardAccumulator":
        self._grad_mode = torch.enable_grad()
        self._grad_mode.__enter__()
        GradientTape().watch(self._primals)  # recorded from here on
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._grad_mode is not None:
            self._grad_mode.__exit__(*exc)
            self._grad_mode = None

    def jvp(self, primals: Any, unconnected_gradients: Any = UnconnectedGradients.NONE) -> Any:
        """The Jacobian-vector product of each tensor in `primals` (any nest) along the tangents: None (or zeros
        with UnconnectedGradients.ZERO) for a tensor the primals do not reach."""
        zero = str(getattr(unconnected_gradients, "value", unconnected_gradients)).lower().endswith("zero")
        results = [self._one(target, zero) for target in flatten(primals)]
        return pack_sequence_as(primals, results)

    def _one(self, target: Any, zero: bool) -> Optional[torch.Tensor]:
        if not isinstance(target, torch.Tensor):
            raise TypeError(f"ForwardAccumulator.jvp takes tensors; got {type(target).__name__}.")
        for primal, tangent in zip(self._primals, self._tangents):
            if target is primal:
                return tangent.clone()
        unconnected = torch.zeros_like(target) if zero else None
        if not target.requires_grad or not target.is_floating_point():
            return unconnected
        probe = torch.zeros_like(target, requires_grad=True)
        vjps = torch.autograd.grad(target, self._primals, probe, create_graph=True, allow_unused=True)
        pairs = [(vjp, tangent) for vjp, tangent in zip(vjps, self._tangents)
                 if vjp is not None and vjp.requires_grad]
        if not pairs:
            return torch.zeros_like(target) if any(v is not None for v in vjps) else unconnected
        (result,) = torch.autograd.grad([vjp for vjp, _ in pairs], probe, [t for _, t in pairs],
                                        create_graph=torch.is_grad_enabled(), allow_unused=True)
        return torch.zeros_like(target) if result is None else result

    def __repr__(self) -> str:
        return f"<ForwardAccumulator over {len(self._primals)} primal(s)>"


__all__ = ["ForwardAccumulator", "GradientTape"]
