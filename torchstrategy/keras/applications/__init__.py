"""`keras.applications`: Keras's ImageNet architectures, one module per family (Keras's layer names
and weight order), each with `preprocess_input` / `decode_predictions`; models also at this level."""
from __future__ import annotations

from torchstrategy._machinery.lazy import lazy_namespace

_P = "torchstrategy.keras.applications"
_FAMILIES = {
    "convnext": ["ConvNeXtTiny", "ConvNeXtSmall", "ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtXLarge"],
    "densenet": ["DenseNet121", "DenseNet169", "DenseNet201"],
    "efficientnet": [f"EfficientNetB{i}" for i in range(8)],
    "efficientnet_v2": ["EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3",
                        "EfficientNetV2S", "EfficientNetV2M", "EfficientNetV2L"],
    "inception_resnet_v2": ["InceptionResNetV2"],
    "inception_v3": ["InceptionV3"],
    "mobilenet": ["MobileNet"],
    "mobilenet_v2": ["MobileNetV2"],
    "mobilenet_v3": ["MobileNetV3Small", "MobileNetV3Large"],
    "nasnet": ["NASNetMobile", "NASNetLarge"],
    "resnet": ["ResNet50", "ResNet101", "ResNet152"],
    "resnet_v2": ["ResNet50V2", "ResNet101V2", "ResNet152V2"],
    "vgg16": ["VGG16"],
    "vgg19": ["VGG19"],
    "xception": ["Xception"],
}
_TABLE = {module: f"{_P}.{module}" for module in list(_FAMILIES) + ["imagenet_utils", "resnet50"]}
for _module, _names in _FAMILIES.items():
    _TABLE.update({name: f"{_P}.{_module}:{name}" for name in _names})

__getattr__, __dir__ = lazy_namespace(__name__, _TABLE)
