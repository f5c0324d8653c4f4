"""MaxNumBoundingBoxes against Keras 3.15 (keras_augment_reference.json): boxes and labels cut or padded to
max_number; images pass through; ragged lists, unbatched inputs, shapes and errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.keras.layers._augment_reference import CASES, cases_of, check_config
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("MaxNumBoundingBoxes"))
def test_matches_keras(case_id):
    case = CASES[case_id]
    layer = layers.MaxNumBoundingBoxes(**case["kwargs"])
    data = case["input"]
    out = layer({"images": torch.tensor(data["images"]),
                 "bounding_boxes": {"boxes": torch.tensor(data["bounding_boxes"]["boxes"]),
                                    "labels": torch.tensor(data["bounding_boxes"]["labels"])}})
    np.testing.assert_array_equal(out["bounding_boxes"]["boxes"].numpy(), case["output"]["boxes"])
    np.testing.assert_array_equal(out["bounding_boxes"]["labels"].numpy(), case["output"]["labels"])
    assert torch.equal(out["images"], torch.tensor(data["images"]))
    check_config(layer, case["config"])


def test_unbatched_and_ragged_inputs():
    layer = layers.MaxNumBoundingBoxes(4, bounding_box_format="xyxy")
    out = layer({"images": torch.zeros(8, 8, 3), "bounding_boxes": {"boxes": torch.ones(2, 4),
                                                                    "labels": torch.tensor([1, 2])}})
    assert out["bounding_boxes"]["boxes"].shape == (4, 4)
    assert out["bounding_boxes"]["labels"].tolist() == [1, 2, -1, -1]
    ragged = {"boxes": [np.ones((1, 4)), np.ones((6, 4))], "labels": [np.array([3]), np.arange(6)]}
    out = layer({"images": torch.zeros(2, 8, 8, 3), "bounding_boxes": ragged})
    assert out["bounding_boxes"]["boxes"].shape == (2, 4, 4)
    assert out["bounding_boxes"]["labels"].tolist() == [[3, -1, -1, -1], [0, 1, 2, 3]]


def test_errors_and_shapes():
    layer = layers.MaxNumBoundingBoxes(3)
    data = {"images": torch.zeros(1, 4, 4, 3), "bounding_boxes": {"boxes": torch.ones(1, 1, 4),
                                                                  "labels": torch.ones(1, 1)}}
    with pytest.raises(ValueError, match="bounding_box_format"):
        layer(data)
    with pytest.raises(KeyError, match="unsupported keys"):
        layers.MaxNumBoundingBoxes(3, bounding_box_format="xyxy")(
            {"images": data["images"], "bounding_boxes": {**data["bounding_boxes"], "scores": torch.ones(1, 1)}})
    images = torch.rand(2, 4, 4, 3)
    assert torch.equal(layer(images), images)
    shape = layer.compute_output_shape({"images": (2, 4, 4, 3),
                                        "bounding_boxes": {"boxes": (2, 7, 4), "labels": (2, 7)}})
    assert shape["bounding_boxes"] == {"boxes": (2, 3, 4), "labels": (2, 3)}
