"""What every `keras.applications` builder shares: argument checks, the input shape and tensor,
the classifier head or pooling, and finishing the model (Keras's weight files, read offline)."""
from __future__ import annotations

import os
import warnings
from typing import Any, Callable, Optional, Sequence

from torchstrategy.cluster import environment
from torchstrategy.keras import layers
from torchstrategy.keras.functional import KerasTensor, source_inputs

BASE_URL = "https://storage.googleapis.com/tensorflow/keras-applications/"


def check_weights(weights: Any, include_top: bool, classes: int, allowed: Sequence[Any] = ("imagenet", None)) -> None:
    """Keras's first checks: `weights` is None, a known name or an existing file; imagenet with the top
    needs classes=1000."""
    if not (weights in allowed or (isinstance(weights, (str, os.PathLike)) and os.path.exists(weights))):
        names = ", ".join(repr(w) for w in allowed)
        raise ValueError(f"The `weights` argument should be one of {names} (None: random initialization; "
                         f"'imagenet': pre-training on ImageNet), or the path to an existing weights file to "
                         f"load. Received: weights={weights!r}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(f"If using `weights='imagenet'` with `include_top=True`, `classes` should be 1000 (the "
                         f"ImageNet classes). Received classes={classes}. For another number of classes, pass "
                         f"include_top=False and add your own head, or weights=None.")


def input_shape_for(input_shape: Optional[Sequence[Optional[int]]], default_size: int, min_size: int,
                    require_flatten: bool, weights: Any) -> tuple:
    """The per-image shape (rows, cols, channels) the model is built for, checked as Keras checks it."""
    shape = None if input_shape is None else tuple(input_shape)
    if weights != "imagenet" and shape and len(shape) == 3:
        if shape[-1] not in (1, 3):
            warnings.warn(f"This model usually expects 1 or 3 input channels. However, it was passed an "
                          f"input_shape with {shape[-1]} input channels.", stacklevel=3)
        default_shape = (default_size, default_size, shape[-1])
    else:
        default_shape = (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if shape is not None and shape != default_shape:
            raise ValueError(f"When setting `include_top=True` and loading `imagenet` weights, `input_shape` "
                             f"should be {default_shape}. Received: input_shape={shape}")
        return default_shape
    if shape:
        if len(shape) != 3:
            raise ValueError(f"`input_shape` must be a tuple of three integers (rows, cols, channels); "
                             f"received input_shape={shape}.")
        if shape[-1] != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels for the ImageNet weights; received "
                             f"`input_shape={shape}`.")
        if (shape[0] is not None and shape[0] < min_size) or (shape[1] is not None and shape[1] < min_size):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: input_shape={shape}")
    elif require_flatten:
        shape = default_shape
    else:
        shape = (None, None, 3)
    if require_flatten and None in shape:
        raise ValueError(f"If `include_top` is True, you should specify a static `input_shape`. Received: "
                         f"input_shape={shape}")
    return shape


def image_input(input_tensor: Any, shape: Sequence[Optional[int]]) -> KerasTensor:
    """`input_tensor` when given (a KerasTensor), else a new `Input(shape)`."""
    if input_tensor is None:
        return layers.Input(shape=tuple(shape))
    if not isinstance(input_tensor, KerasTensor):
        raise ValueError(f"`input_tensor` must be a symbolic Keras tensor (from keras.Input or a layer called on "
                         f"one); received {type(input_tensor).__name__}. Pass input_shape= for a new input.")
    return input_tensor


def model_inputs(input_tensor: Any, image: KerasTensor) -> Any:
    """What the model takes: the source inputs of `input_tensor`, else the image input."""
    if input_tensor is None:
        return image
    found = source_inputs(input_tensor)
    return found[0] if len(found) == 1 else found


def check_activation(classifier_activation: Any, weights: Any) -> None:
    """With pretrained weights the head's activation must be None or 'softmax' (Keras's rule)."""
    if weights is None:
        return
    from torchstrategy.keras import activations

    if activations.get(classifier_activation) not in (activations.get("softmax"), activations.get(None)):
        raise ValueError(f"Only `None` and `softmax` activations are allowed for the `classifier_activation` "
                         f"argument when using pretrained weights, with `include_top=True`; Received: "
                         f"classifier_activation={classifier_activation}")


def pool(x: Any, pooling: Optional[str], avg_name: Optional[str] = None, max_name: Optional[str] = None) -> Any:
    """`pooling='avg'|'max'` of a headless model (None: the 4D features)."""
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=avg_name)(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=max_name)(x)
    if pooling is not None:
        raise ValueError(f"`pooling` must be None, 'avg' or 'max'; received pooling={pooling!r}.")
    return x


def cached_file(file_name: str, origin: str) -> str:
    """The path of a Keras file in Keras's cache (`$KERAS_HOME/models` or `~/.keras/models`); no download."""
    for root in (environment.keras_home(), os.path.join("/tmp", ".keras")):
        path = os.path.join(root, "models", file_name)
        if os.path.exists(path):
            return path
    target = os.path.join(environment.keras_home(), "models", file_name)
    raise FileNotFoundError(f"'{file_name}' is not in Keras's cache and this build does not download files. "
                            f"Fetch it from {origin} and put it at {target} (or pass weights=<path to the file>; "
                            f"weights=None builds the model with random weights).")


def finish(inputs: Any, outputs: Any, name: str, weights: Any, file_name: Optional[str] = None,
           origin: Optional[str] = None) -> Any:
    """The functional model, with Keras's ImageNet file (from the cache) or a given weights file loaded."""
    from torchstrategy.keras.models import Functional

    model = Functional(inputs, outputs, name=name)
    if weights == "imagenet":
        if file_name is None:
            raise ValueError(f"There are no ImageNet weights for this configuration of '{name}'.")
        model.load_weights(cached_file(file_name, origin or ""))
    elif weights is not None:
        model.load_weights(os.fspath(weights))
    return model


def correct_pad(x: KerasTensor, kernel_size: Any) -> tuple:
    """((top, bottom), (left, right)) zero padding that makes a strided 'valid' conv act like TF's 'same'."""
    size = x.shape[1:3]
    kernel = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    half = (kernel[0] // 2, kernel[1] // 2)
    return ((half[0] - adjust[0], half[0]), (half[1] - adjust[1], half[1]))


def dense_head(x: Any, classes: int, classifier_activation: Any, weights: Any, pool_name: Optional[str] = "avg_pool") -> Any:
    """Global average pooling then the `predictions` Dense layer: most families' top."""
    x = layers.GlobalAveragePooling2D(name=pool_name)(x)
    check_activation(classifier_activation, weights)
    return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)


def standard(body: Callable[[Any], Any], *, include_top: bool, weights: Any, input_tensor: Any, input_shape: Any,
             pooling: Optional[str], classes: int, classifier_activation: Any, name: str, default_size: int,
             min_size: int, files: tuple, origin_dir: str, head: Optional[Callable[[Any], Any]] = None,
             pool_names: tuple = ("avg_pool", "max_pool")) -> Any:
    """A family's model: checks, input, `body`, then `head` (default: `dense_head`) or pooling, then the
    model with `files` = (with top, without top) file names loaded from Keras's cache for 'imagenet'."""
    check_weights(weights, include_top, classes)
    shape = input_shape_for(input_shape, default_size, min_size, include_top, weights)
    image = image_input(input_tensor, shape)
    x = body(image)
    if include_top:
        x = head(x) if head is not None else dense_head(x, classes, classifier_activation, weights, pool_names[0])
    else:
        x = pool(x, pooling, *pool_names)
    file_name = files[0] if include_top else files[1]
    return finish(model_inputs(input_tensor, image), x, name, weights, file_name,
                  BASE_URL + origin_dir + (file_name or ""))
