"""`keras.layers`: the Layer base and every built-in layer (core, conv, transposed conv, pooling,
normalization, merging, preprocessing, recurrent, attention), re-exported under their Keras names."""
from __future__ import annotations

from torchstrategy.keras.layers.attention import MultiHeadAttention
from torchstrategy.keras.layers.base import InputSpec, Layer
from torchstrategy.keras.layers.conv import (
    Conv1D, Conv2D, Conv3D, Convolution1D, Convolution2D, Convolution3D, ZeroPadding2D,
)
from torchstrategy.keras.layers.conv_transpose import (
    Conv1DTranspose, Conv2DTranspose, Conv3DTranspose, Convolution2DTranspose, Convolution3DTranspose, Cropping1D,
    Cropping2D, UpSampling1D, UpSampling2D,
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
from torchstrategy.keras.layers.preprocessing_image import (
    CenterCrop, RandomBrightness, RandomContrast, RandomCrop, RandomFlip, RandomRotation, RandomTranslation, RandomZoom,
)
from torchstrategy.keras.layers.preprocessing_text import IntegerLookup, StringLookup, TextVectorization
from torchstrategy.keras.layers.recurrent import GRU, LSTM, Bidirectional, Masking, SimpleRNN, TimeDistributed
from torchstrategy.keras.layers.recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell

from torchstrategy.keras.layers.core import PReLU
from torchstrategy.keras.layers.legacy_layers import RandomHeight, RandomWidth, ThresholdedReLU
from torchstrategy.keras.layers.noise import (
    ActivityRegularization, AlphaDropout, GaussianDropout, GaussianNoise, SpatialDropout1D, SpatialDropout2D,
    SpatialDropout3D,
)
from torchstrategy.keras.layers.normalization import GroupNormalization, RMSNormalization, UnitNormalization
from torchstrategy.keras.layers.reshaping import (
    Cropping3D, Identity, RepeatVector, UpSampling3D, ZeroPadding1D, ZeroPadding3D,
)
from torchstrategy.keras.layers.score_attention import AdditiveAttention, Attention
from torchstrategy.keras.layers.einsum_dense import EinsumDense
from torchstrategy.keras.layers.rnn import RNN, StackedRNNCells
from torchstrategy.keras.layers.conv_lstm import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D
from torchstrategy.keras.layers.categorical import CategoryEncoding, Discretization
from torchstrategy.keras.layers.hashing import HashedCrossing, Hashing
from torchstrategy.keras.layers.conv_depthwise import (
    DepthwiseConv1D, DepthwiseConv2D, SeparableConv1D, SeparableConv2D, SeparableConvolution1D, SeparableConvolution2D,
)
from torchstrategy.keras.layers.conv_transpose import Conv1DTranspose as Convolution1DTranspose
from torchstrategy.keras.layers.adaptive_pooling import (
    AdaptiveAveragePooling1D, AdaptiveAveragePooling2D, AdaptiveAveragePooling3D, AdaptiveMaxPooling1D,
    AdaptiveMaxPooling2D, AdaptiveMaxPooling3D,
)
from torchstrategy.keras.layers.wrappers import (
    FlaxLayer, JaxLayer, SpectralNormalization, TorchModuleWrapper, Wrapper,
)
from torchstrategy.keras.layers.serialization import deserialize, serialize
from torchstrategy.keras.layers.preprocessing_color import (
    AutoContrast, RandomColorDegeneration, RandomGrayscale, RandomInvert, RandomPosterization, RandomSharpness,
    Solarization,
)
from torchstrategy.keras.layers.reversible_embedding import ReversibleEmbedding
from torchstrategy.keras.layers.pipeline import Pipeline
from torchstrategy.keras.layers.grouped_query_attention import GroupQueryAttention
from torchstrategy.keras.layers.preprocessing_hsv import RandomHue, RandomSaturation
from torchstrategy.keras.layers.preprocessing_mixing import CutMix, MixUp
from torchstrategy.keras.layers.preprocessing_jitter import RandomColorJitter
from torchstrategy.keras.layers.preprocessing_color import Equalization, RandomGaussianBlur
from torchstrategy.keras.layers.preprocessing_spectrogram import MelSpectrogram, STFTSpectrogram
from torchstrategy.keras.layers.preprocessing_erasing import RandomErasing
from torchstrategy.keras.layers.preprocessing_warp import RandomElasticTransform, RandomPerspective, RandomShear
from torchstrategy.keras.layers.preprocessing_policies import AugMix, RandAugment
from torchstrategy.keras.layers.preprocessing_clahe import ContrastLimitedAdaptiveHistogramEqualization
from torchstrategy.keras.layers.preprocessing_boxes import MaxNumBoundingBoxes

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
    "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose", "Convolution2DTranspose", "Convolution3DTranspose",
    "SeparableConv2D", "SeparableConvolution2D", "UpSampling1D", "UpSampling2D", "Cropping1D", "Cropping2D",
    "MultiHeadAttention",
    "StringLookup", "IntegerLookup", "TextVectorization", "CenterCrop", "RandomCrop", "RandomFlip", "RandomRotation",
    "RandomZoom", "RandomTranslation", "RandomContrast", "RandomBrightness",
    "SimpleRNN", "LSTM", "GRU", "SimpleRNNCell", "LSTMCell", "GRUCell", "Bidirectional", "TimeDistributed", "Masking",
    "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot",
    "add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate", "dot",
    "Rescaling", "Normalization", "Resizing",
    "TFSMLayer",
    "PReLU", "ActivityRegularization", "AlphaDropout", "GaussianDropout", "GaussianNoise", "SpatialDropout1D",
    "SpatialDropout2D", "SpatialDropout3D", "GroupNormalization", "RMSNormalization", "UnitNormalization",
    "Cropping3D", "Identity", "RepeatVector", "UpSampling3D", "ZeroPadding1D", "ZeroPadding3D",
    "AdditiveAttention", "Attention", "EinsumDense", "RNN", "StackedRNNCells",
    "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D", "CategoryEncoding", "Discretization", "HashedCrossing", "Hashing",
    "DepthwiseConv1D", "SeparableConv1D", "SeparableConvolution1D", "Convolution1DTranspose",
    "AdaptiveAveragePooling1D", "AdaptiveAveragePooling2D", "AdaptiveAveragePooling3D", "AdaptiveMaxPooling1D",
    "AdaptiveMaxPooling2D", "AdaptiveMaxPooling3D",
    "FlaxLayer", "JaxLayer", "SpectralNormalization", "TorchModuleWrapper", "Wrapper", "deserialize", "serialize",
    "AutoContrast", "RandomColorDegeneration", "RandomGrayscale", "RandomInvert", "RandomPosterization",
    "RandomSharpness", "Solarization", "ReversibleEmbedding", "Pipeline", "GroupQueryAttention",
    "RandomHue", "RandomSaturation", "MixUp",
    "AugMix", "ContrastLimitedAdaptiveHistogramEqualization", "CutMix", "Equalization", "MaxNumBoundingBoxes",
    "MelSpectrogram", "RandAugment", "RandomElasticTransform", "RandomErasing", "RandomGaussianBlur",
    "RandomPerspective", "RandomShear", "STFTSpectrogram", "RandomColorJitter",
    "RandomHeight", "RandomWidth", "ThresholdedReLU",
]


def __getattr__(name: str):
    # TFSMLayer loads lazily: keras/export.py imports this package (its Layer base)
    if name == "TFSMLayer":
        from torchstrategy.keras.export import TFSMLayer

        return TFSMLayer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
