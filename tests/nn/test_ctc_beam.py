"""tf.nn.ctc_beam_search_decoder against TF 2.21 numbers (tests/nn/nn2_reference.json): decoded paths and scores
for narrow and wide beams, several top paths and per-example lengths."""
from __future__ import annotations

import os

import pytest
import torch

import torchstrategy as tf
from tests._reference_arrays import Reference
from tests.nn._reference import arr

REF = Reference(os.path.join(os.path.dirname(__file__), "nn2_reference.json"))
LOGITS = arr(6, 2, 5, offset=0.4) * 2


@pytest.mark.parametrize("width,top", [(3, 2), (10, 3), (1, 1)])
def test_beam_search_matches_tf(width, top):
    decoded, probs = tf.nn.ctc_beam_search_decoder(LOGITS, [6, 4], beam_width=width, top_paths=top)
    REF.close(probs, f"beam_{width}_probs", atol=1e-4)
    assert len(decoded) == top
    for p, sparse in enumerate(decoded):
        assert isinstance(sparse, tf.SparseTensor) and sparse.values.dtype == torch.int64
        REF.close(sparse.indices, f"beam_{width}_{p}_indices")
        REF.close(sparse.values, f"beam_{width}_{p}_values")
        REF.close(sparse.dense_shape, f"beam_{width}_{p}_shape")


def test_bad_arguments_are_explained():
    with pytest.raises(ValueError, match="top_paths"):
        tf.nn.ctc_beam_search_decoder(LOGITS, [6, 4], beam_width=2, top_paths=3)
    with pytest.raises(ValueError, match="sequence_length"):
        tf.nn.ctc_beam_search_decoder(LOGITS, [7, 4])
    with pytest.raises(ValueError, match="fewer than top_paths"):
        tf.nn.ctc_beam_search_decoder(LOGITS, [0, 4], beam_width=4, top_paths=2)
