"""Coverage of held-out real TF/Keras scripts: every TF/Keras name (and keyword argument) that the .py and .ipynb
files under some folders use, checked against TF 2.21 / Keras 3.15 and against torchstrategy (issue 21).

Run `python tools/script_coverage.py FOLDER [FOLDER ...] [--top N] [--json OUT]`. Scripts are parsed, never run
(tools/script_names.py). For each used name: is it TF 2.21 API (the manifest), does it resolve here after
`tensorflow` -> `torchstrategy` and `keras` -> `torchstrategy.keras`, with TF's signature, and are the keyword
arguments the script passes accepted? Scripts on TF1 API (tf.compat.v1, sessions, tf.estimator, tf.contrib) are
counted apart, as are files that use no TF. tools/script_corpus.txt lists the held-out corpus measured so far.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _where in (ROOT, os.path.join(ROOT, "tools")):
    if _where not in sys.path:
        sys.path.insert(0, _where)

import api_coverage  # noqa: E402
import script_names  # noqa: E402
from torchstrategy._machinery import api_manifest as am  # noqa: E402

# Calls whose result is known to be an instance of a TF class (classes themselves are handled generally).
_RETURNS = {
    "keras.models.load_model": "keras.Model", "keras.saving.load_model": "keras.Model",
    "keras.models.clone_model": "keras.Model", "keras.models.model_from_json": "keras.Model",
    "keras.Model.fit": "keras.callbacks.History",
    "keras.utils.image_dataset_from_directory": "tf.data.Dataset",
    "keras.utils.text_dataset_from_directory": "tf.data.Dataset",
    "keras.utils.timeseries_dataset_from_array": "tf.data.Dataset",
    "keras.utils.audio_dataset_from_directory": "tf.data.Dataset",
    "keras.preprocessing.image_dataset_from_directory": "tf.data.Dataset",
    "keras.preprocessing.text_dataset_from_directory": "tf.data.Dataset",
    "keras.preprocessing.timeseries_dataset_from_array": "tf.data.Dataset",
}
# tf.data.Dataset members that return a Dataset (the rest return something else: cardinality, iterators ...).
_DATASET_OPS = {
    "apply", "batch", "bucket_by_sequence_length", "cache", "choose_from_datasets", "concatenate", "counter",
    "enumerate", "filter", "flat_map", "from_generator", "from_tensor_slices", "from_tensors", "group_by_window",
    "ignore_errors", "interleave", "list_files", "load", "map", "padded_batch", "prefetch", "ragged_batch",
    "random", "range", "rebatch", "rejection_resample", "repeat", "sample_from_datasets", "scan", "shard",
    "shuffle", "skip", "snapshot", "sparse_batch", "take", "take_while", "unbatch", "unique", "window",
    "with_options", "zip",
}
_TF1_PREFIXES = ("tf.compat.v1", "tf.estimator", "tf.contrib", "tf.Session", "tf.placeholder")
# Module attributes scripts read that the manifest (public names only) does not list.
_MODULE_DUNDERS = ("__version__",)


def _key(path: str) -> str:
    """One spelling per name: `tf.keras.X` is `keras.X` (the same objects in TF and here)."""
    return "keras" + path[len("tf.keras"):] if path == "tf.keras" or path.startswith("tf.keras.") else path


class ManifestFacts:
    """Answers tools/script_names.py's questions about TF's API from the frozen manifest."""

    def is_name(self, path: str) -> bool:
        """True when `path` is a public TF/Keras name."""
        return am.entry(path) is not None

    def is_class(self, path: str) -> bool:
        """True when `path` is a TF/Keras class."""
        found = am.entry(path)
        return found is not None and found[0] == "class"

    def member_of(self, class_path: str, name: str) -> bool:
        """True when TF's class has the member `name`."""
        return api_coverage.class_member(class_path, name) is not None

    def returns(self, path: str) -> Optional[str]:
        """The TF class a call to `path` returns, when known."""
        if self.is_class(path):
            return path
        canonical = am.canonical_path(_key(path))
        if canonical in _RETURNS:
            return _RETURNS[canonical]
        if canonical.startswith("keras.applications.") and (am.entry(canonical) or [""])[0] == "function":
            return "keras.Model"
        owner, _, member = canonical.rpartition(".")
        if am.canonical_path(owner) == "tf.data.Dataset" and member in _DATASET_OPS:
            return "tf.data.Dataset"
        if member == "fit" and self.is_class(owner):
            return "keras.callbacks.History"
        return None


def classify(path: str) -> tuple:
    """(category, name, whole) for a used path: category 'api' (a TF 2.21 / Keras 3.15 name or class member),
    'tf1' (TF1-only API) or 'unknown' (not TF API: private, removed, misspelt); name is the path cut where the
    API part ends (`tf.float32.max` -> `tf.float32`: a value's attribute is not a name); whole: nothing was cut."""
    parts = _key(path).split(".")
    for cut in range(2, len(parts) + 1):  # parts[0] is the root, `tf` or `keras`
        prefix = ".".join(parts[:cut])
        found = am.entry(prefix)
        if found is None and cut == 2 and parts[1] in _MODULE_DUNDERS:
            return "api", prefix, cut == len(parts)
        if found is None:
            return _not_api(prefix) + (cut == len(parts),)
        if found[0] in ("function", "constant"):
            return "api", prefix, cut == len(parts)
        if found[0] == "class" and cut < len(parts):
            known = api_coverage.class_member(prefix, parts[cut]) is not None
            return "api" if known else "unknown", f"{prefix}.{parts[cut]}", cut + 1 == len(parts)
    return "api", ".".join(parts), True


def _not_api(prefix: str) -> tuple:
    if prefix.startswith(_TF1_PREFIXES):
        return "tf1", prefix
    if prefix.startswith("tf.") and am.entry("tf.compat.v1." + prefix[3:]) is not None:
        return "tf1", prefix
    return "unknown", prefix


@dataclass
class NameStatus:
    """What torchstrategy does with one used name, and with the keywords scripts pass to it."""

    found: bool
    signature_ok: bool
    keywords_missing: List[str] = field(default_factory=list)


def check(name: str, keywords: set) -> NameStatus:
    """Checks one API name here: found, TF's signature, and which of `keywords` (that TF accepts) ours does not."""
    if name.rpartition(".")[2] in _MODULE_DUNDERS:
        return NameStatus(api_coverage.resolves(name), True)
    result = api_coverage.check_name(name)
    if not result.found:
        return NameStatus(False, False)
    return NameStatus(True, result.signature_ok, keywords_refused(result.expected, result.actual, keywords))


def keywords_refused(expected: Optional[str], actual: Optional[str], keywords: set) -> List[str]:
    """The keywords that TF's signature `expected` accepts (by name or **kwargs) and ours, `actual`, does not;
    nothing when either signature is unknown."""
    wanted, have = api_coverage.parameters(expected), api_coverage.parameters(actual)
    if wanted is None or have is None:
        return []
    return sorted(k for k in keywords if (k in wanted[0] or wanted[1]) and k not in have[0] and not have[1])


def find_scripts(folders: List[str]) -> List[str]:
    """Every .py and .ipynb file under `folders`, sorted."""
    found = []
    for folder in folders:
        if not os.path.isdir(folder):
            raise SystemExit(f"script_coverage: {folder} is not a folder (give folders of .py / .ipynb files)")
        for where, _, files in os.walk(folder):
            found += [os.path.join(where, f) for f in files if f.endswith((".py", ".ipynb"))]
    return sorted(found)


def measure(files: List[str], base: str = "") -> dict:
    """The coverage figures and rankings for `files` (paths shown relative to `base`)."""
    facts = ManifestFacts()
    scripts, passed = {}, {}
    for filename in files:
        with open(filename, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        used = script_names.collect(script_names.script_sources(filename, text), facts)
        names: Dict[str, Dict[str, set]] = {"api": {}, "tf1": {}, "unknown": {}}
        for path, keywords in used.names.items():
            if _key(path) in ("tf", "keras"):
                continue  # `import tensorflow as tf` alone is no name
            category, name, whole = classify(path)
            category = "tf1" if name.startswith("tf.compat.v1") else category
            names[category].setdefault(name, set()).update(keywords if whole else ())
        scripts[os.path.relpath(filename, base) if base else filename] = (names, used)
    report = {"files": len(files), "no_tf": [], "tf1": {}, "unparsed_parts": 0, "scripts": {}}
    for script, (names, used) in scripts.items():
        report["unparsed_parts"] += used.unparsed_parts
        if not names["api"] and not names["tf1"] and not names["unknown"]:
            report["no_tf"].append(script)
        elif names["tf1"]:
            report["tf1"][script] = sorted(names["tf1"])
        else:
            report["scripts"][script] = names
            for name, keywords in names["api"].items():
                passed.setdefault(name, set()).update(keywords)
    statuses = {name: check(name, keywords) for name, keywords in passed.items()}
    return _figures(report, statuses)


def _figures(report: dict, statuses: Dict[str, NameStatus]) -> dict:
    scripts = report.pop("scripts")
    uses: Dict[str, List[str]] = {}
    unknown: Dict[str, List[str]] = {}
    keyword_uses: Dict[str, List[str]] = {}
    all_found = all_exact = 0
    per_script = {}
    for script, names in scripts.items():
        missing = [n for n in names["api"] if not statuses[n].found]
        inexact = [n for n in names["api"] if statuses[n].found and not statuses[n].signature_ok]
        bad_keywords = [f"{n}({k}=)" for n, kws in names["api"].items() if statuses[n].found
                        for k in sorted(kws) if k in statuses[n].keywords_missing]
        all_found += not missing
        all_exact += not missing and not inexact and not bad_keywords
        per_script[script] = {"names": len(names["api"]), "missing": sorted(missing), "signature": sorted(inexact),
                              "keywords": bad_keywords, "not_tf_api": sorted(names["unknown"])}
        for name in names["api"]:
            uses.setdefault(name, []).append(script)
        for name in names["unknown"]:
            unknown.setdefault(name, []).append(script)
        for item in bad_keywords:
            keyword_uses.setdefault(item, []).append(script)
    count = len(scripts)
    distinct = len(uses)
    found = sum(1 for n in uses if statuses[n].found)
    exact = sum(1 for n in uses if statuses[n].found and statuses[n].signature_ok)
    pairs = sum(len(s) for s in uses.values())
    found_pairs = sum(len(s) for n, s in uses.items() if statuses[n].found)

    def ranked(table: Dict[str, List[str]], keep) -> list:
        rows = [(name, len(users)) for name, users in table.items() if keep(name)]
        return sorted(rows, key=lambda row: (-row[1], row[0]))

    return {
        "files": report["files"], "tf2_scripts": count, "no_tf_scripts": len(report["no_tf"]),
        "tf1_scripts": len(report["tf1"]), "unparsed_parts": report["unparsed_parts"],
        "scripts_all_found": all_found, "scripts_all_exact": all_exact,
        "distinct_names": distinct, "distinct_found": found, "distinct_exact": exact,
        "uses": pairs, "uses_found": found_pairs,
        "missing": ranked(uses, lambda n: not statuses[n].found),
        "signature": ranked(uses, lambda n: statuses[n].found and not statuses[n].signature_ok),
        "keywords": ranked(keyword_uses, lambda n: True),
        "not_tf_api": ranked(unknown, lambda n: True),
        "tf1": report["tf1"], "per_script": per_script,
    }


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


def render(figures: dict, top: int) -> str:
    """The figures and the top `top` rows of each ranking, as text."""
    f = figures
    lines = [
        f"files: {f['files']}; TF2/Keras scripts measured: {f['tf2_scripts']}; TF1-API scripts (set apart): "
        f"{f['tf1_scripts']}; no TF use: {f['no_tf_scripts']}; cells/files that did not parse: {f['unparsed_parts']}",
        f"scripts whose TF names all resolve: {f['scripts_all_found']}/{f['tf2_scripts']} "
        f"({_percent(f['scripts_all_found'], f['tf2_scripts'])}); and all with TF's signature and keywords: "
        f"{f['scripts_all_exact']} ({_percent(f['scripts_all_exact'], f['tf2_scripts'])})",
        f"distinct names resolved: {f['distinct_found']}/{f['distinct_names']} "
        f"({_percent(f['distinct_found'], f['distinct_names'])}); with TF's signature: {f['distinct_exact']} "
        f"({_percent(f['distinct_exact'], f['distinct_names'])})",
        f"name uses (script x name) resolved: {f['uses_found']}/{f['uses']} ({_percent(f['uses_found'], f['uses'])})",
    ]
    for title, key in (("missing names, by scripts using them", "missing"),
                       ("resolved names whose signature differs from TF's", "signature"),
                       ("keyword arguments TF accepts and ours does not", "keywords"),
                       ("names that are not TF 2.21 / Keras 3.15 API (removed, private or misspelt)", "not_tf_api")):
        rows = f[key]
        lines.append(f"\n{title} ({len(rows)}):")
        lines += [f"{users:>5}  {name}" for name, users in rows[:top]]
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", help="folders of .py / .ipynb scripts")
    parser.add_argument("--top", type=int, default=40, help="rows shown per ranking")
    parser.add_argument("--json", help="also write every figure and ranking to this JSON file")
    args = parser.parse_args(argv)
    files = find_scripts(args.folders)
    base = os.path.commonpath([os.path.abspath(f) for f in args.folders]) if len(args.folders) > 1 else args.folders[0]
    figures = measure(files, base)
    print(render(figures, args.top))
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=1, sort_keys=True)
        os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
