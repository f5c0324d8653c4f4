"""`tf.nn`'s sampled losses on torch tensors: nce_loss and sampled_softmax_loss score the true classes and a
sample of negatives (log-uniform unless sampled_values are given), corrected by log expected counts as TF does."""
from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy import candidate_sampling
from torchstrategy._tensor_convert import to_tensor
from torchstrategy.nn._embedding import embedding_lookup


def _sampled_logits(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
                    num_true: int, sampled_values: Any, remove_accidental_hits: bool, seed: Optional[int],
                    op: str) -> tuple:
    """(logits [batch, num_true + num_sampled], label weights of the same shape) as TF's _compute_sampled_logits
    builds them with subtract_log_q: the true columns first, each weighted 1 / num_true."""
    x = to_tensor(inputs, op=op)
    if x.dim() != 2:
        raise ValueError(f"{op}: inputs must be [batch_size, dim], got shape {tuple(x.shape)}.")
    true = to_tensor(labels, hint=torch.int64, op=op)
    if true.is_floating_point():
        raise TypeError(f"{op}: labels must be integer class ids, got {true.dtype}.")
    true = true.long().reshape(x.shape[0], -1) if true.dim() < 2 else true.long()
    if true.shape != (x.shape[0], int(num_true)):
        raise ValueError(f"{op}: labels must be [batch_size, num_true] = [{x.shape[0]}, {num_true}], got shape "
                         f"{tuple(true.shape)}.")
    if sampled_values is None:
        sampled_values = candidate_sampling.log_uniform_candidate_sampler(
            true, int(num_true), int(num_sampled), True, int(num_classes), seed=seed)
    sampled, true_count, sampled_count = (to_tensor(v, op=op).detach() for v in sampled_values)
    sampled = sampled.long().to(x.device)
    flat = true.reshape(-1)
    all_ids = torch.cat([flat, sampled])
    all_w = embedding_lookup(weights, all_ids).to(x.dtype)
    all_b = embedding_lookup(biases, all_ids).to(x.dtype)
    n_true = flat.shape[0]
    true_w, sampled_w = all_w[:n_true], all_w[n_true:]
    true_b, sampled_b = all_b[:n_true], all_b[n_true:]
    true_logits = (x.unsqueeze(1) * true_w.reshape(x.shape[0], int(num_true), -1)).sum(-1)
    true_logits = true_logits + true_b.reshape(x.shape[0], int(num_true))
    sampled_logits = x @ sampled_w.T + sampled_b
    if remove_accidental_hits:
        rows, ids, hit_weights = candidate_sampling.compute_accidental_hits(true, sampled, int(num_true))
        mask = torch.zeros_like(sampled_logits)
        mask[rows.long(), ids] = hit_weights.to(mask.dtype)
        sampled_logits = sampled_logits + mask
    true_logits = true_logits - torch.log(true_count.to(x.dtype))
    sampled_logits = sampled_logits - torch.log(sampled_count.to(x.dtype))
    logits = torch.cat([true_logits, sampled_logits], dim=1)
    targets = torch.cat([torch.full_like(true_logits, 1.0 / int(num_true)), torch.zeros_like(sampled_logits)], dim=1)
    return logits, targets


def nce_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
             num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = False,
             name: str = "nce_loss") -> torch.Tensor:
    """Per-example noise-contrastive estimation loss [batch]: logistic losses of the true classes (target
    1 / num_true) and the sampled negatives (target 0), summed per row. `weights` [num_classes, dim] (or a list of
    shards split TF 2's 'div' way), `biases` [num_classes], `labels` [batch, num_true], `inputs` [batch, dim]."""
    logits, targets = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                      sampled_values, remove_accidental_hits, None, "tf.nn.nce_loss")
    return F.binary_cross_entropy_with_logits(logits, targets, reduction="none").sum(dim=1)


def sampled_softmax_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
                         num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = True,
                         seed: Optional[int] = None, name: str = "sampled_softmax_loss") -> torch.Tensor:
    """Per-example softmax cross entropy [batch] over the true classes and a sample of negatives (arguments as
    `nce_loss`); sampled classes that equal a true class are masked out by default."""
    logits, targets = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                      sampled_values, remove_accidental_hits, seed, "tf.nn.sampled_softmax_loss")
    return -(targets * torch.log_softmax(logits, dim=1)).sum(dim=1)
