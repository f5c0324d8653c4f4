"""`keras.saving.KerasFileEditor`: a `.keras` or `.weights.h5` file's weights as a nested dict of object paths,
compared with a model, edited (rename, delete, add objects and weights) and saved as a `.weights.h5` file."""
from __future__ import annotations

import collections
from typing import Any, Callable, Optional

import numpy as np

from torchstrategy.formats import keras_h5, keras_zip


def _nested(tree: dict) -> tuple[dict, dict]:
    """({'layers': {'dense': {'0': array, ...}}}, {'/layers/dense': {'name': ...}}) of a {path: VarGroup} tree;
    objects without variables are left out, as Keras's editor does."""
    weights: dict = collections.OrderedDict()
    metadata: dict = {}
    for path, group in tree.items():
        if not group.values:
            continue
        node = weights
        for part in [p for p in path.split("/") if p]:
            node = node.setdefault(part, collections.OrderedDict())
        names = group.keys if group.keys is not None else [str(i) for i in range(len(group.values))]
        node.update(zip(names, (np.asarray(v) for v in group.values)))
        if group.name:
            metadata["/" + path if path else ""] = {"name": group.name}
    return weights, metadata


def _flat(weights: dict, path: str = "", out: Optional[dict] = None) -> dict:
    """The nested dict back as {path: VarGroup} (datasets keep their names), in the dict's order."""
    out = {} if out is None else out
    arrays = {name: value for name, value in weights.items() if not isinstance(value, dict)}
    if arrays:
        out[path] = keras_h5.VarGroup(path.rsplit("/", 1)[-1], list(arrays.values()), list(arrays))
    for name, value in weights.items():
        if isinstance(value, dict) and value:
            _flat(value, f"{path}/{name}" if path else name, out)
    return out


def _model_spec(model: Any) -> dict:
    from torchstrategy.keras import keras_files

    return _nested(keras_files.weights_tree(model, include_optimizer=True))[0]


def _weights_arg(weights: Any) -> None:
    if not isinstance(weights, dict):
        raise ValueError("Argument `weights` should be a dict where keys are weight names (usually '0', '1', etc.) "
                         f"and values are NumPy arrays. Received: type(weights)={type(weights)}")


class KerasFileEditor:
    """Inspects and edits the weights of a Keras file, e.g. to adapt an old file to a changed model:

    >>> editor = KerasFileEditor("model.weights.h5")                 # doctest: +SKIP
    >>> editor.delete_object("layers/dense_2")                      # doctest: +SKIP
    >>> editor.add_object("layers/einsum_dense", {"0": kernel, "1": bias})   # doctest: +SKIP
    >>> editor.save("edited.weights.h5")                            # doctest: +SKIP

    `weights_dict` holds the weights as nested dicts ('layers' -> 'dense' -> '0' -> array). Objects are named by
    a full path ('layers/dense') or, when it occurs once in the file, a bare name ('dense').
    """

    def __init__(self, filepath: str) -> None:
        self.filepath = filepath
        self.metadata: Optional[dict] = None
        self.config: Optional[dict] = None
        self.model = None
        if str(filepath).endswith(".keras"):
            archive = keras_zip.read(str(filepath))
            self.config, self.metadata, tree = archive.config, archive.metadata, archive.weights
        elif str(filepath).endswith(".weights.h5"):
            tree = keras_h5.read_tree(str(filepath))
        else:
            raise ValueError(f"Invalid filename: expected a `.keras` `.weights.h5` extension. Received: "
                             f"filepath={filepath}")
        self.weights_dict, self.object_metadata = _nested(tree)
        print(f"Keras model file '{self.filepath}'")
        if self.metadata is not None:
            print(f"Saved with Keras {self.metadata.get('keras_version')} - date: {self.metadata.get('date_saved')}")

    # ----- inspecting -------------------------------------------------------------------------------------
    def summary(self) -> None:
        """Prints the file's objects and the shape and dtype of each weight."""
        print("Weights structure")
        self._print(self.weights_dict, "  ", "")

    def _print(self, weights: dict, prefix: str, path: str) -> None:
        for index, (key, value) in enumerate(weights.items()):
            inner = f"{path}/{key}"
            connector = "> " if index == 0 and not path else ("└─ " if index == len(weights) - 1 else "├─ ")
            if isinstance(value, dict):
                label = self.object_metadata.get(inner, {}).get("name")
                print(f"{prefix}{connector}{key}" + (f" ('{label}')" if label else ""))
                self._print(value, prefix + ("    " if index == len(weights) - 1 else "│   "), inner)
            else:
                print(f"{prefix}{connector}{key}: shape={value.shape}, dtype={value.dtype}")

    def compare(self, reference_model: Any) -> dict:
        """Lists every object and weight the file and `reference_model` do not share (or whose shapes differ)
        and returns {'status': 'success' or 'error', 'error_count': ..., 'match_count': ...}; the counts
        follow Keras 3.15's walk (the file against the model, then the model against the file)."""
        print("Running comparison")
        spec = _model_spec(reference_model)
        checked: set = set()
        errors, matches = self._compare(self.weights_dict, spec, "", "saved file", "reference model", 0, 0, checked)
        errors += self._compare(spec, self.weights_dict, "", "reference model", "saved file", 0, 0, checked)[0]
        print("─────────────────────")
        if errors == 0:
            print("Comparison successful: saved file is compatible with the reference model")
            print(f"    Found {matches} matching weight{'' if matches == 1 else 's'}")
        else:
            print(f"Found {errors} error{'' if errors == 1 else 's'}: saved file is not compatible with the "
                  "reference model")
        return {"status": "success" if errors == 0 else "error", "error_count": errors, "match_count": matches}

    def _compare(self, target: dict, reference: dict, path: str, target_name: str, ref_name: str, errors: int,
                 matches: int, checked: set) -> tuple[int, int]:
        # Keras hands its running counts into each nested walk and adds what that walk returns: kept as is
        for key, value in reference.items():
            inner = f"{path}/{key}"
            if inner in checked:
                continue
            if key not in target:
                errors += 1
                checked.add(inner)
                kind = "Object" if isinstance(value, dict) else "Weight"
                print(f"...{kind} {inner} present in {ref_name}, missing from {target_name}")
                if isinstance(value, dict):
                    print(f"    In {ref_name}, {inner} contains the following keys: {list(value.keys())}")
            elif isinstance(value, dict):
                more_errors, more_matches = self._compare(target[key], value, inner, target_name, ref_name, errors,
                                                          matches, checked)
                errors += more_errors
                matches += more_matches
            elif tuple(np.shape(target[key])) != tuple(np.shape(value)):
                errors += 1
                checked.add(inner)
                print(f"...Weight shape mismatch for {inner}\n    In {ref_name}: shape={np.shape(value)}\n"
                      f"    In {target_name}: shape={np.shape(target[key])}")
            else:
                matches += 1
        return errors, matches

    # ----- editing ----------------------------------------------------------------------------------------
    def _edit(self, edit: Callable[[dict, str], None], source: str, target: Optional[str] = None) -> None:
        if target is not None and "/" in target:
            raise ValueError(f"Argument `target_name` should be a leaf name, not a full path name. Received: "
                             f"target_name='{target}'")
        if "/" in source:
            node = self.weights_dict
            for part in source.split("/")[:-1]:
                if part not in node:
                    raise ValueError(f"Path '{source}' not found in model.")
                node = node[part]
            if source.split("/")[-1] not in node:
                raise ValueError(f"Path '{source}' not found in model.")
            edit(node, source.split("/")[-1])
            return
        holders = []

        def find(node: dict) -> None:
            for value in list(node.values()):
                if isinstance(value, dict):
                    find(value)
            if source in node:
                holders.append(node)

        find(self.weights_dict)
        if len(holders) > 1:
            raise ValueError(f"Name '{source}' occurs more than once in the model; try passing a complete path")
        if not holders:
            raise ValueError(f"Source name '{source}' does not appear in the model. Use `editor.weights_summary()` "
                             "to list all objects.")
        edit(holders[0], source)

    def rename_object(self, object_name: str, new_name: str) -> None:
        """Renames an object ('dense_2' or 'layers/dense_2') to `new_name` (a leaf name)."""
        def rename(node: dict, name: str) -> None:
            node[new_name] = node.pop(name)

        self._edit(rename, object_name, new_name)

    def delete_object(self, object_name: str) -> None:
        """Removes an object ('dense_2' or 'layers/dense_2') and its weights."""
        self._edit(lambda node, name: node.pop(name), object_name)

    def add_object(self, object_path: str, weights: dict) -> None:
        """Adds an object at `object_path` ('layers/dense_3', whose parent must exist) with `weights`
        ({'0': kernel, '1': bias})."""
        _weights_arg(weights)
        parts = object_path.split("/")
        node = self.weights_dict
        for part in parts[:-1]:
            if part not in node:
                raise ValueError(f"Path '{'/'.join(parts[:-1])}' not found in model.")
            node = node[part]
        node[parts[-1]] = weights

    def delete_weight(self, object_name: str, weight_name: str) -> None:
        """Removes the weight `weight_name` ('0', ...) of an object."""
        def delete(node: dict, name: str) -> None:
            if weight_name not in node[name]:
                raise ValueError(f"Weight {weight_name} not found in object {object_name}. Weights found: "
                                 f"{list(node[name].keys())}")
            node[name].pop(weight_name)

        self._edit(delete, object_name)

    def add_weights(self, object_name: str, weights: dict) -> None:
        """Adds (or replaces) weights {'2': array, ...} of an existing object."""
        _weights_arg(weights)
        self._edit(lambda node, name: node[name].update(weights), object_name)

    # ----- saving -----------------------------------------------------------------------------------------
    def save(self, filepath: str) -> None:
        """Writes the edited weights to a `.weights.h5` file (atomically: a reader never sees half a file)."""
        filepath = str(filepath)
        if not filepath.endswith(".weights.h5"):
            raise ValueError(f"Invalid `filepath` argument: expected a `.weights.h5` extension. Received: "
                             f"filepath={filepath}")
        from torchstrategy.checkpoint import write_atomically

        tree = _flat(self.weights_dict)
        write_atomically(filepath, lambda handle: keras_h5.write_tree(handle, tree))

    def resave_weights(self, filepath: str) -> None:
        """`save(filepath)` (Keras's other name for it)."""
        self.save(filepath)
