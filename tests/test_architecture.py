"""Holds the architecture line (tools/architecture.py): no new cycle between packages, no new upward
import, no new cross-package private name. The allow-lists only shrink: fix one, remove it here."""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

_TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "architecture.py")


def _load_tool():
    spec = importlib.util.spec_from_file_location("_architecture_tool", _TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


architecture = _load_tool()

# Imports against the layer order ("file: imported module"); none today, and none may come back.
UPWARD_ALLOWED: set = set()

# Cross-package private uses ("file: name"); the rule is none.
CROSS_PACKAGE_PRIVATE_ALLOWED: set = set()


@pytest.fixture(scope="module")
def report():
    return architecture.analyze()


def test_no_new_upward_import(report):
    found = {f"{edge.file}: {edge.module}" for edge in report.upward}
    assert found - UPWARD_ALLOWED == set(), "new imports against the layer order (see tools/architecture.py)"
    assert UPWARD_ALLOWED - found == set(), "fixed: remove these from UPWARD_ALLOWED"


def test_no_cycle_but_the_allowed_upward_imports_close(report):
    rest = [edge for edge in report.edges if f"{edge.file}: {edge.module}" not in UPWARD_ALLOWED]
    assert architecture.find_cycles(rest) == []


def test_cross_package_private_uses_only_shrink(report):
    found = {use.key for use in report.cross_package_private()}
    assert found - CROSS_PACKAGE_PRIVATE_ALLOWED == set(), "private names used across packages: add a public API"
    assert CROSS_PACKAGE_PRIVATE_ALLOWED - found == set(), "fixed: remove these from CROSS_PACKAGE_PRIVATE_ALLOWED"
    assert len(found) == 0


def test_no_strategy_is_probed_with_getattr(report):
    """The protocol is declared: the only hasattr on a part is check_part verifying a part against it."""
    assert [f"{probe.file}: {probe.call}" for probe in report.probes] == \
        ["distribute/parts/__init__.py: hasattr(part, name)"]


def test_the_report_finds_what_it_should(report):
    summary = report.summary()
    assert set(summary) == {"cycles", "upward_imports", "probes", "cross_package_private_uses",
                            "within_package_private_uses"}
    assert report.import_map and all(" -> " in key for key in report.import_map)
    assert all(architecture.unit_of("torchstrategy." + edge.module) == edge.target for edge in report.edges)


def test_command_line_prints_json(capsys):
    assert architecture.main(["--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["cross_package_private_uses"] == len(data["cross_package_private"])


# Concepts TF shows under several namespaces have one home; the other namespaces are facades (imports and
# names only): tf.tpu (home: cluster/tpu.py; TPUStrategy in distribute/tpu.py, one strategy per file),
# tf.train (homes: checkpoint/, cluster/spec.py, io/example.py), tf.keras.mixed_precision (home:
# keras/dtype_policies.py; LossScaleOptimizer in keras/optimizers/loss_scale.py).
FACADES = {"tpu.py", "train.py", "keras/mixed_precision.py", "distribute/cluster_resolver.py"}

# A public class name defined in two modules: only Keras's own pairs of a loss and a metric of one name
# (keras.losses.MeanSquaredError and keras.metrics.MeanSquaredError, ...).


def test_namespaces_that_show_a_concept_living_elsewhere_are_facades(report):
    assert FACADES <= set(report.facades), f"not facades: {FACADES - set(report.facades)}"


# Names TF itself gives two different things: tf.train.Feature (a proto) and tf.autograph.experimental.Feature (an enum).
# TF names two different classes alike (tf.io.TFRecordWriter writes records, tf.data.experimental.TFRecordWriter a
# dataset); tf.train.Coordinator shares its name with checkpoint's internal save/restore roles class.
TF_HOMONYMS = {"Feature": ["autograph/experimental.py", "io/example.py"],
               "TFRecordWriter": ["data/_examples.py", "io/tfrecord.py"],
               "Coordinator": ["checkpoint/_sync.py", "coordinator.py"]}


def test_each_public_class_has_one_home(report):
    for name, homes in report.duplicate_classes.items():
        if TF_HOMONYMS.get(name) == sorted(homes):
            continue
        packages = sorted(home.split("/")[1] if home.startswith("keras/") else home for home in homes)
        assert packages == ["losses", "metrics"], f"class {name} is defined in {homes}: give it one home"
