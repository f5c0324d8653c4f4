"""`keras.layers`: the Layer base and every built-in layer (core, conv, pooling, normalization,
merging, preprocessing), re-exported under their Keras names."""
from __future__ import annotations

from torchstrategy.keras.layers.base import InputSpec, Layer
from torchstrategy.keras.layers.conv import (
    Conv1D, Conv2D, Conv3D, Convolution1D, Convolution2D, Convolution3D, DepthwiseConv2D, ZeroPadding2D,
)
from torchstrategy.keras.layers.core import (
    ELU, Activation, Dense, Dropout, Embedding, Flatten, Lambda, LeakyReLU, Permute, ReLU, Reshape, Softmax,
)
from torchstrategy.keras.layers.merging import (
    Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add, average, concatenate, dot, maximum,
    minimum, multiply, subtract,
)
from torchstrategy.keras.layers.normalization import BatchNormalization, LayerNormalization
from torchstrategy.keras.layers.pooling import (
    AveragePooling1D, AveragePooling2D, AveragePooling3D, AvgPool1D, AvgPool2D, AvgPool3D, GlobalAveragePooling1D,
    GlobalAveragePooling2D, GlobalAveragePooling3D, GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D,
    GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D, GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D,
    MaxPool1D, MaxPool2D, MaxPool3D, MaxPooling1D, MaxPooling2D, MaxPooling3D,
)
from torchstrategy.keras.layers.preprocessing import Normalization, Rescaling, Resizing

# Input / InputLayer belong to the functional API; keras.layers names them too.
from torchstrategy.keras.layers.input_layer import Input, InputLayer

__all__ = [
    "Layer", "InputSpec", "Input", "InputLayer",
    "Dense", "Activation", "Dropout", "Flatten", "Reshape", "Permute", "ReLU", "LeakyReLU", "ELU", "Softmax",
    "Embedding", "Lambda",
    "Conv1D", "Conv2D", "Conv3D", "Convolution1D", "Convolution2D", "Convolution3D", "DepthwiseConv2D",
    "ZeroPadding2D",
    "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D",
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D",
    "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D",
    "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D",
    "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
    "BatchNormalization", "LayerNormalization",
    "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot",
    "add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate", "dot",
    "Rescaling", "Normalization", "Resizing",
]
