"""TF's candidate samplers (uniform, log-uniform, learned and fixed unigram, all) and compute_accidental_hits on
torch tensors, shared by tf.random and tf.nn (whose sampled losses draw their negatives here)."""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Optional

import numpy as np
import torch

from torchstrategy import _context
from torchstrategy._tensor_convert import to_tensor
from torchstrategy.errors import InvalidArgumentError

_FLOAT_MAX = float(np.finfo(np.float32).max)


class SampledValues(NamedTuple):
    """What every candidate sampler returns, as TF names the three tensors."""

    sampled_candidates: torch.Tensor
    true_expected_count: torch.Tensor
    sampled_expected_count: torch.Tensor


def _true_classes(true_classes: Any, num_true: int, op: str) -> torch.Tensor:
    classes = to_tensor(true_classes, hint=torch.int64, op=op)
    if classes.is_floating_point() or classes.dtype == torch.bool:
        raise TypeError(f"{op}: true_classes must hold int64 class ids, got {classes.dtype}.")
    if classes.dim() != 2 or classes.shape[1] != int(num_true):
        raise ValueError(f"{op}: true_classes must be [batch_size, num_true] with num_true={num_true}, got shape "
                         f"{tuple(classes.shape)}.")
    return classes.long()


def _generator(seed: Optional[int]) -> Optional[torch.Generator]:
    return None if seed is None else torch.Generator().manual_seed(int(seed) % (2**63))


def _expected(prob: torch.Tensor, num_sampled: int, num_tries: int) -> torch.Tensor:
    """TF's approximation of how often a class with probability `prob` shows up in the sampled batch: p * n when
    every draw was kept, else 1 - (1 - p) ** num_tries (all float32, as TF computes it)."""
    prob = prob.to(torch.float32)
    if num_tries == num_sampled:
        return prob * num_sampled
    return -torch.expm1(num_tries * torch.log1p(-prob))


def _sample(draw: Callable[[int], torch.Tensor], num_sampled: int, unique: bool, range_max: int,
            op: str) -> tuple:
    """(sampled int64 ids, number of draws it took): `draw(n)` gives n independent ids; with `unique` repeats are
    rejected and drawing goes on until `num_sampled` distinct ids are in, counting every draw as TF does."""
    if not unique:
        return draw(num_sampled).long(), num_sampled
    if num_sampled > range_max:
        raise ValueError(f"{op}: unique=True needs num_sampled ({num_sampled}) <= range_max ({range_max}).")
    picked: list = []
    seen: set = set()
    tries = 0
    while len(picked) < num_sampled:
        for value in draw(max(2 * num_sampled, 64)).tolist():
            tries += 1
            if value not in seen:
                seen.add(value)
                picked.append(value)
                if len(picked) == num_sampled:
                    break
    return torch.tensor(picked, dtype=torch.int64), tries


def _in_range(classes: torch.Tensor, range_max: int, op: str) -> None:
    if classes.numel() and (int(classes.min()) < 0 or int(classes.max()) >= range_max):
        raise InvalidArgumentError(None, None, f"{op}: true_classes must lie in [0, {range_max}), got values from "
                                   f"{int(classes.min())} to {int(classes.max())}.")


def _run(true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int,
         draw: Callable[[int], torch.Tensor], probability: Callable[[torch.Tensor], torch.Tensor],
         op: str) -> SampledValues:
    classes = _true_classes(true_classes, num_true, op)
    num_sampled, range_max = int(num_sampled), int(range_max)
    _in_range(classes, range_max, op)
    if num_sampled < 1 or range_max < 1:
        raise ValueError(f"{op}: num_sampled and range_max must be positive, got {num_sampled} and {range_max}.")
    sampled, tries = _sample(draw, num_sampled, bool(unique), range_max, op)
    true_count = _expected(probability(classes), num_sampled, tries)
    sampled_count = _expected(probability(sampled), num_sampled, tries)
    return SampledValues(sampled.to(classes.device), true_count.to(classes.device), sampled_count.to(classes.device))


def uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int,
                              seed: Optional[int] = None, name: Optional[str] = None) -> SampledValues:
    """Classes drawn uniformly from [0, range_max) (distinct ones when `unique`), with the expected counts TF
    reports for the true and the sampled classes."""
    gen = _generator(seed)
    range_max = int(range_max)
    return _run(true_classes, num_true, num_sampled, unique, range_max,
                lambda n: torch.randint(0, range_max, (n,), generator=gen),
                lambda ids: torch.full(ids.shape, 1.0 / range_max, dtype=torch.float64),
                "tf.random.uniform_candidate_sampler")


def log_uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                                  range_max: int, seed: Optional[int] = None,
                                  name: Optional[str] = None) -> SampledValues:
    """Classes drawn from Zipf's approximation P(k) = log((k + 2) / (k + 1)) / log(range_max + 1) (class ids
    sorted by decreasing frequency), with TF's expected counts."""
    gen = _generator(seed)
    range_max = int(range_max)
    log_range = math.log1p(range_max)

    def draw(n: int) -> torch.Tensor:
        unit = torch.rand(n, generator=gen, dtype=torch.float64)
        return (torch.exp(unit * log_range).floor().long() - 1) % range_max

    return _run(true_classes, num_true, num_sampled, unique, range_max, draw,
                lambda ids: torch.log((ids.double() + 2.0) / (ids.double() + 1.0)) / log_range,
                "tf.random.log_uniform_candidate_sampler")


def _weighted(weights: torch.Tensor, range_max: int, seed: Optional[int], true_classes: Any, num_true: int,
              num_sampled: int, unique: bool, op: str) -> SampledValues:
    gen = _generator(seed)
    total = weights.sum()

    def probability(ids: torch.Tensor) -> torch.Tensor:
        inside = (ids >= 0) & (ids < weights.shape[0])
        picked = weights[ids.clamp(0, weights.shape[0] - 1)]
        return torch.where(inside, picked / total, torch.zeros_like(picked))

    return _run(true_classes, num_true, num_sampled, unique, range_max,
                lambda n: torch.multinomial(weights, n, replacement=True, generator=gen), probability, op)


def learned_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                                      range_max: int, seed: Optional[int] = None,
                                      name: Optional[str] = None) -> SampledValues:
    """Classes drawn in proportion to how often they were seen as true classes (every class starts at 1). As in
    TF's eager mode, calls with the same num_true, num_sampled, unique, range_max and seed share one table of
    counts, which each call updates with its true classes after sampling."""
    op = "tf.random.learned_unigram_candidate_sampler"
    range_max = int(range_max)
    if not 0 < range_max < 2**31 - 1:
        raise ValueError(f"{op}: range_max must lie in [1, 2**31 - 1), got {range_max}.")
    key = (int(num_true), int(num_sampled), bool(unique), range_max, seed)
    weights = torch.tensor(_context.learned_unigram_counts(key, range_max), dtype=torch.float64)
    values = _weighted(weights, range_max, seed, true_classes, num_true, num_sampled, unique, op)
    _context.add_learned_unigram_counts(key, range_max, _true_classes(true_classes, num_true, op).reshape(-1).tolist())
    return values


def fixed_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                                    range_max: int, vocab_file: str = "", distortion: float = 1.0,
                                    num_reserved_ids: int = 0, num_shards: int = 1, shard: int = 0,
                                    unigrams: Any = (), seed: Optional[int] = None,
                                    name: Optional[str] = None) -> SampledValues:
    """Classes drawn in proportion to given unigram counts raised to `distortion` (from `unigrams` or the last
    comma-separated field of each line of `vocab_file`), after `num_reserved_ids` ids of weight 0; with
    `num_shards` > 1 only the ids i with i % num_shards == shard are kept, as TF does."""
    op = "tf.random.fixed_unigram_candidate_sampler"
    num_shards, shard, range_max = int(num_shards), int(shard), int(range_max)
    if num_shards < 1 or not 0 <= shard < num_shards:
        raise ValueError(f"{op}: need num_shards >= 1 and 0 <= shard < num_shards, got {num_shards} and {shard}.")
    if bool(vocab_file) == bool(len(unigrams)):
        raise ValueError(f"{op}: give exactly one of vocab_file and unigrams.")
    weights = [0.0 for word in range(int(num_reserved_ids)) if word % num_shards == shard]
    counts = _vocab_counts(vocab_file, op) if vocab_file else [float(w) for w in unigrams]
    # TF numbers the unigram entries from the count of reserved weights kept in this shard.
    word = len(weights)
    for count in counts:
        if word % num_shards == shard:
            weights.append(float(np.float32(count) ** np.float32(distortion)))
        word += 1
    if len(weights) != range_max:
        raise ValueError(f"{op}: range_max is {range_max} but the reserved ids and unigrams give {len(weights)} "
                         "weights in this shard; they must be equal.")
    table = torch.tensor(weights, dtype=torch.float64)
    if not bool((table >= 0).all()) or float(table.sum()) <= 0:
        raise ValueError(f"{op}: unigram weights must be non-negative with a positive sum.")
    return _weighted(table, range_max, seed, true_classes, num_true, num_sampled, unique, op)


def _vocab_counts(path: str, op: str) -> list:
    counts = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if not line:
                continue
            try:
                counts.append(float(line.split(",")[-1]))
            except ValueError:
                raise ValueError(f"{op}: wrong vocabulary format at line {line!r} of {path}: the last "
                                 "comma-separated field must be a number.") from None
    return counts


def all_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                          seed: Optional[int] = None, name: Optional[str] = None) -> SampledValues:
    """Every class of [0, num_sampled) once, each with expected count 1 (for testing sampled losses)."""
    op = "tf.random.all_candidate_sampler"
    classes = _true_classes(true_classes, num_true, op)
    n = int(num_sampled)
    _in_range(classes, n, op)
    return SampledValues(torch.arange(n, dtype=torch.int64, device=classes.device),
                         torch.ones(classes.shape, dtype=torch.float32, device=classes.device),
                         torch.ones(n, dtype=torch.float32, device=classes.device))


def compute_accidental_hits(true_classes: Any, sampled_candidates: Any, num_true: int, seed: Optional[int] = None,
                            name: Optional[str] = None) -> tuple:
    """(indices int32, ids int64, weights float32): one entry per true class of row `indices` that also appears
    among the sampled candidates (at position `ids`, its last position when repeated), weighted -FLT_MAX so that
    adding it to the sampled logits masks the hit."""
    op = "tf.nn.compute_accidental_hits"
    classes = _true_classes(true_classes, num_true, op)
    sampled = to_tensor(sampled_candidates, hint=torch.int64, op=op)
    if sampled.dim() != 1:
        raise ValueError(f"{op}: sampled_candidates must be 1-D, got shape {tuple(sampled.shape)}.")
    position = {value: i for i, value in enumerate(sampled.tolist())}
    rows, ids = [], []
    for row, labels in enumerate(classes.tolist()):
        for label in labels:
            if label in position:
                rows.append(row)
                ids.append(position[label])
    device = classes.device
    return (torch.tensor(rows, dtype=torch.int32, device=device), torch.tensor(ids, dtype=torch.int64, device=device),
            torch.full((len(rows),), -_FLOAT_MAX, dtype=torch.float32, device=device))
