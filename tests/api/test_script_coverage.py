"""tools/script_coverage.py on small scripts written here: import aliases, instance members, keyword arguments,
notebooks, TF1 scripts set apart, and the figures and rankings it reports (tools/script_corpus.py too)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

_TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools")


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.join(_TOOLS, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


coverage = _load("script_coverage")
corpus = _load("script_corpus")
names_tool = _load("script_names")


def _used(source: str) -> dict:
    """{classified name: keywords} that one .py source uses (API names only)."""
    found = names_tool.collect([source], coverage.ManifestFacts()).names
    out = {}
    for path, keywords in found.items():
        category, name, whole = coverage.classify(path)
        if category == "api":
            out.setdefault(name, set()).update(keywords if whole else ())
    return out


def test_import_aliases_resolve_to_tf_names():
    used = _used(
        "import tensorflow as tf\n"
        "from tensorflow import keras\n"
        "from tensorflow.keras import layers as L\n"
        "from tensorflow.keras.layers import Dense\n"
        "import keras as K\n"
        "from keras import ops\n"
        "import tensorflow.experimental.numpy as tnp\n"
        "x = tf.constant([1.0], dtype=tf.float32)\n"
        "y = keras.layers.Conv2D(4, 3, padding='same')\n"
        "z = L.Flatten()\n"
        "d = Dense(3, activation='relu')\n"
        "w = K.activations.relu(ops.sum(x))\n"
        "t = tnp.ones(3)\n"
        "m = tf.float32.max\n"
    )
    assert used["tf.constant"] == {"dtype"}
    assert used["keras.layers.Conv2D"] == {"padding"}  # tf.keras.X and keras.X are one name
    assert used["keras.layers.Dense"] == {"activation"}
    for name in ("keras.layers.Flatten", "keras.activations.relu", "keras.ops.sum", "tf.float32",
                 "tf.experimental.numpy.ones", "keras.layers", "tf.experimental.numpy"):
        assert name in used, name
    assert "tf.float32.max" not in used  # an attribute of a value, not a name


def test_instances_and_subclasses_reach_class_members():
    used = _used(
        "import tensorflow as tf\n"
        "from tensorflow import keras\n"
        "model = keras.Sequential([keras.layers.Dense(1)])\n"
        "model.compile(optimizer='adam', loss='mse')\n"
        "history = model.fit(x, y, epochs=2)\n"
        "ds = tf.data.Dataset.from_tensor_slices(x).shuffle(10).batch(2, drop_remainder=True)\n"
        "with tf.GradientTape() as tape:\n"
        "    loss = model(x)\n"
        "grads = tape.gradient(loss, model.trainable_variables)\n"
        "class Block(keras.layers.Layer):\n"
        "    def __init__(self, units, **kwargs):\n"
        "        super().__init__(name='block', **kwargs)\n"
        "        self.dense = keras.layers.Dense(units)\n"
        "    def build(self, shape):\n"
        "        self.w = self.add_weight(shape=(1,), initializer='zeros')\n"
        "    def call(self, x):\n"
        "        return self.dense(x) + self.helper(x)\n"
        "block = Block(3)\n"
        "block.get_config()\n"
    )
    assert used["keras.Sequential.compile"] == {"optimizer", "loss"}  # members are named on the class used
    assert used["keras.Sequential.fit"] == {"epochs"}
    assert used["tf.data.Dataset.from_tensor_slices"] == set()
    assert used["tf.data.Dataset.shuffle"] == set()
    assert used["tf.data.Dataset.batch"] == {"drop_remainder"}
    assert "tf.GradientTape.gradient" in used
    assert "keras.Sequential.trainable_variables" in used
    assert used["keras.layers.Layer"] == {"name"}  # super().__init__ calls TF's constructor
    assert used["keras.layers.Layer.add_weight"] == {"shape", "initializer"}
    assert "keras.layers.Layer.get_config" in used  # Block(3) is a Layer
    assert not any(name.endswith((".dense", ".helper", ".w")) for name in used)  # our own attributes


def test_rebinding_a_name_forgets_it():
    used = _used("import tensorflow as tf\nlayers = [1, 2]\nlayers.append(3)\nfrom tensorflow.keras import layers\n"
                 "layers.Dense(1)\n")
    assert "keras.layers.Dense" in used and "keras.layers.append" not in used


def _write(folder, name: str, text: str) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "markdown", "source": ["# title"]}]
                       + [{"cell_type": "code", "source": cell.splitlines(keepends=True)} for cell in cells]})


def test_notebook_cells_drop_shell_and_magic_lines():
    cells = names_tool.notebook_cells(_notebook("!pip install x\n%matplotlib inline\nimport tensorflow as tf",
                                                "%%bash\necho hi", "x = tf.ones(3)"))
    assert cells == ["import tensorflow as tf", "x = tf.ones(3)"]


def test_measure_reports_figures_and_rankings(tmp_path):
    _write(tmp_path, "a/ok.py", "from tensorflow import keras\nm = keras.Sequential([keras.layers.Dense(2)])\n"
                                "m.compile(loss='mse')\nprint(keras.__version__)\n"
                                "d = keras.layers.Dense(1)\nd.kernel\n")  # set in build: an instance attribute
    _write(tmp_path, "a/lite.py", "import tensorflow as tf\nc = tf.lite.TFLiteConverter(None)\n"
                                  "c = tf.lite.TFLiteConverter.from_keras_model(m)\ntf.this_is_not_tf_api(1)\n")
    _write(tmp_path, "b/nb.ipynb", _notebook("!pip install tensorflow\nimport tensorflow as tf",
                                             "def broken(:\n    pass", "conv = tf.lite.TFLiteConverter(None)"))
    _write(tmp_path, "b/tf1.py", "import tensorflow as tf\nx = tf.placeholder(tf.float32)\n"
                                 "with tf.compat.v1.Session() as s:\n    pass\n")
    _write(tmp_path, "b/numpy_only.py", "import numpy as np\nnp.ones(3)\n")
    figures = coverage.measure(coverage.find_scripts([str(tmp_path)]), str(tmp_path))
    assert figures["files"] == 5
    assert figures["tf2_scripts"] == 3 and figures["tf1_scripts"] == 1 and figures["no_tf_scripts"] == 1
    assert figures["unparsed_parts"] == 1
    assert sorted(figures["tf1"]["b/tf1.py"]) == ["tf.compat.v1.Session", "tf.placeholder"]
    missing = dict(figures["missing"])
    assert missing["tf.lite.TFLiteConverter"] == 2  # ranked by the scripts using it
    assert figures["missing"][0] == ("tf.lite.TFLiteConverter", 2)
    assert dict(figures["not_tf_api"]) == {"tf.this_is_not_tf_api": 1}
    assert figures["per_script"]["a/ok.py"]["missing"] == []
    assert figures["per_script"]["a/ok.py"]["names"] == 5  # Sequential, its compile, Dense, its kernel, __version__
    assert figures["scripts_all_found"] == 1  # only a/ok.py: the other two use tf.lite
    assert figures["distinct_found"] + len(figures["missing"]) == figures["distinct_names"]
    text = coverage.render(figures, 5)
    assert "scripts whose TF names all resolve: 1/3 (33.3%)" in text


def test_signature_deviation_and_refused_keyword_are_reported(tmp_path):
    deviations = [line.split("|")[0].strip() for line in
                  open(os.path.join(os.path.dirname(__file__), "signature_deviations.txt"), encoding="utf-8")
                  if line.strip() and not line.startswith("#")]
    # a function, else a class, whose signature still deviates (its listing keeps shrinking)
    function = next(n for kind in ("function", "class") for n in deviations
                    if coverage.am.entry(n) and coverage.am.entry(n)[0] == kind and "unreadable" not in n
                    and n != "tf.Tensor")
    module, _, leaf = function.rpartition(".")
    root = "import tensorflow as tf\n" if module.startswith("tf") else "import keras\n"
    _write(tmp_path, "s.py", f"{root}{module}.{leaf}\n")
    figures = coverage.measure(coverage.find_scripts([str(tmp_path)]))
    assert dict(figures["signature"]) == {coverage._key(function): 1}
    assert figures["scripts_all_found"] == 1 and figures["scripts_all_exact"] == 0
    # keywords: refused only when TF takes the keyword (by name or **kwargs) and ours takes neither
    assert coverage.keywords_refused("(x, axis=None, name=None)", "(x, axis=None)", {"name", "axis"}) == ["name"]
    assert coverage.keywords_refused("(x, **kwargs)", "(x)", {"k"}) == ["k"]
    assert coverage.keywords_refused("(x, name=None)", "(x, **kwargs)", {"name"}) == []
    assert coverage.keywords_refused("(x)", "(x)", {"typo"}) == []  # TF refuses it too: the script's error
    assert coverage.keywords_refused(None, "(x)", {"k"}) == []


def test_corpus_listing_parses_and_refuses_a_pattern_without_source(tmp_path):
    sources = corpus.read_listing()
    assert sources and all(len(commit) == 40 and patterns for _, commit, patterns in sources)
    assert corpus.select(["a/x.py", "a/b/y.py", "a/z.md"], ["a/*.py"]) == ["a/b/y.py", "a/x.py"]
    listing = tmp_path / "listing.txt"
    listing.write_text("ex/*.py\n", encoding="utf-8")
    with pytest.raises(ValueError, match="before any"):
        corpus.read_listing(str(listing))


@pytest.mark.slow  # runs git
def test_corpus_rebuilds_from_a_mirror(tmp_path):
    repo = tmp_path / "mirrors" / "someone+scripts"
    repo.mkdir(parents=True)
    _write(repo, "ex/train.py", "import tensorflow as tf\n")
    _write(repo, "ex/notes.md", "text\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "x"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    listing = tmp_path / "listing.txt"
    listing.write_text(f"# test\n[someone/scripts {commit}]\nex/*.py\n", encoding="utf-8")
    counts = corpus.rebuild(str(tmp_path / "out"), str(tmp_path / "mirrors"), str(listing))
    assert counts == {"someone/scripts": 1}
    assert (tmp_path / "out" / "someone+scripts" / "ex" / "train.py").read_text() == "import tensorflow as tf\n"
    assert not (tmp_path / "out" / "someone+scripts" / "ex" / "notes.md").exists()
