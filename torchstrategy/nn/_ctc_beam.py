"""`tf.nn.ctc_beam_search_decoder` on torch tensors: TF's prefix beam search over log-softmax scores (blank =
last class), the same beam bookkeeping and pruning, returning top_paths SparseTensors and their scores."""
from __future__ import annotations

import math
from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.sparse_tensor import SparseTensor

_ZERO = -math.inf  # log(0)


def _log_sum_exp(a: float, b: float) -> float:
    if a == _ZERO:
        return b
    if b == _ZERO:
        return a
    high, low = (a, b) if a > b else (b, a)
    return high + math.log1p(math.exp(low - high))


class _Beam:
    """One prefix in the beam tree: its parent, last label, children by label and (blank, label, total) log
    probabilities at the previous step (`old`) and this one (`new`)."""

    __slots__ = ("parent", "label", "children", "old", "new")

    def __init__(self, parent: Optional["_Beam"], label: int):
        self.parent, self.label, self.children = parent, label, {}
        self.old = [_ZERO, _ZERO, _ZERO]
        self.new = [_ZERO, _ZERO, _ZERO]

    def active(self) -> bool:
        return self.new[2] != _ZERO

    def child(self, label: int) -> "_Beam":
        if label not in self.children:
            self.children[label] = _Beam(self, label)
        return self.children[label]

    def labels(self) -> list:
        out, node = [], self
        while node.parent is not None:
            out.append(node.label)
            node = node.parent
        return out[::-1]


class _Leaves:
    """The current beams, at most `width`; the weakest (by new total) is the one that makes room."""

    def __init__(self, width: int):
        self.width, self.items = width, []

    def push(self, beam: _Beam) -> None:
        if len(self.items) < self.width:
            self.items.append(beam)
            return
        weakest = min(range(len(self.items)), key=lambda i: self.items[i].new[2])
        if beam.new[2] > self.items[weakest].new[2]:
            self.items[weakest] = beam

    def bottom(self) -> _Beam:
        return min(self.items, key=lambda b: b.new[2])

    def extract(self) -> list:
        """The beams, best first; the set is emptied."""
        out = sorted(self.items, key=lambda b: b.new[2], reverse=True)
        self.items = []
        return out


def _step(leaves: _Leaves, row: list, blank: int) -> None:
    branches = leaves.extract()
    for beam in branches:
        beam.old = list(beam.new)
    for beam in branches:
        if beam.parent is not None:
            if beam.parent.active():
                parent = beam.parent
                previous = parent.old[0] if beam.label == parent.label else parent.old[2]
                beam.new[1] = _log_sum_exp(beam.new[1], previous)
            beam.new[1] += row[beam.label]
        beam.new[0] = beam.old[2] + row[blank]
        beam.new[2] = _log_sum_exp(beam.new[0], beam.new[1])
        leaves.push(beam)

    def candidate(total: float) -> bool:
        return total > _ZERO and (len(leaves.items) < leaves.width or total > leaves.bottom().new[2])

    for beam in branches:
        if not candidate(beam.old[2]):
            continue
        for label in range(len(row) - 1):
            child = beam.child(label)
            if child.active():
                continue
            previous = beam.old[0] if label == beam.label else beam.old[2]
            child.new = [_ZERO, row[label] + previous, _ZERO]
            child.new[2] = child.new[1]
            if candidate(child.new[2]):
                if len(leaves.items) == leaves.width:
                    leaves.bottom().new = [_ZERO, _ZERO, _ZERO]
                leaves.push(child)
            else:
                child.old = [_ZERO, _ZERO, _ZERO]
                child.new = [_ZERO, _ZERO, _ZERO]


def _decode_one(rows: list, blank: int, beam_width: int, top_paths: int) -> tuple:
    root = _Beam(None, -1)
    root.new = [0.0, _ZERO, 0.0]
    leaves = _Leaves(beam_width)
    leaves.push(root)
    for row in rows:
        _step(leaves, row, blank)
    best = sorted(leaves.items, key=lambda b: b.new[2], reverse=True)
    if top_paths > len(best):
        raise ValueError(f"tf.nn.ctc_beam_search_decoder: only {len(best)} beams survived, fewer than top_paths="
                         f"{top_paths}; lower top_paths or raise beam_width.")
    chosen = best[:top_paths]
    return [b.labels() for b in chosen], [b.new[2] for b in chosen]


def ctc_beam_search_decoder(inputs: Any, sequence_length: Any, beam_width: int = 100, top_paths: int = 1) -> tuple:
    """(decoded, log_probabilities) for [max_time, batch, num_classes] logits whose last class is the blank:
    `decoded` holds top_paths SparseTensors of int64 labels (dense_shape [batch, longest]), best first, and
    `log_probabilities` [batch, top_paths] their beam log-probabilities (over each step's log-softmax, as TF's
    decoder scores them)."""
    op = "tf.nn.ctc_beam_search_decoder"
    x = to_tensor(inputs, op=op)
    if x.dim() != 3:
        raise ValueError(f"{op}: inputs must be [max_time, batch, num_classes], got shape {tuple(x.shape)}.")
    steps, batch, classes = x.shape
    beam_width, top_paths = int(beam_width), int(top_paths)
    if beam_width < 1 or not 1 <= top_paths <= beam_width:
        raise ValueError(f"{op}: need beam_width >= 1 and 1 <= top_paths <= beam_width, got {beam_width} and "
                         f"{top_paths}.")
    lengths = to_tensor(sequence_length, op=op).long().reshape(-1)
    if lengths.shape[0] != batch or (lengths < 0).any() or (lengths > steps).any():
        raise ValueError(f"{op}: sequence_length must hold {batch} values in [0, {steps}], got {lengths.tolist()}.")
    values = torch.log_softmax(x.detach().to(torch.float64 if x.dtype == torch.float64 else torch.float32), -1).cpu()
    paths: list = [[] for _ in range(top_paths)]
    scores = torch.zeros((batch, top_paths), dtype=values.dtype)
    for b in range(batch):
        rows = values[: int(lengths[b]), b].tolist()
        labels, probs = _decode_one(rows, classes - 1, beam_width, top_paths)
        for p in range(top_paths):
            paths[p].append(labels[p])
            scores[b, p] = probs[p]
    decoded = []
    for per_batch in paths:
        indices = [[b, t] for b, seq in enumerate(per_batch) for t in range(len(seq))]
        flat = [label for seq in per_batch for label in seq]
        longest = max((len(seq) for seq in per_batch), default=0)
        decoded.append(SparseTensor(torch.tensor(indices, dtype=torch.int64).reshape(-1, 2),
                                    torch.tensor(flat, dtype=torch.int64),
                                    torch.tensor([batch, longest], dtype=torch.int64)))
    return decoded, scores.to(x.dtype).to(x.device)
