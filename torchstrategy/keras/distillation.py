"""`keras.distillation`: knowledge distillation as Keras 3.15 defines it: a Distiller model that trains a
student against a frozen teacher with `fit`, and the distillation losses (logits, intermediate features)."""
from __future__ import annotations

import inspect
from typing import Any, Optional

import torch

from torchstrategy.keras import serialization_lib, tree
from torchstrategy.keras.models import Model


def _as_loss(item: Any) -> Any:
    """A loss string resolved as Keras's losses.get does (a function name gives the function, e.g.
    'kl_divergence'; a class name an instance); anything else (an instance, None) as it is."""
    if item is None or not isinstance(item, str):
        return item
    from torchstrategy.keras import losses

    named = getattr(losses, item, None)
    if inspect.isfunction(named):
        return named
    found = named() if inspect.isclass(named) else losses.get(item)
    if found is None:
        raise ValueError(f"Unknown loss function: '{item}'.")
    return found


def _total(values: list) -> torch.Tensor:
    return torch.stack([torch.as_tensor(v, dtype=torch.float32) for v in values]).sum()


class DistillationLoss:
    """Base class of distillation losses: `compute_loss(teacher_outputs, student_outputs)` returns a scalar."""

    def compute_loss(self, teacher_outputs: Any, student_outputs: Any, **kwargs: Any) -> Any:
        """The distillation loss between teacher and student outputs; subclasses define it."""
        raise NotImplementedError("Subclasses must implement compute_loss")

    def validate_outputs(self, teacher_outputs: Any, student_outputs: Any) -> None:
        """Raises ValueError when teacher and student outputs are not nested the same way."""
        tree.assert_same_structure(teacher_outputs, student_outputs)

    def validate_model_compatibility(self, teacher: Any, student: Any) -> None:
        """Raises ValueError when this loss cannot be used with these models (the base accepts any)."""


def _symbolic_view(model: Any) -> Optional[tuple]:
    """(input KerasTensors, final output, {layer name: output}) of a Functional model, or of a Sequential model
    with an Input (its layers replayed on that Input, sharing their weights); None for a subclassed model."""
    from torchstrategy.keras.models import Functional, Sequential

    if isinstance(model, Functional):
        return list(model.inputs), model.output, {layer.name: layer.output for layer in model.layers}
    if isinstance(model, Sequential) and model._input_layer is not None:
        x = model._input_layer.output
        inputs, outputs = [x], {}
        for layer in model.layers:
            x = layer(x)
            outputs[layer.name] = x
        return inputs, x, outputs
    return None


def _is_subclassed(model: Any) -> bool:
    return _symbolic_view(model) is None


class FeatureDistillation(DistillationLoss):
    """`loss` (default 'mse', or a structure of losses with None to skip outputs) between the outputs of
    `teacher_layer_name` and `student_layer_name` (each model's final output when None)."""

    def __init__(self, loss: Any = "mse", teacher_layer_name: Optional[str] = None,
                 student_layer_name: Optional[str] = None) -> None:
        self.teacher_layer_name = teacher_layer_name
        self.student_layer_name = student_layer_name
        self.loss = tree.map_structure(_as_loss, loss)
        if all(item is None for item in tree.flatten(self.loss)):
            raise ValueError("The `loss` argument in `FeatureDistillation` must contain at least one non-`None` "
                             "value.")

    def validate_model_compatibility(self, teacher: Any, student: Any) -> None:
        if self.teacher_layer_name is not None or self.student_layer_name is not None:
            subclassed = [role for role, model in (("teacher", teacher), ("student", student))
                          if _is_subclassed(model)]
            if subclassed:
                raise ValueError(f"FeatureDistillation with specific layer names requires Functional or "
                                 f"Sequential models. The {' and '.join(subclassed)} model(s) appear to be "
                                 f"subclassed (no symbolic inputs/outputs). Either use Functional/Sequential "
                                 f"models, or use FeatureDistillation without layer names (to distill final "
                                 f"outputs only), or use LogitsDistillation instead.")
        for role, model, name in (("teacher", teacher, self.teacher_layer_name),
                                  ("student", student, self.student_layer_name)):
            if name is not None:
                try:
                    model.get_layer(name=name)
                except ValueError as error:
                    raise ValueError(f"In {role} model: {error}") from None

    def validate_outputs(self, teacher_outputs: Any, student_outputs: Any) -> None:
        super().validate_outputs(teacher_outputs, student_outputs)
        try:
            tree.assert_same_structure(self.loss, teacher_outputs)
        except ValueError as error:
            raise ValueError(f"Loss structure mismatch. Loss structure: {self.loss!r}, Output structure: "
                             f"{tree.map_structure(lambda _: '*', teacher_outputs)!r}. Error: {error}") from None

    def compute_loss(self, teacher_outputs: Any, student_outputs: Any, **kwargs: Any) -> torch.Tensor:
        def one(loss_fn: Any, teacher: Any, student: Any) -> Any:
            return 0.0 if loss_fn is None else torch.mean(loss_fn(teacher, student))

        return _total(tree.flatten(tree.map_structure(one, self.loss, teacher_outputs, student_outputs)))

    def get_config(self) -> dict:
        return {"loss": serialization_lib.serialize_keras_object(self.loss), "teacher_layer_name": self.teacher_layer_name,
                "student_layer_name": self.student_layer_name}

    @classmethod
    def from_config(cls, config: dict) -> "FeatureDistillation":
        return cls(**{**config, "loss": serialization_lib.deserialize_keras_object(config["loss"])})


class LogitsDistillation(DistillationLoss):
    """`loss` (default KL divergence) between the teacher's and the student's logits divided by
    `temperature`; for KLDivergence, between their softmaxes, times temperature**2."""

    def __init__(self, temperature: float = 3.0, loss: Any = "kl_divergence") -> None:
        self.temperature = temperature
        self.loss = tree.map_structure(_as_loss, loss)
        if all(item is None for item in tree.flatten(self.loss)):
            raise ValueError("At least one loss must be non-`None`.")
        if not isinstance(self.temperature, (int, float)):
            raise ValueError(f"temperature must be a number, got {type(self.temperature)}")
        if self.temperature <= 0.0:
            raise ValueError("temperature must be positive.")

    def compute_loss(self, teacher_outputs: Any, student_outputs: Any, **kwargs: Any) -> torch.Tensor:
        from torchstrategy.keras.losses import KLDivergence

        teacher = tree.map_structure(lambda x: x / self.temperature, teacher_outputs)
        student = tree.map_structure(lambda x: x / self.temperature, student_outputs)

        def one(loss_fn: Any, t: Any, s: Any) -> Any:
            if loss_fn is None:
                return 0.0
            if isinstance(loss_fn, KLDivergence):
                value = torch.mean(loss_fn(torch.softmax(t, dim=-1), torch.softmax(s, dim=-1)))
                return value * self.temperature ** 2
            return torch.mean(loss_fn(t, s))

        return _total(tree.flatten(tree.map_structure(one, self.loss, teacher, student)))

    def get_config(self) -> dict:
        return {"temperature": self.temperature, "loss": serialization_lib.serialize_keras_object(self.loss)}

    @classmethod
    def from_config(cls, config: dict) -> "LogitsDistillation":
        return cls(**{**config, "loss": serialization_lib.deserialize_keras_object(config["loss"])})


class Distiller(Model):
    """Trains `student` with `fit` on `student_loss_weight * student loss + (1 - student_loss_weight) *
    weighted distillation losses` against a frozen `teacher`; its outputs are the student's."""

    def __init__(self, teacher: Any, student: Any, distillation_losses: Any, distillation_loss_weights: Any = None,
                 student_loss_weight: float = 0.5, name: str = "distiller", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        _validate_models(teacher, student)
        self.teacher = teacher
        self.student = student
        if not isinstance(student_loss_weight, (int, float)):
            raise ValueError(f"student_loss_weight must be a number, got {type(student_loss_weight)}")
        if not 0.0 <= student_loss_weight <= 1.0:
            raise ValueError(f"student_loss_weight must be between 0.0 and 1.0, got {student_loss_weight}")
        self.student_loss_weight = student_loss_weight
        if distillation_losses is None:
            raise ValueError("'distillation_losses' cannot be `None`. Provide a distillation loss (e.g., "
                             "LogitsDistillation or FeatureDistillation) or a list of distillation losses.")
        if not isinstance(distillation_losses, (list, tuple)):
            distillation_losses, distillation_loss_weights = [distillation_losses], [1.0]
        elif distillation_loss_weights is None:
            distillation_loss_weights = [1.0] * len(distillation_losses)
        elif len(distillation_loss_weights) != len(distillation_losses):
            raise ValueError(f"Number of distillation_loss_weights ({len(distillation_loss_weights)}) must match "
                             f"number of distillation_losses ({len(distillation_losses)})")
        self.distillation_losses = list(distillation_losses)
        self.distillation_loss_weights = list(distillation_loss_weights)
        for loss in self.distillation_losses:
            loss.validate_model_compatibility(teacher, student)
        self._teacher_extractor = _feature_extractor(teacher, _layer_names(self.distillation_losses, "teacher"))
        self._student_extractor = _feature_extractor(student, _layer_names(self.distillation_losses, "student"))
        self.teacher.trainable = False
        from torchstrategy.keras.metrics import Mean

        self.student_loss_tracker = Mean(name="student_loss")
        self.distillation_loss_tracker = Mean(name="distillation_loss")
        self.total_loss_tracker = Mean(name="total_loss")
        self._student_loss = None
        self._student_loss_for_serialization = None

    def compile(self, optimizer: Any = "adam", loss: Any = None, metrics: Any = None, **kwargs: Any) -> None:
        """Compiles for the student: `loss` is the student's supervised loss (required); the model itself
        compiles without a loss, since `compute_loss` combines the two."""
        if loss is None:
            raise ValueError("'loss' cannot be `None`.")
        self._student_loss = tree.map_structure(_as_loss, loss)
        self._student_loss_for_serialization = loss
        if metrics is not None and not isinstance(metrics, (list, tuple)):
            raise ValueError(f"metrics must be a list or tuple, got {type(metrics)}")
        super().compile(optimizer=optimizer, loss=None, metrics=metrics, **kwargs)

    def call(self, inputs: Any, training: Optional[bool] = None, **kwargs: Any) -> Any:
        """The student's outputs."""
        return self.student(inputs, training=training, **kwargs)

    @property
    def metrics(self) -> list:
        base = super().metrics  # the trackers are held attributes, so already listed there; keep them last
        trackers = [self.student_loss_tracker, self.distillation_loss_tracker, self.total_loss_tracker]
        return [m for m in base if all(m is not t for t in trackers)] + trackers

    def compute_metrics(self, x: Any, y: Any, y_pred: Any, sample_weight: Any = None) -> dict:
        logs = super().compute_metrics(x, y, y_pred, sample_weight)
        for tracker in (self.student_loss_tracker, self.distillation_loss_tracker, self.total_loss_tracker):
            logs[tracker.name] = tracker.result()
        return logs

    def compute_loss(self, x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None,
                     training: bool = True) -> torch.Tensor:
        """`student_loss_weight * student loss + (1 - student_loss_weight) * sum(weight * distillation loss)`;
        also updates the student_loss, distillation_loss and total_loss trackers."""
        if y_pred is None:
            y_pred = self(x, training=training)
        student_loss: Any = 0.0
        if self.student_loss_weight > 0.0 and y is not None:
            if self._student_loss is None:
                raise RuntimeError("Compile the Distiller (with the student's `loss`) before training it.")
            values = tree.flatten(tree.map_structure(lambda fn, target, pred: fn(target, pred),
                                                     self._student_loss, y, y_pred))
            student_loss = _total(values) if len(values) > 1 else values[0]
            if isinstance(student_loss, torch.Tensor) and student_loss.ndim > 0:
                student_loss = torch.mean(student_loss)
        distillation: Any = torch.zeros(())
        if self.student_loss_weight < 1.0:
            with torch.no_grad():
                teacher_features = (self._teacher_extractor(x, training=False) if self._teacher_extractor
                                    is not None else {"final_output": self.teacher(x, training=False)})
            student_features = (self._student_extractor(x, training=True) if self._student_extractor is not None
                                else {"final_output": y_pred})
            for loss_fn, weight in zip(self.distillation_losses, self.distillation_loss_weights):
                teacher_out, student_out = _features_for(loss_fn, teacher_features, student_features, y_pred)
                loss_fn.validate_outputs(teacher_out, student_out)
                value = loss_fn.compute_loss(teacher_out, student_out)
                if isinstance(value, torch.Tensor) and value.ndim > 0:
                    raise ValueError(f"Distillation loss {type(loss_fn).__name__} returned a non-scalar loss with "
                                     f"shape {tuple(value.shape)}. The compute_loss method must return a scalar "
                                     f"tensor.")
                distillation = distillation + weight * value
        total = self.student_loss_weight * student_loss + (1.0 - self.student_loss_weight) * distillation
        self.student_loss_tracker.update_state(_detached(student_loss))
        self.distillation_loss_tracker.update_state(_detached(distillation))
        self.total_loss_tracker.update_state(_detached(total))
        return total

    def reset_metrics(self) -> None:
        super().reset_metrics()
        for tracker in (self.student_loss_tracker, self.distillation_loss_tracker, self.total_loss_tracker):
            tracker.reset_state()

    def get_config(self) -> dict:
        from torchstrategy.keras.keras_config import dtype_policy_config

        return {"name": self.name, "trainable": self.trainable, "dtype": dtype_policy_config(self.dtype_policy.name),
                "teacher": serialization_lib.serialize_keras_object(self.teacher),
                "student": serialization_lib.serialize_keras_object(self.student),
                "distillation_losses": [serialization_lib.serialize_keras_object(loss)
                                        for loss in self.distillation_losses],
                "distillation_loss_weights": self.distillation_loss_weights,
                "student_loss_weight": self.student_loss_weight}

    @classmethod
    def from_config(cls, config: dict) -> "Distiller":
        from torchstrategy.keras.keras_config import policy_name

        config = dict(config)
        config.pop("trainable", None)
        if "dtype" in config:
            config["dtype"] = policy_name(config["dtype"])
        config["teacher"] = serialization_lib.deserialize_keras_object(config["teacher"])
        config["student"] = serialization_lib.deserialize_keras_object(config["student"])
        config["distillation_losses"] = [serialization_lib.deserialize_keras_object(loss)
                                         for loss in config["distillation_losses"]]
        return cls(**config)


def _detached(value: Any) -> Any:
    return value.detach() if isinstance(value, torch.Tensor) else value


def _validate_models(teacher: Any, student: Any) -> None:
    """Keras's checks: both are Models; where both have symbolic inputs/outputs, shapes agree (None matches
    anything) and dtypes are equal."""
    for role, model in (("Teacher", teacher), ("Student", student)):
        if not isinstance(model, Model):
            raise ValueError(f"{role} must be a keras.Model, got {type(model)}")
    views = _symbolic_view(teacher), _symbolic_view(student)
    if None in views:
        return
    pairs = {"input": (views[0][0], views[1][0]), "output": ([views[0][1]], [views[1][1]])}
    for context, (t, s) in pairs.items():
        tree.map_structure(lambda a, b: _compatible_shapes(tuple(a.shape), tuple(b.shape), context), t, s)
    for context, (t, s) in pairs.items():
        tree.map_structure(lambda a, b: _same_dtype(a.dtype, b.dtype, context), t, s)


def _compatible_shapes(shape1: tuple, shape2: tuple, context: str) -> None:
    if len(shape1) != len(shape2):
        raise ValueError(f"Teacher and student {context} shapes have different dimensions. Teacher: {shape1}, "
                         f"Student: {shape2}.")
    if any(a is not None and b is not None and a != b for a, b in zip(shape1, shape2)):
        raise ValueError(f"Teacher and student {context} shapes are incompatible. Teacher: {shape1}, Student: "
                         f"{shape2}. All dimensions must match.")


def _same_dtype(teacher_dtype: Any, student_dtype: Any, context: str) -> None:
    if teacher_dtype != student_dtype:
        raise ValueError(f"Teacher and student {context} dtypes must match. Teacher: {teacher_dtype}, Student: "
                         f"{student_dtype}.")


def _layer_names(distillation_losses: list, role: str) -> list:
    names: list = []
    for loss in distillation_losses:
        name = getattr(loss, f"{role}_layer_name", None) if isinstance(loss, FeatureDistillation) else None
        if name and name not in names:
            names.append(name)
    return names


def _feature_extractor(model: Any, layer_names: list) -> Any:
    """A functional model returning {'final_output', <layer name>: that layer's output} in one pass."""
    if not layer_names:
        return None
    view = _symbolic_view(model)
    if view is None:
        raise ValueError(f"Cannot create feature extractor for {model.name}. The model has no symbolic inputs "
                         f"attribute.")
    inputs, final, by_name = view
    outputs = {"final_output": final}
    for name in layer_names:
        model.get_layer(name=name)  # Keras's error for a missing layer
        outputs[name] = by_name[name]
    return Model(inputs=inputs if len(inputs) > 1 else inputs[0], outputs=outputs,
                 name=f"{model.name}_multi_feature_extractor")


def _features_for(loss_fn: Any, teacher_features: dict, student_features: dict, y_pred: Any) -> tuple:
    if getattr(loss_fn, "teacher_layer_name", None) is None:
        return teacher_features["final_output"], y_pred
    found = []
    for features, name in ((teacher_features, loss_fn.teacher_layer_name),
                           (student_features, loss_fn.student_layer_name or "final_output")):
        if name not in features:
            raise RuntimeError(f"Failed to extract features for {type(loss_fn).__name__} targeting teacher layer "
                               f"'{loss_fn.teacher_layer_name}' and student layer '{loss_fn.student_layer_name}'. "
                               f"Original error: Layer '{name}' not found in extracted features. Available: "
                               f"{list(features.keys())}")
        found.append(features[name])
    return found[0], found[1]
