"""`tf.nn` on torch tensors, one module per concern (activations, losses, conv, pool, space, norm, dropout,
embedding, ranking, sampled losses); this package re-exports their TF names and the loss-scaling helpers from tape."""
from __future__ import annotations

from torchstrategy._machinery import lazy as _lazy
from torchstrategy.nn import experimental
from torchstrategy.nn._activations import (crelu, elu, gelu, leaky_relu, log_softmax, relu, relu6, selu, sigmoid,
                                           silu, softmax, softplus, softsign, swish, tanh)
from torchstrategy.nn._conv import (atrous_conv2d, atrous_conv2d_transpose, bias_add, conv1d, conv1d_transpose, conv2d, conv2d_transpose,
                                    conv3d, conv3d_transpose, conv_transpose, convolution, depthwise_conv2d,
                                    depthwise_conv2d_backprop_filter, depthwise_conv2d_backprop_input,
                                    separable_conv2d)
from torchstrategy.candidate_sampling import (all_candidate_sampler, compute_accidental_hits,
                                             fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler)
from torchstrategy.nn._ctc_beam import ctc_beam_search_decoder
from torchstrategy.nn._ctc_decode import collapse_repeated, ctc_greedy_decoder, ctc_unique_labels
from torchstrategy.nn._dropout import dropout
from torchstrategy.nn._embedding import embedding_lookup, embedding_lookup_sparse, safe_embedding_lookup_sparse
from torchstrategy.nn._fractional_pool import fractional_avg_pool, fractional_max_pool
from torchstrategy.nn._isotonic import isotonic_regression
from torchstrategy.nn._losses import (ctc_loss, l2_loss, log_poisson_loss, sigmoid_cross_entropy_with_logits,
                                      softmax_cross_entropy_with_logits, sparse_softmax_cross_entropy_with_logits,
                                      weighted_cross_entropy_with_logits)
from torchstrategy.nn._morphology import dilation2d, erosion2d
from torchstrategy.nn._norm import (batch_norm_with_global_normalization, batch_normalization, l2_normalize, local_response_normalization, lrn, moments,
                                    normalize_moments, sufficient_statistics, weighted_moments)
from torchstrategy.nn._pool import (avg_pool, avg_pool1d, avg_pool2d, avg_pool3d, max_pool, max_pool1d, max_pool2d,
                                    max_pool3d, max_pool_with_argmax, pool)
from torchstrategy.math import top_k
from torchstrategy.nn._ranking import approx_max_k, approx_min_k, in_top_k, zero_fraction
from torchstrategy.nn._sampled_losses import nce_loss, sampled_softmax_loss
from torchstrategy.nn._space import depth_to_space, space_to_batch, space_to_depth, with_space_to_batch
from torchstrategy.tape import compute_average_loss, scale_regularization_loss

__all__ = [name for name in dir() if not name.startswith("_") and name != "annotations"]

# TF's RNN cell wrappers are Keras layers (TF 2.21 exports its Keras 2 classes here): resolved on first use
_RNN_CELL_WRAPPERS = {name: f"torchstrategy.keras.layers.rnn_cell_wrappers:{name}"
                      for name in ("RNNCellDropoutWrapper", "RNNCellResidualWrapper", "RNNCellDeviceWrapper")}
__getattr__, _ = _lazy.lazy_namespace(__name__, _RNN_CELL_WRAPPERS)
