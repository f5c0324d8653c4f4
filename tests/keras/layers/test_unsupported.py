"""The Keras 3.15 layers not implemented yet take Keras's exact arguments and raise NotImplementedError that
names the layer and the alternative."""
from __future__ import annotations

import pytest

from torchstrategy.keras import layers


@pytest.mark.parametrize("make,name", [
    (lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(), "ContrastLimitedAdaptiveHistogramEqualization"),
    (lambda: layers.MaxNumBoundingBoxes(5), "MaxNum"),
])
def test_refused_with_the_alternative(make, name):
    with pytest.raises(NotImplementedError, match=rf"keras\.layers\.{name}.*Instead, "):
        make()
