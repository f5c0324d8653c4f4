"""Keras's categorical encoding layers: CategoryEncoding (one-hot / multi-hot / count of integer ids) and
Discretization (bucketizing by boundaries, or by quantiles found by `adapt`), plus the encoding they share."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.base import Layer

_MODES = ("int", "one_hot", "multi_hot", "count")


def _check_mode(owner: str, output_mode: str, allowed: Sequence[str] = _MODES) -> None:
    if output_mode not in allowed:
        raise ValueError(f"Invalid value for argument `output_mode` of {owner}. Expected one of {tuple(allowed)}. "
                         f"Received: output_mode={output_mode!r}")


def _check_sparse(owner: str, sparse: bool) -> None:
    if sparse:
        raise NotImplementedError(f"{owner}(sparse=True) is not supported here (torch has no tf.SparseTensor "
                                  "output); use sparse=False for a dense output.")


def _encode_categorical(indices: torch.Tensor, output_mode: str, depth: int, dtype: torch.dtype,
                        count_weights: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Keras's encode_categorical_inputs on dense ids: 'int' casts; 'one_hot' adds a `depth` axis (a trailing
    axis of 1 is dropped first); 'multi_hot'/'count' replace the last axis by `depth` presence flags/counts."""
    if output_mode == "int":
        return indices.to(dtype)
    indices = indices.long()
    if indices.dim() == 0:
        indices = indices.unsqueeze(-1)
    if output_mode == "one_hot":
        if indices.dim() > 1 and indices.shape[-1] == 1:
            indices = indices.squeeze(-1)
        return torch.nn.functional.one_hot(indices, depth).to(dtype)
    if indices.dim() > 2:
        raise ValueError(f"When output_mode is not 'int', maximum supported output rank is 2. Received "
                         f"output_mode {output_mode} and input shape {tuple(indices.shape)}, which would result "
                         f"in output rank {indices.dim()}.")
    flat = indices if indices.dim() == 2 else indices.unsqueeze(0)
    out = torch.zeros((flat.shape[0], depth), dtype=torch.float64 if count_weights is not None else torch.float32)
    if output_mode == "multi_hot":
        out.scatter_(1, flat, 1.0)
    else:
        weights = (torch.ones_like(flat, dtype=out.dtype) if count_weights is None
                   else count_weights.reshape(flat.shape).to(out.dtype))
        out.scatter_add_(1, flat, weights)
    return (out if indices.dim() == 2 else out[0]).to(dtype)


class CategoryEncoding(Layer):
    """Encodes integer ids in [0, num_tokens): 'one_hot', 'multi_hot' (default) or 'count' (optionally weighted
    by `count_weights`).

    >>> CategoryEncoding(num_tokens=4)(torch.tensor([[0, 1], [3, 3]])).tolist()
    [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    """

    _float_policy_only = False

    def __init__(self, num_tokens: Optional[int] = None, output_mode: str = "multi_hot", sparse: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if output_mode == "binary":  # Keras 2's name
            output_mode = "multi_hot"
        _check_mode("CategoryEncoding", output_mode, ("count", "one_hot", "multi_hot"))
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens is not known "
                             "beforehand, use the IntegerLookup layer instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        _check_sparse("CategoryEncoding", sparse)
        self.num_tokens, self.output_mode, self.sparse = num_tokens, output_mode, sparse
        self.built = True

    def call(self, inputs: Any, count_weights: Any = None) -> torch.Tensor:
        ids = backend.to_tensor(inputs)
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.num_tokens):
            raise ValueError(f"Input values must be in the range 0 <= values < num_tokens with num_tokens="
                             f"{self.num_tokens}; received values from {int(ids.min())} to {int(ids.max())}.")
        weights = None if count_weights is None else backend.to_tensor(count_weights)
        if weights is not None and self.output_mode != "count":
            raise ValueError(f"`count_weights` is not used when `output_mode` is not 'count'. Received "
                             f"output_mode={self.output_mode!r}.")
        return _encode_categorical(ids, self.output_mode, self.num_tokens, self._compute_torch_dtype, weights)

    def compute_output_shape(self, input_shape: Any) -> Any:
        input_shape = tuple(input_shape)
        if not input_shape:
            return (self.num_tokens,)
        if self.output_mode == "one_hot" and input_shape[-1] != 1:
            return input_shape + (self.num_tokens,)
        return input_shape[:-1] + (self.num_tokens,)

    def get_config(self) -> dict:
        return {**super().get_config(), "num_tokens": self.num_tokens, "output_mode": self.output_mode,
                "sparse": self.sparse}


def _summarize(values: np.ndarray, epsilon: float) -> np.ndarray:
    """Keras's quantile summary: every `step`-th sorted value with weight `step` (step = n * epsilon, >= 1)."""
    values = np.sort(np.reshape(values, [-1]))
    step = max(np.size(values) * epsilon, 1)
    boundaries = values[int(step - 1)::int(step)]
    return np.stack([boundaries, np.ones_like(boundaries) * step])


def _compress(summary: np.ndarray, epsilon: float) -> np.ndarray:
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cumulative = summary[1].cumsum()
    fractions = cumulative / cumulative[-1]
    bins = np.interp(percents, fractions, summary[0])
    cumulative = np.interp(percents, fractions, cumulative)
    weights = cumulative - np.concatenate((np.array([0]), cumulative[:-1]))
    return np.stack((bins, weights)).astype("float32")


class Discretization(Layer):
    """Buckets values by `bin_boundaries` (bucket i holds boundaries[i-1] <= x < boundaries[i]), or by
    `num_bins` quantile boundaries found with `adapt(data)` (Keras's approximate summary, error `epsilon`).

    >>> Discretization(bin_boundaries=[0.0, 1.0])(torch.tensor([-1.0, 0.5, 2.0])).tolist()
    [0, 1, 2]
    """

    _float_policy_only = False

    def __init__(self, bin_boundaries: Optional[Sequence[float]] = None, num_bins: Optional[int] = None,
                 epsilon: float = 0.01, output_mode: str = "int", sparse: bool = False, dtype: Any = None,
                 name: Optional[str] = None) -> None:
        super().__init__(name=name, dtype=dtype)
        if sparse and output_mode == "int":
            raise ValueError("`sparse=True` may only be used if `output_mode` is `'one_hot'`, `'multi_hot'`, or "
                             f"`'count'`. Received: sparse={sparse} and output_mode={output_mode}")
        _check_sparse("Discretization", sparse)
        _check_mode("Discretization", output_mode)
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. Received: `num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(f"Both `num_bins` and `bin_boundaries` should not be set. Received: `num_bins="
                             f"{num_bins}` and `bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = None if bin_boundaries is None else list(bin_boundaries)
        self.num_bins, self.epsilon, self.output_mode, self.sparse = num_bins, epsilon, output_mode, sparse
        self.summary = None if self.bin_boundaries else np.array([[], []], dtype="float32")
        self.built = True

    def adapt(self, data: Any, steps: Optional[int] = None) -> None:
        """Finds `num_bins - 1` quantile boundaries of `data` (an array, or an iterable of batches)."""
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized with `bin_boundaries`, "
                             "use `num_bins` instead.")
        self.reset_state()
        if isinstance(data, (np.ndarray, torch.Tensor)) or not hasattr(data, "__iter__"):
            self.update_state(data)
        else:
            for i, batch in enumerate(data):
                if steps is not None and i >= steps:
                    break
                self.update_state(batch)
        self.finalize_state()

    def update_state(self, data: Any) -> None:
        array = data.detach().cpu().numpy() if isinstance(data, torch.Tensor) else np.array(data)
        summary = _summarize(array.astype("float32"), self.epsilon)
        merged = np.concatenate((summary, self.summary), axis=1)
        merged = np.take(merged, np.argsort(merged[0]), axis=1)
        self.summary = _compress(merged, self.epsilon)

    def finalize_state(self) -> None:
        if self.num_bins is not None:
            self.bin_boundaries = _compress(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def reset_state(self) -> None:
        if self.num_bins is not None:
            self.summary = np.array([[], []], dtype="float32")

    def call(self, inputs: Any) -> torch.Tensor:
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at construction time or call "
                             "`adapt(dataset)` before you can start using the `Discretization` layer.")
        values = backend.to_tensor(inputs)
        if not values.is_floating_point():
            values = values.to(torch.float32)
        boundaries = torch.tensor(self.bin_boundaries, dtype=values.dtype, device=values.device)
        indices = torch.bucketize(values, boundaries, right=True)
        dtype = torch.int32 if self.output_mode == "int" else self._compute_torch_dtype
        return _encode_categorical(indices, self.output_mode, len(self.bin_boundaries) + 1, dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        if self.output_mode == "int":
            return input_shape
        depth = len(self.bin_boundaries) + 1 if self.bin_boundaries is not None else self.num_bins
        if self.output_mode == "one_hot":
            if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
                return tuple(input_shape[:-1]) + (depth,)
            return tuple(input_shape) + (depth,)
        if input_shape and len(input_shape) >= 2:
            return (input_shape[0],) + tuple(input_shape[2:]) + (depth,)
        return (depth,)

    def get_config(self) -> dict:
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins, "epsilon": self.epsilon,
                "output_mode": self.output_mode, "sparse": self.sparse, "name": self.name,
                "dtype": self._dtype_policy.name}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Discretization":
        config = dict(config)
        if config.get("bin_boundaries") is not None and config.get("num_bins") is not None:
            boundaries = config.pop("bin_boundaries")
            layer = cls(**config)
            layer.bin_boundaries = boundaries
            return layer
        return cls(**config)
