"""`tf.quantization`: fake quantisation (with gradients), quantize/dequantize, quantize_and_dequantize and
quantized_concat with TF 2.21's numbers. tf.quantization.experimental (SavedModel graph quantisation) is not here."""
from __future__ import annotations

from torchstrategy.quantization._fake_quant import (  # noqa: F401
    FakeQuantWithMinMaxVarsGradient, FakeQuantWithMinMaxVarsPerChannelGradient, fake_quant_with_min_max_args,
    fake_quant_with_min_max_args_gradient, fake_quant_with_min_max_vars, fake_quant_with_min_max_vars_gradient,
    fake_quant_with_min_max_vars_per_channel, fake_quant_with_min_max_vars_per_channel_gradient,
)
from torchstrategy.quantization._quantize import (  # noqa: F401
    QuantizedConcat, QuantizeV2, dequantize, quantize, quantize_and_dequantize, quantize_and_dequantize_v2,
    quantized_concat,
)

__all__ = ["fake_quant_with_min_max_args", "fake_quant_with_min_max_args_gradient", "fake_quant_with_min_max_vars",
           "fake_quant_with_min_max_vars_gradient", "fake_quant_with_min_max_vars_per_channel",
           "fake_quant_with_min_max_vars_per_channel_gradient", "quantize", "dequantize", "quantize_and_dequantize",
           "quantize_and_dequantize_v2", "quantized_concat"]
