"""TF-written SavedModel directories (fixtures from tools/tf_reference/tf_saved_model_fixtures.py, tensorflow-cpu
2.21.0 / Keras 3.15): saved_model.pb's object graph and signatures, the variables bundle's values, damaged input."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from torchstrategy.formats.base import FormatError
from torchstrategy.formats.tf_saved_model import is_tf_saved_model, read_tf_saved_model, read_variable_values

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
MODULE, KERAS = os.path.join(FIXTURES, "tf_module_sm"), os.path.join(FIXTURES, "tf_keras_sm")
with open(os.path.join(FIXTURES, "tf_saved_model_expected.json")) as _handle:
    EXPECTED = json.load(_handle)


def test_module_object_graph_signatures_and_values_match_tf():
    model = read_tf_saved_model(MODULE)
    assert model.tags == ["serve"] and model.tensorflow_version == "2.21.0"
    root = model.nodes[0]
    assert [name for _, name in root.children] == ["w", "b", "__call__", "signatures"]
    kinds = {name: model.nodes[child].kind for child, name in root.children}
    assert kinds == {"w": "variable", "b": "variable", "__call__": "function", "signatures": "user_object"}
    values = read_variable_values(model)
    for name in ("w", "b"):
        node_id = root.children[["w", "b"].index(name)][0]
        frozen = EXPECTED["tf_module_sm"]["attributes"][name]
        node = model.nodes[node_id]
        assert f"{node.name}:0" == frozen["name"] and node.trainable == frozen["trainable"]
        assert list(node.shape) == frozen["shape"] and node.dtype == frozen["dtype"]
        np.testing.assert_array_equal(values[node_id], np.array(frozen["value"], np.float32))
    signature = model.signatures["serving_default"]
    frozen = EXPECTED["tf_module_sm"]["signatures"]["serving_default"]
    assert {k: (list(v.shape), v.dtype) for k, v in signature.inputs.items()} == {
        k: (v["shape"], v["dtype"]) for k, v in frozen["inputs"].items()}
    assert {k: (list(v.shape), v.dtype) for k, v in signature.outputs.items()} == {
        k: (v["shape"], v["dtype"]) for k, v in frozen["outputs"].items()}
    assert signature.method_name == "tensorflow/serving/predict"


def test_keras_export_values_follow_the_child_names_not_the_node_order():
    # the export's `_all_variables` list holds the same weights in another order than `variables`
    model = read_tf_saved_model(KERAS)
    values = read_variable_values(model)
    assert sorted(model.signatures) == sorted(EXPECTED["tf_keras_sm"]["signatures"])
    root = dict((name, child) for child, name in model.nodes[0].children)
    listed = [child for child, _ in model.nodes[root["variables"]].children]
    for node_id, frozen in zip(listed, EXPECTED["tf_keras_sm"]["values"]):
        np.testing.assert_array_equal(values[node_id], np.array(frozen, np.float32))
    by_name = {}
    for child, _ in model.nodes[root["_all_variables"]].children:
        by_name[model.nodes[child].name] = values[child]
    for node_id in listed:
        np.testing.assert_array_equal(by_name[model.nodes[node_id].name], values[node_id])


def _copy(tmp_path, source=MODULE):
    target = tmp_path / "copy"
    shutil.copytree(source, target)
    return target


def test_truncated_saved_model_pb_is_an_oserror_naming_the_file(tmp_path):
    target = _copy(tmp_path)
    pb = target / "saved_model.pb"
    pb.write_bytes(pb.read_bytes()[:3000])
    # TF 2.21: OSError "Cannot parse file b'.../saved_model.pb': ... Wire format was corrupt."
    with pytest.raises(OSError, match=r"Cannot parse file '.*saved_model\.pb'.*cut short"):
        read_tf_saved_model(str(target))


def test_empty_saved_model_pb_and_text_form_are_refused_naming_the_file(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "saved_model.pb").write_bytes(b"")
    with pytest.raises(FormatError, match=r"saved_model\.pb' holds no MetaGraphDef \(0 bytes\)"):
        read_tf_saved_model(str(tmp_path / "empty"))
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "saved_model.pbtxt").write_text("saved_model_schema_version: 1\n")
    assert is_tf_saved_model(str(tmp_path / "text"))
    with pytest.raises(FormatError, match=r"saved_model\.pbtxt' is a SavedModel in protobuf text form"):
        read_tf_saved_model(str(tmp_path / "text"))


@pytest.mark.parametrize("missing,expected", [
    ("variables.index", r"2 variable\(s\) but no '.*variables/variables\.index'"),
    ("variables.data-00000-of-00001", r"data shard '.*variables\.data-00000-of-00001' is missing")])
def test_missing_variables_file_is_named(tmp_path, missing, expected):
    target = _copy(tmp_path)
    os.remove(target / "variables" / missing)
    model = read_tf_saved_model(str(target))
    # TF 2.21: FileNotFoundError "... Failed to find any matching files for .../variables/variables"
    with pytest.raises(FileNotFoundError, match=expected):
        read_variable_values(model)


def test_corrupted_variable_bytes_are_named(tmp_path):
    target = _copy(tmp_path)
    data = target / "variables" / "variables.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[0] ^= 0xFF
    data.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match=r"variables/variables' cannot be read.*CRC-32C"):
        read_variable_values(read_tf_saved_model(str(target)))
