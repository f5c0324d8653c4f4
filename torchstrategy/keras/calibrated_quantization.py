"""keras.quantizers.GPTQConfig / AWQConfig: Keras 3.15's calibration-based weight quantization configs.
Their calibration passes are not implemented here; constructing either says so and what to use instead."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras.quantizers import QuantizationConfig


def _not_implemented(name: str, mode: str) -> NotImplementedError:
    return NotImplementedError(
        f"keras.quantizers.{name}: {mode.upper()} quantization runs a calibration pass over a dataset and a "
        f"tokenizer (model.quantize('{mode}', config=...)), which torchstrategy does not implement. Quantize "
        "weights without calibration through keras.quantizers.AbsMaxQuantizer / abs_max_quantize (int8) or "
        "abs_max_quantize_grouped_with_zero_point (int4), or run GPTQ/AWQ under real Keras.")


class GPTQConfig(QuantizationConfig):
    """Keras's GPTQ config (Hessian-guided 4-bit weight quantization); not implemented: constructing it
    raises NotImplementedError."""

    def __init__(self, dataset: Any, tokenizer: Any, *, weight_bits: int = 4, num_samples: int = 128,
                 per_channel: bool = True, sequence_length: int = 512, hessian_damping: float = 0.01,
                 group_size: int = 128, symmetric: bool = False, activation_order: bool = False,
                 quantization_layer_structure: Optional[dict] = None) -> None:
        raise _not_implemented("GPTQConfig", "gptq")


class AWQConfig(QuantizationConfig):
    """Keras's AWQ config (activation-aware 4-bit weight quantization); not implemented: constructing it
    raises NotImplementedError."""

    def __init__(self, dataset: Any, tokenizer: Any, *, weight_bits: int = 4, num_samples: int = 128,
                 sequence_length: int = 512, group_size: int = 128, num_grid_points: int = 20,
                 quantization_layer_structure: Optional[dict] = None) -> None:
        raise _not_implemented("AWQConfig", "awq")
