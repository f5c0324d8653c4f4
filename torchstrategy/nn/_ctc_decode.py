"""`tf.nn`'s CTC label helpers on torch tensors: ctc_greedy_decoder (best class per step, repeats merged, blanks
dropped, a tf.SparseTensor of int64 labels), collapse_repeated and ctc_unique_labels."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.sparse_tensor import SparseTensor


def ctc_greedy_decoder(inputs: Any, sequence_length: Any, merge_repeated: bool = True,
                       blank_index: Optional[int] = None) -> tuple:
    """([SparseTensor of decoded labels, dense_shape [batch, longest]], neg_sum_logits [batch, 1]) for
    [max_time, batch, classes] logits; the blank is the last class unless blank_index says otherwise."""
    op = "tf.nn.ctc_greedy_decoder"
    x = to_tensor(inputs, op=op)
    if x.dim() != 3:
        raise ValueError(f"{op}: inputs must be [max_time, batch, num_classes], got shape {tuple(x.shape)}.")
    steps, batch, classes = x.shape
    blank = classes - 1 if blank_index is None else int(blank_index)
    if blank < 0:
        blank += classes
    if not 0 <= blank < classes:
        raise ValueError(f"{op}: blank_index {blank_index} is out of range for {classes} classes.")
    lengths = to_tensor(sequence_length, op=op).long().reshape(-1)
    if lengths.shape[0] != batch or (lengths < 0).any() or (lengths > steps).any():
        raise ValueError(f"{op}: sequence_length must hold {batch} values in [0, {steps}], got "
                         f"{lengths.tolist()}.")
    best, classes_at = x.max(dim=-1)
    valid = torch.arange(steps, device=x.device).unsqueeze(1) < lengths.unsqueeze(0)
    neg_sum = -(best * valid.to(best.dtype)).sum(dim=0, keepdim=True).T
    indices, values, longest = [], [], 0
    for b in range(batch):
        labels = classes_at[: int(lengths[b]), b].tolist()
        decoded, previous = [], None
        for label in labels:
            if label != blank and not (merge_repeated and label == previous):
                decoded.append(label)
            previous = label
        indices += [[b, i] for i in range(len(decoded))]
        values += decoded
        longest = max(longest, len(decoded))
    sparse = SparseTensor(torch.tensor(indices, dtype=torch.int64).reshape(-1, 2),
                          torch.tensor(values, dtype=torch.int64), torch.tensor([batch, longest], dtype=torch.int64))
    return [sparse], neg_sum


def collapse_repeated(labels: Any, seq_length: Any, name: Optional[str] = None) -> tuple:
    """(labels with runs of one value merged, zero-padded to the longest result; the new lengths) for
    [batch, max_len] labels whose rows are valid up to seq_length."""
    op = "tf.nn.collapse_repeated"
    x = to_tensor(labels, op=op)
    lengths = to_tensor(seq_length, op=op)
    if x.dim() != 2 or lengths.reshape(-1).shape[0] != x.shape[0]:
        raise ValueError(f"{op}: labels must be [batch, max_len] and seq_length [batch], got shapes "
                         f"{tuple(x.shape)} and {tuple(lengths.shape)}.")
    steps = torch.arange(x.shape[1], device=x.device)
    valid = steps.unsqueeze(0) < lengths.reshape(-1, 1).long()
    starts = torch.ones_like(valid)
    starts[:, 1:] = x[:, 1:] != x[:, :-1]
    keep = starts & valid
    new_lengths = keep.sum(dim=1)
    width = int(new_lengths.max()) if new_lengths.numel() else 0
    out = torch.zeros((x.shape[0], width), dtype=x.dtype, device=x.device)
    slots = torch.cumsum(keep.long(), dim=1) - 1
    rows = torch.arange(x.shape[0], device=x.device).unsqueeze(1).expand_as(keep)
    out[rows[keep], slots[keep]] = x[keep]
    return out, new_lengths.to(lengths.dtype)


def ctc_unique_labels(labels: Any, name: Optional[str] = None) -> tuple:
    """Per row of [batch, max_len] labels: (its distinct values in first-seen order, zero-padded, as int64;
    each label's position among them, as int32)."""
    x = to_tensor(labels, op="tf.nn.ctc_unique_labels")
    if x.dim() != 2:
        raise ValueError(f"tf.nn.ctc_unique_labels: labels must be [batch, max_len], got shape {tuple(x.shape)}.")
    unique = torch.zeros(x.shape, dtype=torch.int64)
    index = torch.zeros(x.shape, dtype=torch.int32)
    for b, row in enumerate(x.tolist()):
        seen: dict = {}
        for i, label in enumerate(row):
            position = seen.setdefault(label, len(seen))
            index[b, i] = position
        unique[b, :len(seen)] = torch.tensor(list(seen), dtype=torch.int64)
    return unique.to(x.device), index.to(x.device)
