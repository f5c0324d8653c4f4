"""tf.data.experimental.assert_cardinality (the count checked while iterating, FailedPreconditionError as in tf.data) and
tf.data.experimental.Counter (an endless arithmetic sequence)."""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import torch

from torchstrategy.data._ops import UnaryDataset, closing
from torchstrategy.data.dataset import INFINITE_CARDINALITY, Dataset
from torchstrategy.errors import FailedPreconditionError


class AssertCardinalityDataset(UnaryDataset):
    def __init__(self, input_dataset: Dataset, expected: int):
        super().__init__(input_dataset)
        self._expected = expected

    def _iterate_elements(self) -> Iterator[Any]:
        iterator = self._input._iterate()
        count = 0
        try:
            for element in iterator:
                count += 1
                if self._expected != INFINITE_CARDINALITY and count > self._expected:
                    raise FailedPreconditionError(None, None, f"Input dataset was expected to contain {self._expected} "
                                                  f"elements but contained at least {count} elements.")
                yield element
            if self._expected == INFINITE_CARDINALITY or count < self._expected:
                expected = "an infinite number of" if self._expected == INFINITE_CARDINALITY else self._expected
                raise FailedPreconditionError(None, None, f"Input dataset was expected to contain {expected} elements but "
                                              f"contained only {count} elements.")
        finally:
            closing(iterator)

    def _cardinality(self) -> int:
        return self._expected


def assert_cardinality(dataset: Dataset, expected_cardinality: int) -> Dataset:
    """The same elements, raising FailedPreconditionError while iterating if there are not exactly
    `expected_cardinality` of them; cardinality() reports that number."""
    if isinstance(expected_cardinality, torch.Tensor):
        expected_cardinality = int(expected_cardinality)
    if isinstance(expected_cardinality, bool) or not isinstance(expected_cardinality, (int, np.integer)) or (
            expected_cardinality < 0 and expected_cardinality != INFINITE_CARDINALITY):
        raise ValueError(f"assert_cardinality: expected_cardinality must be an int >= 0 or "
                         f"INFINITE_CARDINALITY; got {expected_cardinality!r}.")
    return AssertCardinalityDataset(dataset, int(expected_cardinality))


def Counter(start: Any = 0, step: Any = 1, dtype: Any = torch.int64) -> Dataset:  # noqa: N802 (TF's name)
    """start, start + step, start + 2 * step, ... forever, as scalars of `dtype` (Dataset.counter's older name)."""
    from torchstrategy.data._generated import counter

    return counter(start, step, dtype)
