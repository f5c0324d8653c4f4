"""`keras.applications.convnext`: ConvNeXt Tiny/Small/Base/Large/XLarge with Keras's layer names, and
the `LayerScale` / `StochasticDepth` layers they use; `preprocess_input` passes input through."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils

MODEL_CONFIGS = {
    "tiny": {"depths": [3, 3, 9, 3], "projection_dims": [96, 192, 384, 768], "default_size": 224},
    "small": {"depths": [3, 3, 27, 3], "projection_dims": [96, 192, 384, 768], "default_size": 224},
    "base": {"depths": [3, 3, 27, 3], "projection_dims": [128, 256, 512, 1024], "default_size": 224},
    "large": {"depths": [3, 3, 27, 3], "projection_dims": [192, 384, 768, 1536], "default_size": 224},
    "xlarge": {"depths": [3, 3, 27, 3], "projection_dims": [256, 512, 1024, 2048], "default_size": 224},
}


class StochasticDepth(layers.Layer):
    """Drops whole residual branches per sample with probability `drop_path_rate` while training."""

    def __init__(self, drop_path_rate: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.drop_path_rate = drop_path_rate

    def call(self, x: torch.Tensor, training: Optional[bool] = None) -> torch.Tensor:
        if not training:
            return x
        keep = 1.0 - self.drop_path_rate
        mask = torch.floor(keep + torch.rand((x.shape[0],) + (1,) * (x.ndim - 1), dtype=x.dtype, device=x.device))
        return x / keep * mask

    def get_config(self) -> dict:
        return dict(super().get_config(), drop_path_rate=self.drop_path_rate)


class LayerScale(layers.Layer):
    """Multiplies the input by a learned per-channel `gamma` (initialised to `init_values`)."""

    def __init__(self, init_values: float, projection_dim: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.init_values = init_values
        self.projection_dim = projection_dim

    def build(self, input_shape: Any) -> None:
        from torchstrategy.keras import initializers

        self.gamma = self.add_weight("gamma", (self.projection_dim,), initializer=initializers.Constant(self.init_values))

    def call(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gamma

    def get_config(self) -> dict:
        return dict(super().get_config(), init_values=self.init_values, projection_dim=self.projection_dim)


def _block(inputs: Any, projection_dim: int, drop_path_rate: float, layer_scale_init_value: Optional[float],
           name: str) -> Any:
    x = layers.Conv2D(projection_dim, kernel_size=7, padding="same", groups=projection_dim,
                      name=f"{name}_depthwise_conv")(inputs)
    x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_layernorm")(x)
    x = layers.Dense(4 * projection_dim, name=f"{name}_pointwise_conv_1")(x)
    x = layers.Activation("gelu", name=f"{name}_gelu")(x)
    x = layers.Dense(projection_dim, name=f"{name}_pointwise_conv_2")(x)
    if layer_scale_init_value is not None:
        x = LayerScale(layer_scale_init_value, projection_dim, name=f"{name}_layer_scale")(x)
    if drop_path_rate:
        last = StochasticDepth(drop_path_rate, name=f"{name}_stochastic_depth")
    else:
        last = layers.Activation("linear", name=f"{name}_identity")
    return inputs + last(x)


def _convnext(size: str, *, include_top: bool, include_preprocessing: bool, weights: Any, input_tensor: Any,
              input_shape: Any, pooling: Optional[str], classes: int, classifier_activation: Any, name: str,
              drop_path_rate: float = 0.0, layer_scale_init_value: float = 1e-6) -> Any:
    from torchstrategy.keras.models import Sequential

    config = MODEL_CONFIGS[size]
    depths, dims = config["depths"], config["projection_dims"]
    _common.check_weights(weights, include_top, classes)
    shape = _common.input_shape_for(input_shape, config["default_size"], 32, include_top, weights)
    image = _common.image_input(input_tensor, shape)
    x = image
    if include_preprocessing and shape[2] == 3:
        x = layers.Normalization(mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                 variance=[(0.229 * 255) ** 2, (0.224 * 255) ** 2, (0.225 * 255) ** 2],
                                 name=f"{name}_prestem_normalization")(x)
    downsample = [Sequential([layers.Conv2D(dims[0], kernel_size=4, strides=4, name=f"{name}_stem_conv"),
                              layers.LayerNormalization(epsilon=1e-6, name=f"{name}_stem_layernorm")],
                             name=f"{name}_stem")]
    for i in range(3):
        downsample.append(Sequential([layers.LayerNormalization(epsilon=1e-6, name=f"{name}_downsampling_layernorm_{i}"),
                                      layers.Conv2D(dims[i + 1], kernel_size=2, strides=2,
                                                    name=f"{name}_downsampling_conv_{i}")],
                                     name=f"{name}_downsampling_block_{i}"))
    rates = [float(r) for r in np.linspace(0.0, drop_path_rate, sum(depths))]
    cur = 0
    for i in range(4):
        x = downsample[i](x)
        for j in range(depths[i]):
            x = _block(x, dims[i], rates[cur + j], layer_scale_init_value, f"{name}_stage_{i}_block_{j}")
        cur += depths[i]
    if include_top:
        _common.check_activation(classifier_activation, weights)
        x = layers.GlobalAveragePooling2D(name=f"{name}_head_gap")(x)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_head_layernorm")(x)
        x = layers.Dense(classes, activation=classifier_activation, name=f"{name}_head_dense")(x)
    else:
        x = _common.pool(x, pooling)
        x = layers.LayerNormalization(epsilon=1e-6)(x)
    file_name = name + (".h5" if include_top else "_notop.h5")
    return _common.finish(_common.model_inputs(input_tensor, image), x, name, weights, file_name,
                          _common.BASE_URL + "convnext/" + file_name)


def _make(size: str, arch: str) -> Any:
    default_name = f"convnext_{size}"

    def ConvNeXt(include_top: bool = True, include_preprocessing: bool = True, weights: Any = "imagenet",
                 input_tensor: Any = None, input_shape: Any = None, pooling: Optional[str] = None, classes: int = 1000,
                 classifier_activation: Any = "softmax", name: str = default_name) -> Any:
        return _convnext(size, include_top=include_top, include_preprocessing=include_preprocessing, weights=weights,
                         input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                         classifier_activation=classifier_activation, name=name)

    ConvNeXt.__name__ = ConvNeXt.__qualname__ = arch
    ConvNeXt.__doc__ = (f"{arch} (Keras's layer names; `weights='imagenet'` reads Keras's file "
                        f"'{default_name}.h5' / '{default_name}_notop.h5' from ~/.keras/models).")
    return ConvNeXt


ConvNeXtTiny = _make("tiny", "ConvNeXtTiny")
ConvNeXtSmall = _make("small", "ConvNeXtSmall")
ConvNeXtBase = _make("base", "ConvNeXtBase")
ConvNeXtLarge = _make("large", "ConvNeXtLarge")
ConvNeXtXLarge = _make("xlarge", "ConvNeXtXLarge")


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """A placeholder kept for API consistency: ConvNeXt normalizes inside the model, so `x` is returned."""
    return x


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
