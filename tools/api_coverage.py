"""TF 2.21 / Keras 3.15 API coverage of torchstrategy: which manifest names resolve at the same path in
`torchstrategy` / `torchstrategy.keras`, and which of those have TF's signature (names, order, kinds, defaults).

Run `python tools/api_coverage.py [--mismatches] [--write-deviations]`. tests/api/test_signatures.py calls
`analyze()` in-process (the manifest is torchstrategy/_machinery/tf_api_manifest.json.gz; TF is never imported).

Checked for every implemented function and class: the call signature; for classes also the methods,
classmethods, staticmethods and properties TF's class defines (a member TF's class inherits from a public
base is checked on that base, and on our class only where our class overrides it). A member our class lacks
is counted as missing, not as a deviation. tf.compat (v1 too) is names-only in the manifest. A class TF shows under
two names (tnp.ndarray is tf.Tensor) that is one object here deviates once: at its home name.
"""
from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from torchstrategy._machinery import api_manifest as am  # noqa: E402

DEVIATIONS = os.path.join(ROOT, "tests", "api", "signature_deviations.txt")
_MISSING = object()


@dataclass
class Report:
    """What analyze() found: per-namespace counts and the signature mismatches (path -> (expected, actual))."""

    totals: dict = field(default_factory=dict)  # namespace -> [total, implemented, matching]
    mismatches: dict = field(default_factory=dict)
    members_missing: int = 0
    members_checked: int = 0


def resolve(path: str):
    """Our object at a TF/Keras path, or _MISSING (never raises for a missing name)."""
    import torchstrategy

    parts = path.split(".")
    obj = torchstrategy.keras if parts[0] == "keras" else torchstrategy
    for part in parts[1:]:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return _MISSING
        except Exception:  # noqa: BLE001 - a namespace that fails to import counts as missing
            return _MISSING
    return obj


def resolves(path: str) -> bool:
    """True when `path` (`tf.__version__`, `keras.layers.Dense`) names an object in torchstrategy."""
    return resolve(path) is not _MISSING


def _ours_member(klass, name: str):
    """(kind, signature text) of our class's member, or None when our class lacks it."""
    try:
        raw = inspect.getattr_static(klass, name)
    except AttributeError:
        return None
    kind = am.canonical_member_kind(klass, name)
    if kind == "method":
        return kind, am.signature_text(raw)
    if kind in ("classmethod", "staticmethod"):
        return kind, am.signature_text(getattr(klass, name))
    return kind, None


def _without_private(text: str | None) -> str | None:
    """Drops our private optional parameters (`_relu=False`): internal hooks, invisible to TF callers."""
    if text is None:
        return None
    parts = _split(text[1:-1])
    kept = [p for p in parts if not (p.startswith("_") and not p.startswith("__") and "=" in p)]  # dunders are API
    return text if len(kept) == len(parts) else "(" + ", ".join(kept) + ")"


def _split(inner: str) -> list:
    """Top-level comma-separated parts of a parameter list (commas inside brackets or quotes stay)."""
    out, depth, current, quote, escaped = [], 0, "", None, False
    for ch in inner:
        if quote:
            escaped = ch == "\\" and not escaped
            if ch == quote and not escaped:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0 and quote is None:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return out


def _same(expected: str | None, actual: str | None) -> bool:
    return expected is None or am.comparable(expected) == am.comparable(_without_private(actual))


def _member_mismatch(expected: list, ours) -> tuple | None:
    """(expected, actual) when our member (kind, signature text) differs from TF's member entry, else None."""
    kind, actual = ours
    want_kind = expected[0]
    if want_kind == "attribute":
        return None
    if want_kind == "method" and expected[1] is None and kind in ("classmethod", "staticmethod"):
        return None  # TF's is a C-implemented method (protobuf's FromString): no signature to compare
    if want_kind != kind and not (want_kind == "property" and kind == "attribute"):
        return (f"{want_kind} {expected[1] if len(expected) > 1 else ''}".strip(), f"{kind} {actual or ''}".strip())
    if want_kind in ("method", "classmethod", "staticmethod") and not _same(expected[1], actual):
        return (expected[1], actual)
    return None


def _check_member(report: Report, where: str, expected: list, ours) -> None:
    report.members_checked += 1
    mismatch = _member_mismatch(expected, ours)
    if mismatch is not None:
        report.mismatches[where] = mismatch


def _class_chain(names: dict, path: str) -> list:
    """[(path, members)] for the class at `path` and its public bases, nearest first."""
    chain = []
    while path:
        entry = names.get(path)
        if entry is None or len(entry) < 3:
            break
        info = entry[2]
        if "same" in info:
            path = info["same"]
            continue
        chain.append((path, info["members"]))
        path = info["base"]
    return chain


def _check_class(report: Report, names: dict, path: str, entry: list, ours) -> None:
    if not _same(entry[1], am.signature_text(ours)):
        report.mismatches[path] = (entry[1], am.signature_text(ours))
    if len(entry) < 3 or "same" in entry[2]:
        return
    chain = _class_chain(names, path)
    own = chain[0][1]
    for name, expected in own.items():
        mine = _ours_member(ours, name)
        if mine is None:
            report.members_missing += 1
            continue
        _check_member(report, f"{path}.{name}", expected, mine)
    for base_path, members in chain[1:]:
        base = resolve(base_path)
        for name, expected in members.items():
            if name in own:
                continue
            mine = _ours_member(ours, name)
            if mine is None or base is _MISSING:
                continue
            try:
                if inspect.getattr_static(base, name) is inspect.getattr_static(ours, name):
                    continue  # inherited from our base: checked there
            except AttributeError:
                pass
            _check_member(report, f"{path}.{name}", expected, mine)
        own = {**members, **own}


def analyze() -> Report:
    """Resolves every manifest name in torchstrategy and compares signatures (no TF import)."""
    report = Report()
    names = am.load()["names"]
    aliases = []  # (path, home path): TF names one class twice and ours is the very object at the home path
    for path, entry in names.items():
        namespace = path.rsplit(".", 1)[0]
        counts = report.totals.setdefault(namespace, [0, 0, 0])
        counts[0] += 1
        if len(entry) == 1 and entry[0] != "module" and path.startswith("tf.compat"):
            if resolve(path) is not _MISSING:
                counts[1] += 1
                counts[2] += 1
            continue
        ours = resolve(path)
        if ours is _MISSING:
            continue
        counts[1] += 1
        before = len(report.mismatches)
        kind = entry[0]
        if kind == "function" and entry[1] is not None:
            actual = am.signature_text(ours)
            if not _same(entry[1], actual):
                report.mismatches[path] = (entry[1], actual)
        elif kind == "class":
            home = entry[2].get("same") if len(entry) > 2 else None
            if home is not None and resolve(home) is ours:
                aliases.append((path, home))
            if inspect.isclass(ours):
                _check_class(report, names, path, entry, ours)
            elif not _same(entry[1], am.signature_text(ours)):
                report.mismatches[path] = (entry[1], am.signature_text(ours))
        if len(report.mismatches) == before:
            counts[2] += 1
    for path, home in aliases:  # one object, one deviation: listed (and counted as such) at its home name only
        if path in report.mismatches and home in report.mismatches:
            del report.mismatches[path]
    return report


def class_member(class_path: str, name: str) -> tuple | None:
    """(defining class path, TF's entry [kind, signature?]) for member `name` of the class at `class_path`: the
    nearest class along its public bases that defines it (`keras.Sequential`, `fit` -> `keras.Model`); None when
    TF's class has no such member."""
    names = am.load()["names"]
    for owner, members in _class_chain(names, am.canonical_path(class_path)):
        if name in members:
            return owner, members[name]
    return None


@dataclass
class NameCheck:
    """How one TF name (or `Class.member`) fares here: found, with TF's signature, and both signature texts."""

    found: bool
    signature_ok: bool = False
    expected: str | None = None
    actual: str | None = None


def check_name(path: str) -> NameCheck:
    """Resolves one manifest name (`keras.layers.Dense`) or class member (`keras.Model.fit`) in torchstrategy
    and compares its signature with TF's (a class by its constructor)."""
    found = am.entry(path)
    if found is not None:
        ours = resolve(path)
        if ours is _MISSING:
            return NameCheck(False)
        if found[0] not in ("function", "class") or len(found) < 2:  # tf.compat's entries are names only
            return NameCheck(True, True)
        actual = am.signature_text(ours)
        return NameCheck(True, _same(found[1], actual), found[1], actual)
    class_path, _, name = path.rpartition(".")
    member = class_member(class_path, name)
    if member is None:
        raise ValueError(f"{path} is neither a TF 2.21 / Keras 3.15 name nor a member of one of TF's classes")
    expected = member[1]
    klass = resolve(class_path)
    if klass is _MISSING or not inspect.isclass(klass):
        return NameCheck(False)
    ours = _ours_member(klass, name)
    if ours is None and expected[0] in ("property", "attribute") and _sets_attribute(klass, name):
        return NameCheck(True, True)  # an attribute our instances get in __init__ or build
    if ours is None:
        return NameCheck(False)
    mismatch = _member_mismatch(expected, ours)
    wanted = expected[1] if len(expected) > 1 else None
    return NameCheck(True, mismatch is None, wanted, ours[1])


def _sets_attribute(klass, name: str) -> bool:
    """True when a method of our class or of one of its bases assigns `self.<name>` (read from the source)."""
    pattern = re.compile(rf"\bself\.{re.escape(name)}\s*(:[^=\n]*)?=(?!=)")
    for owner in klass.__mro__:
        if owner is object or not owner.__module__.startswith("torchstrategy"):
            continue
        try:
            source = inspect.getsource(owner)
        except (OSError, TypeError):
            continue
        if pattern.search(source):
            return True
    return False


def parameters(signature: str | None) -> tuple[set, bool] | None:
    """(parameter names, takes **kwargs) of a signature text, or None when the text is unknown."""
    if signature is None or not signature.startswith("("):
        return None
    names, var_keyword = set(), False
    for part in _split(am.comparable(signature)[1:-1]):
        name = part.split("=", 1)[0].strip()
        if name.startswith("**"):
            var_keyword = True
        elif not name.startswith("*") and name != "/":
            names.add(name)
    return names, var_keyword


def explain(expected: str | None, actual: str | None) -> str:
    """A one-line account of how `actual` differs from `expected` (for the deviations file)."""
    if actual is None:
        return "signature unreadable"
    if expected is None or not expected.startswith("(") or not actual.startswith("("):
        return f"kind: want {expected}, have {actual}"

    def params(text: str) -> dict:
        return {p.split("=", 1)[0]: (p.split("=", 1)[1] if "=" in p else "no default") for p in _split(text[1:-1])}

    want, have = params(am.comparable(expected)), params(am.comparable(_without_private(actual)))
    notes = []
    missing = [p for p in want if p not in have and p not in ("*", "/")]
    extra = [p for p in have if p not in want and p not in ("*", "/")]
    if missing:
        notes.append("missing " + ", ".join(missing))
    if extra:
        notes.append("extra " + ", ".join(extra))
    for name in want:
        if name in have and want[name] != have[name]:
            notes.append(f"default {name}: want {want[name]}, have {have[name]}")
    if not notes:
        notes.append("order or kinds differ: want " + expected)
    return "; ".join(notes)


def read_deviations(path: str = DEVIATIONS) -> dict:
    """{name: reason} from the deviations file (`name | reason` lines; # comments)."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, reason = line.partition("|")
                out[name.strip()] = reason.strip()
    return out


def write_deviations(report: Report, path: str = DEVIATIONS) -> None:
    """Writes the current mismatches as the deviations list (atomically)."""
    lines = ["# TF/Keras names we implement whose signature still differs from TF 2.21 / Keras 3.15.",
             "# tests/api/test_signatures.py fails on an unlisted deviation and on a listed name that no",
             "# longer deviates: this list only shrinks. Format: name | how it differs.", ""]
    for name in sorted(report.mismatches):
        lines.append(f"{name} | {explain(*report.mismatches[name])}")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def table(report: Report) -> str:
    """Per top-level namespace: implemented / total names, and how many implemented match TF's signature."""
    groups: dict = {}
    for namespace, (total, implemented, matching) in report.totals.items():
        parts = namespace.split(".")
        key = ".".join(parts[:2]) if len(parts) > 1 else parts[0]
        row = groups.setdefault(key, [0, 0, 0])
        row[0] += total
        row[1] += implemented
        row[2] += matching
    lines = [f"{'namespace':<28}{'implemented':>12}{'total':>8}{'signature ok':>14}"]
    for key in sorted(groups):
        total, implemented, matching = groups[key]
        lines.append(f"{key:<28}{implemented:>12}{total:>8}{matching:>14}")
    for library in ("tf", "keras"):
        rows = [v for k, v in groups.items() if k.split(".")[0] == library]
        lines.append(f"{'ALL ' + library + '.*':<28}{sum(r[1] for r in rows):>12}{sum(r[0] for r in rows):>8}"
                     f"{sum(r[2] for r in rows):>14}")
    core = [v for k, v in groups.items() if k.split(".")[0] == "tf" and k not in ("tf.compat", "tf.raw_ops")]
    lines.append(f"{'tf.* w/o compat, raw_ops':<28}{sum(r[1] for r in core):>12}{sum(r[0] for r in core):>8}"
                 f"{sum(r[2] for r in core):>14}")
    lines.append(f"class members checked: {report.members_checked}, missing on implemented classes: "
                 f"{report.members_missing}; signature mismatches: {len(report.mismatches)}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mismatches", action="store_true", help="list each mismatch: expected vs actual")
    parser.add_argument("--write-deviations", action="store_true", help=f"rewrite {DEVIATIONS}")
    args = parser.parse_args()
    report = analyze()
    print(table(report))
    if args.mismatches:
        for name in sorted(report.mismatches):
            expected, actual = report.mismatches[name]
            print(f"{name}\n    TF:   {expected}\n    ours: {actual}")
    if args.write_deviations:
        write_deviations(report)


if __name__ == "__main__":
    main()
