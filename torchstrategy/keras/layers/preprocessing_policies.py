"""Keras 3's augmentation policies built from the other augmentation layers: RandAugment (num_ops layers
picked at random, applied in turn) and AugMix (random chains of layers, blended by Dirichlet/Beta weights)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.preprocessing_color import (
    AutoContrast, Equalization, RandomColorDegeneration, RandomPosterization, RandomSharpness, Solarization,
)
from torchstrategy.keras.layers.preprocessing_image import RandomBrightness, RandomContrast, RandomRotation, \
    RandomTranslation
from torchstrategy.keras.layers.preprocessing_protocol import AugmentationLayer, factor_pair
from torchstrategy.keras.layers.preprocessing_warp import RandomShear

_GEOMETRIC = ("random_shear", "random_translation", "random_rotation")
_COLOR = ("random_brightness", "random_color_degeneration", "random_contrast", "random_sharpness")
_TONE = ("random_posterization", "solarization", "auto_contrast", "equalization")


def _make_layers(names: Sequence[str], factor: tuple, value_range: Any, interpolation: str,
                 seed: Optional[int], dtype: Any) -> dict:
    """The named sub-layers as Keras builds them for RandAugment/AugMix, all channels_last (the policy moves
    channels_first images to the last axis first)."""
    common = {"seed": seed, "dtype": dtype}
    last = {"data_format": "channels_last"}
    makers = {
        "random_shear": lambda: RandomShear(x_factor=factor, y_factor=factor, interpolation=interpolation,
                                            **common, **last),
        "random_translation": lambda: RandomTranslation(height_factor=factor, width_factor=factor,
                                                        interpolation=interpolation, **common, **last),
        "random_rotation": lambda: RandomRotation(factor=factor, interpolation=interpolation, **common, **last),
        "random_brightness": lambda: RandomBrightness(factor=factor, value_range=value_range, **common, **last),
        "random_color_degeneration": lambda: RandomColorDegeneration(factor=factor, value_range=value_range,
                                                                     **common, **last),
        "random_contrast": lambda: RandomContrast(factor=factor, value_range=value_range, **common, **last),
        "random_sharpness": lambda: RandomSharpness(factor=factor, value_range=value_range, **common, **last),
        "solarization": lambda: Solarization(addition_factor=factor, threshold_factor=factor,
                                             value_range=value_range, **common, **last),
        "random_posterization": lambda: RandomPosterization(factor=max(1, int(8 * factor[1])),
                                                            value_range=value_range, **common, **last),
        "auto_contrast": lambda: AutoContrast(value_range=value_range, dtype=dtype, **last),
        "equalization": lambda: Equalization(value_range=value_range, dtype=dtype, **last),
    }
    return {name: makers[name]() for name in names}


class _Policy(AugmentationLayer):
    """Holds the sub-layers; applies one by name to channels-last images with a given (or fresh) draw."""

    def __init__(self, names: Sequence[str], value_range: Any, factor: Any, interpolation: str,
                 seed: Optional[int], data_format: Optional[str], **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range = value_range
        self.factor = factor_pair(factor, "factor")
        self.interpolation = interpolation
        self._names = list(names)
        for name, layer in _make_layers(names, self.factor, value_range, interpolation, seed,
                                        self.dtype_policy.name).items():
            setattr(self, name, layer)

    def _run(self, name: str, images: torch.Tensor, transformation: Any) -> torch.Tensor:
        layer = getattr(self, name)
        if isinstance(layer, AugmentationLayer) and transformation is not None:
            return layer.transform_images(images, transformation)
        return layer(images, training=True)  # these layers draw inside their call


class RandAugment(_Policy):
    """In training, applies `num_ops` augmentations picked at random (the same picks for the whole batch) from
    shear, translation, rotation, brightness, color degeneration, contrast, sharpness, posterization,
    solarization, auto contrast and equalization, each with strength `factor` (a number f: [0, f]).
    Inference: identity.

    >>> RandAugment(num_ops=2, seed=1)(torch.rand(2, 8, 8, 3) * 255).shape
    torch.Size([2, 8, 8, 3])
    """

    _AUGMENT_LAYERS = list(_GEOMETRIC + _COLOR + _TONE)

    def __init__(self, value_range: Sequence[float] = (0, 255), num_ops: int = 2, factor: Any = 0.5,
                 interpolation: str = "bilinear", seed: Optional[int] = None, data_format: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(self._AUGMENT_LAYERS, value_range, factor, interpolation, seed, data_format, **kwargs)
        self.num_ops = num_ops

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Optional[dict]:
        """{"layer_idxes": (num_ops,) indices into _AUGMENT_LAYERS, "transforms": {name: the draw of each
        layer that takes one, else None}}; None outside training."""
        if not training:
            return None
        device = self._images_of(data).device
        draw = self._uniform((self.num_ops,), 0.0, float(len(self._names)), device, seed)
        indices = torch.floor(draw).long().clamp(max=len(self._names) - 1)
        nhwc = self._to_nhwc(self._images_of(data))[0]
        transforms = {name: (getattr(self, name).get_random_transformation(nhwc, training=True, seed=seed)
                             if isinstance(getattr(self, name), AugmentationLayer) else None)
                      for name in self._names}
        return {"transforms": transforms, "layer_idxes": indices}

    def _augment(self, images: torch.Tensor, transformation: Any) -> torch.Tensor:
        transforms = transformation.get("transforms") or {}
        for index in backend.to_tensor(transformation["layer_idxes"]).reshape(-1).tolist():
            name = self._names[int(index)]
            images = self._run(name, images, transforms.get(name))
        return images

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range, "num_ops": self.num_ops,
                "factor": self.factor, "interpolation": self.interpolation, "seed": self.seed}


class AugMix(_Policy):
    """In training, builds `num_chains` chains of up to `chain_depth` random augmentations (each step may be
    skipped), mixes the chains' outputs with Dirichlet(alpha) weights and blends the mix with the original image
    by a Beta(alpha, alpha) weight, then clips to `value_range`. The draw is shared by the batch. `all_ops=False`
    leaves out brightness, color degeneration, contrast and sharpness. Inference: identity.

    >>> AugMix(seed=2)(torch.rand(2, 8, 8, 3) * 255).shape
    torch.Size([2, 8, 8, 3])
    """

    def __init__(self, value_range: Sequence[float] = (0, 255), num_chains: int = 3, chain_depth: int = 3,
                 factor: Any = 0.3, alpha: float = 1.0, all_ops: bool = True, interpolation: str = "bilinear",
                 seed: Optional[int] = None, data_format: Optional[str] = None, **kwargs: Any) -> None:
        names = _GEOMETRIC + _TONE + (_COLOR if all_ops else ())
        super().__init__(names, value_range, factor, interpolation, seed, data_format, **kwargs)
        self.num_chains, self.chain_depth, self.alpha, self.all_ops = num_chains, chain_depth, alpha, all_ops

    def _gamma(self, count: int, device: torch.device, seed: Any) -> torch.Tensor:
        concentration = torch.full((count,), float(self.alpha))
        return torch._standard_gamma(concentration, generator=self._generator(torch.device("cpu"), seed)).to(device)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Optional[dict]:
        """{"chain_mixing_weights": (num_chains,) Dirichlet weights, "weight_sample": the Beta weight of the
        original, "chain_transforms": per chain a list of {"layer_name", "transformation"}}; None outside
        training."""
        if not training:
            return None
        images = self._images_of(data)
        device = images.device
        gammas = self._gamma(self.num_chains, device, seed)
        pair = self._gamma(2, device, seed)
        nhwc = self._to_nhwc(images)[0]
        chains = []
        for _ in range(self.num_chains):
            steps = []
            for _ in range(self.chain_depth):
                pick = int(self._uniform((), 0.0, float(len(self._names) + 1), device, seed))
                if pick >= len(self._names):  # Keras's choice among the layers and None: this step is skipped
                    continue
                name = self._names[pick]
                layer = getattr(self, name)
                draw = (layer.get_random_transformation(nhwc, training=True, seed=seed)
                        if isinstance(layer, AugmentationLayer) else None)
                steps.append({"layer_name": name, "transformation": draw})
            chains.append(steps)
        return {"chain_mixing_weights": gammas / gammas.sum(), "weight_sample": pair[0] / pair.sum(),
                "chain_transforms": chains}

    def _augment(self, images: torch.Tensor, transformation: Any) -> torch.Tensor:
        weights = backend.to_tensor(transformation["chain_mixing_weights"]).to(images.dtype).to(images.device)
        weight = backend.to_tensor(transformation["weight_sample"]).to(images.dtype).to(images.device)
        mixed = torch.zeros_like(images)
        for index, chain in enumerate(transformation["chain_transforms"]):
            out = images
            for step in chain:
                out = self._run(step["layer_name"], out, step.get("transformation"))
            mixed = mixed + out * weights[index]
        blended = weight * images + (1 - weight) * mixed
        return blended.clamp(self.value_range[0], self.value_range[1])

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range, "num_chains": self.num_chains,
                "chain_depth": self.chain_depth, "factor": self.factor, "alpha": self.alpha,
                "all_ops": self.all_ops, "interpolation": self.interpolation, "seed": self.seed}
