"""The legacy backend's CTC functions (K.ctc_batch_cost, K.ctc_decode, K.ctc_label_dense_to_sparse): batch-major
softmax outputs, the blank being the last class, as tf.keras's Keras 2 API."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from torchstrategy._tensor_convert import to_tensor as _tf_tensor
from torchstrategy.keras._legacy_backend.settings import _config
from torchstrategy.sparse_tensor import SparseTensor


def _lengths(value: Any, op: str) -> torch.Tensor:
    return _tf_tensor(value, op=op).to(torch.int64).reshape(-1)


def _log_scores(y_pred: Any, op: str) -> torch.Tensor:
    """log(y_pred + epsilon) of batch-major softmax outputs [batch, time, classes]."""
    scores = _tf_tensor(y_pred, op=op)
    if scores.dim() != 3:
        raise ValueError(f"{op}: y_pred must be [batch, time, num_classes] softmax outputs, got shape "
                         f"{tuple(scores.shape)}.")
    return torch.log(scores.to(torch.float32) + _config().epsilon())


def ctc_label_dense_to_sparse(labels: Any, label_lengths: Any) -> SparseTensor:
    """The first label_lengths[b] labels of each row of dense [batch, max_len] `labels` as a SparseTensor
    (int64 indices and dense shape, values keeping the labels' dtype)."""
    op = "keras.backend.ctc_label_dense_to_sparse"
    dense = _tf_tensor(labels, op=op)
    lengths = _lengths(label_lengths, op)
    if dense.dim() != 2 or lengths.shape[0] != dense.shape[0]:
        raise ValueError(f"{op}: labels must be [batch, max_len] with one length per row; got labels "
                         f"{tuple(dense.shape)} and {lengths.shape[0]} lengths.")
    keep = torch.arange(dense.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
    indices = keep.nonzero().to(torch.int64)
    return SparseTensor(indices, dense[keep], torch.tensor(list(dense.shape), dtype=torch.int64))


def ctc_batch_cost(y_true: Any, y_pred: Any, input_length: Any, label_length: Any) -> torch.Tensor:
    """CTC loss per example, shape [batch, 1]: `y_true` dense labels [batch, max_len], `y_pred` softmax
    outputs [batch, time, classes] (blank = last class), lengths as [batch, 1]."""
    op = "keras.backend.ctc_batch_cost"
    scores = _log_scores(y_pred, op)
    labels = _tf_tensor(y_true, op=op).to(torch.int64)
    blank = scores.shape[-1] - 1
    label_len, input_len = _lengths(label_length, op), _lengths(input_length, op)
    keep = torch.arange(labels.shape[1]).unsqueeze(0) < label_len.unsqueeze(1)
    if bool(((labels == blank) & keep).any()):
        raise ValueError(f"{op}: label {blank} is the blank (the last class of y_pred); labels must be below it.")
    log_probs = F.log_softmax(scores, dim=-1).transpose(0, 1)
    loss = F.ctc_loss(log_probs, labels, input_len, label_len, blank=blank, reduction="none", zero_infinity=False)
    return loss.unsqueeze(1)


def ctc_decode(y_pred: Any, input_length: Any, greedy: bool = True, beam_width: int = 100,
               top_paths: int = 1) -> tuple:
    """([decoded [batch, time] padded with -1], log_prob [batch, 1]) by greedy (best path) decoding of
    softmax outputs [batch, time, classes]: repeats merged, blanks (last class) dropped; log_prob is the
    negative sum of each step's best log-score, as TF reports it."""
    op = "keras.backend.ctc_decode"
    if not greedy:
        raise NotImplementedError(f"{op}(greedy=False): beam-search decoding is not implemented in torchstrategy; "
                                  "use greedy=True (best-path decoding) or decode the softmax outputs with an "
                                  "external CTC beam-search decoder (e.g. torchaudio.models.decoder).")
    from torchstrategy.nn import ctc_greedy_decoder

    scores = _log_scores(y_pred, op)
    batch, steps = scores.shape[0], scores.shape[1]
    (sparse,), log_prob = ctc_greedy_decoder(scores.transpose(0, 1), _lengths(input_length, op))
    dense = torch.full((batch, steps), -1, dtype=torch.int64)
    index = torch.as_tensor(sparse.indices).to(torch.int64)
    if index.numel():
        dense[index[:, 0], index[:, 1]] = torch.as_tensor(sparse.values).to(torch.int64)
    return [dense], log_prob
