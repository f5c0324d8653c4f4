"""`keras.Function` (Keras 3): a callable graph of operations from input KerasTensors to output KerasTensors,
composed of a functional graph (keras/models.py's Functional) that it runs; an Operation itself."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras.layers.input_layer import KerasTensor, root_as_input
from torchstrategy.keras.operation import Operation
from torchstrategy.nest import flatten, map_structure


class Function(Operation):
    """Runs the operations that lead from `inputs` to `outputs` (structures of KerasTensors) on real values:
    `Function(inputs=[a, b], outputs=ops.sigmoid(a + b))([x, y])`. Inputs made directly with
    `keras.KerasTensor(shape)` are fine; they become the graph's inputs."""

    def __init__(self, inputs: Any, outputs: Any, name: Optional[str] = None) -> None:
        super().__init__(name=name)
        made = []  # InputLayers given to KerasTensors made directly: not operations of the graph (as in Keras)
        for tensor in flatten(inputs):
            if not isinstance(tensor, KerasTensor):
                raise ValueError(f"keras.Function inputs must be KerasTensors; got {tensor!r}.")
            if tensor.node is None:
                made.append(root_as_input(tensor).node.layer)
        self.__dict__["_made_inputs"] = made
        for tensor in flatten(outputs):
            if not isinstance(tensor, KerasTensor):
                raise ValueError(f"keras.Function outputs must be KerasTensors computed from its inputs; got "
                                 f"{tensor!r}.")
        from torchstrategy.keras.models import Functional

        self._graph = Functional(inputs, outputs, name=f"{self.name}_graph")

    @property
    def inputs(self) -> list:
        return self._graph.inputs

    @property
    def outputs(self) -> list:
        return self._graph.outputs

    @property
    def operations(self) -> list:
        """Every operation of the graph in execution order (the InputLayers of `keras.Input`s included)."""
        made = {id(layer) for layer in self.__dict__["_made_inputs"]}
        return [op for op in self._graph.graph_layers if id(op) not in made]

    def call(self, inputs: Any) -> Any:
        return self._graph(inputs)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return self._graph.compute_output_shape(input_shape)

    def compute_output_spec(self, inputs: Any) -> Any:
        """KerasTensors of the outputs' shapes and dtypes for `inputs` (KerasTensors or tensors)."""
        shapes = map_structure(lambda t: tuple(t.shape), inputs)
        shapes = shapes[0] if isinstance(shapes, list) and len(shapes) == 1 else shapes
        output_shapes = self.compute_output_shape(shapes)
        dtypes = iter([t.dtype for t in self.outputs])
        if isinstance(output_shapes, tuple) and all(d is None or isinstance(d, int) for d in output_shapes):
            return KerasTensor(output_shapes, next(dtypes))
        return [KerasTensor(shape, next(dtypes)) for shape in output_shapes]
