"""`tf.nn.ctc_greedy_decoder` on torch tensors: best class per step, repeats merged, blanks dropped, decoded as
a tf.SparseTensor of int64 labels plus each sequence's negative summed best logit."""
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
