"""Architecture report for the torchstrategy package: import map, cycles and upward imports between
packages, getattr/hasattr probes on strategies and their parts, and private names used across modules.

Run `python tools/architecture.py [--json] [--root DIR]`; stdlib only, reads the sources with `ast`
(nothing is imported). tests/test_architecture.py runs `analyze()` in-process and holds the line.

Granularity ("units" in the import map). Each top-level subpackage is one unit (keras with all its
subpackages, data, checkpoint, io, cluster, launch, distribute), except distribute/parts, which
DESIGN.md draws as its own layer under the strategies, and tf.distribute's value types
(distribute/values.py, distribute/partitioners.py: PerReplica, ReduceOp, contexts, partitioners), which
import nothing of distribute and sit under the parts that use them. The modules at the package root are split by
what they are, because one "torchstrategy" node would mix the top and the bottom of the stack:

    torchstrategy   the root namespace facades (__init__, config, saved_model, train, tpu, profiler, compat,
                    _experimental): they reach into the subpackages for one TF namespace each
    tensor_ops      the tensor-level TF namespaces everybody uses (dtypes, math_ops, array_ops, ops,
                    nest, errors, nn, image, linalg, random, sparse, strings, tape, variables, ...)
    _context        the process-wide state (strategy stack, dtype policy, distribution)
    machinery       the _machinery package (lazy namespaces, protobuf wire format, FarmHash, host memory,
                    the CPU kernels); _tensor_convert (TF's conversion rules, raising tf.errors), the
                    math package (tf.math) and experimental_numpy (tf.experimental.numpy) are tensor_ops

Layer order, top to bottom (an import from a unit to one of a HIGHER rank is "upward"; imports
within one rank are allowed as long as they make no cycle). This is DESIGN.md's picture, adjusted
where the code shows the arrows: keras and distribute use the root facades (tf.saved_model,
tf.config), so those sit under them; the machinery and everything else read the environment through
cluster/environment.py (the only os.environ reader), so cluster sits under the machinery, and
_context, which imports nothing at import time, is the floor.

   11 namespace (the package's __init__: tf.* over every subpackage)
   10 keras
    9 distribute
    8 distribute.parts
    7 distribute.values
    6 torchstrategy (root facades), summary (tf.summary: uses tf.profiler, tf.image, tf.audio), test (tf.test)
    5 checkpoint, data, formats
    4 io
    3 tensor_ops
    2 launch, machinery
    1 cluster
    0 _context

Imports inside functions (deferred imports) count like module-level ones; the lazy attribute
tables (`lazy_namespace`, importlib calls on strings) are not imports and are not counted.

Probes: `getattr(x, ...)` / `hasattr(x, ...)` where x names a strategy or a strategy part, by name:
the expression's last identifier contains "strateg", or is one of PART_NAMES (with or without a
leading underscore). A heuristic: every hit is printed so a reader can judge it.

Private names. A "package" here is the top-level subpackage (keras.layers belongs to keras,
distribute.parts to distribute; the root modules are package "torchstrategy"). Reported:
  * `from torchstrategy.x import _name` / `from torchstrategy.x._mod import name` /
    `import torchstrategy.x._mod`: the first underscore component of the target;
  * `mod._name` where `mod` is bound (anywhere in the file) to an imported torchstrategy module.
Importing a private module of one's own package is fine (not reported). _context and the machinery
modules are the shared bottom of the stack: importing them is fine for everyone, but using their
underscore names from another package is a cross-package private use. Cross-package uses break the
rule ("private names stay inside their package"); within-package uses are reported only.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from typing import Optional

PACKAGE = "torchstrategy"

#: Root modules that are facades for one TF namespace and reach into the subpackages.
ROOT_FACADES = {"torchstrategy", "config", "saved_model", "train", "tpu", "profiler", "_experimental", "compat"}
#: Root modules that are shared machinery (underscore names other than _context).
MACHINERY = {"_machinery"}
#: Private root modules of the tensor ops (TF's conversion and dtype rules, raising tf.errors): unit tensor_ops
TENSOR_SUPPORT = {"_tensor_convert"}
#: Subpackages that are tensor-level TF namespaces (tf.math): unit tensor_ops, like the root ones
TENSOR_PACKAGES = {"math", "image"}
#: Private root modules that any package may import (their underscore names stay private).
SHARED_PRIVATE_MODULES = {"_context"} | MACHINERY | TENSOR_SUPPORT

#: tf.distribute's value types, below the parts that use them
_DISTRIBUTE_VALUE_MODULES = {"values", "partitioners"}
#: tf.ragged is a tensor-level namespace package too (RaggedTensor and its ops, used by tf.math and tf.data), and so
#: are tf.experimental.numpy (NumPy's functions on torch tensors), tf.lookup (tables over tensors), tf.linalg and tf.nn
TENSOR_PACKAGES |= {"ragged", "experimental_numpy", "lookup", "linalg", "nn"}
#: tf.quantization (fake quantisation, quantize/dequantize on tensors) is one too
TENSOR_PACKAGES |= {"quantization"}

#: Unit -> rank; higher ranks sit higher in the stack.
LAYERS = {
    "namespace": 11,
    "keras": 10,
    "distribute": 9,
    "distribute.parts": 8,
    "distribute.values": 7,
    "torchstrategy": 6,
    "summary": 6,
    "test": 6,
    "checkpoint": 5,
    "formats": 5,
    "data": 5,
    "io": 4,
    "tensor_ops": 3,
    "launch": 2,
    "machinery": 2,
    "cluster": 1,
    "_context": 0,
}

#: Last identifiers that name a strategy part (a leading underscore is ignored).
PART_NAMES = {"collectives", "replication", "precision", "placement", "checkpoint_io", "launcher", "stepping",
              "sharding", "variable_store", "variable_registry", "part", "parts", "extended"}


@dataclass
class Edge:
    """One import statement from a module of one unit to a module of another."""
    file: str
    line: int
    source: str  # unit
    target: str  # unit
    module: str  # imported module, relative to the package ("distribute.default")
    deferred: bool  # inside a function
    type_only: bool = False  # under `if TYPE_CHECKING:` (listed, but left out of cycles and upward imports)


@dataclass
class Probe:
    """One getattr/hasattr on a strategy or a strategy part."""
    file: str
    line: int
    call: str  # source text of the call, shortened


@dataclass
class PrivateUse:
    """One use of another module's underscore name."""
    file: str
    line: int
    name: str  # relative to the package: "checkpoint._sync", "_context._enter_strategy"
    cross_package: bool

    @property
    def key(self) -> str:
        return f"{self.file}: {self.name}"


@dataclass
class Report:
    """Everything the analyzer found; `summary()` gives the figures."""
    import_map: dict = field(default_factory=dict)  # "a -> b": number of import statements
    edges: list = field(default_factory=list)
    cycles: list = field(default_factory=list)  # sorted unit lists, one per strongly connected component
    upward: list = field(default_factory=list)
    probes: list = field(default_factory=list)
    private: list = field(default_factory=list)
    # Namespace facades: modules that only name what lives elsewhere (no def or class of their own)
    facades: list = field(default_factory=list)
    # Public class name -> the modules defining it, for names defined in more than one module
    duplicate_classes: dict = field(default_factory=dict)

    def cross_package_private(self) -> list:
        """The cross-package private uses, one per (file, name)."""
        return _unique([use for use in self.private if use.cross_package])

    def within_package_private(self) -> list:
        """The within-package private uses, one per (file, name)."""
        return _unique([use for use in self.private if not use.cross_package])

    def summary(self) -> dict:
        """The headline figures."""
        return {"cycles": len(self.cycles), "upward_imports": len(self.upward), "probes": len(self.probes),
                "cross_package_private_uses": len(self.cross_package_private()),
                "within_package_private_uses": len(self.within_package_private())}


def _unique(uses: list) -> list:
    seen: dict = {}
    for use in uses:
        seen.setdefault(use.key, use)
    return sorted(seen.values(), key=lambda use: use.key)


# ----------------------------------------------------------------------------------------------- modules

def _module_table(root: str) -> dict:
    """Dotted module name -> file path, for every .py file under the package directory."""
    base = os.path.dirname(root)
    table = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            parts = os.path.relpath(path, base)[:-3].split(os.sep)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            table[".".join(parts)] = path
    return table


def unit_of(module: str) -> str:
    """The import-map unit of a dotted module name (see the module docstring)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "namespace"
    head = parts[1]
    if len(parts) == 2 and head not in _SUBPACKAGES:
        if head in ROOT_FACADES:
            return "torchstrategy"
        if head == "_context":
            return "_context"
        if head.startswith("_") and head not in TENSOR_SUPPORT:
            return "machinery"
        return "tensor_ops"
    if head in MACHINERY:
        return "machinery"
    if head in TENSOR_PACKAGES:
        return "tensor_ops"
    if head == "distribute" and len(parts) > 2 and parts[2] == "parts":
        return "distribute.parts"
    if head == "distribute" and len(parts) == 3 and parts[2] in _DISTRIBUTE_VALUE_MODULES:
        return "distribute.values"
    return head


def package_of(module: str) -> str:
    """The package that owns a module's private names: the top-level subpackage, else the root."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in _SUBPACKAGES:
        return parts[1]
    return PACKAGE


_SUBPACKAGES: set = set()


def _short(module: str) -> str:
    return module[len(PACKAGE) + 1:] if module.startswith(PACKAGE + ".") else module


# ------------------------------------------------------------------------------------------------ visitor

class _FileVisitor(ast.NodeVisitor):
    def __init__(self, module: str, path: str, rel: str, is_package: bool, modules: dict):
        self.module, self.path, self.rel, self.modules = module, path, rel, modules
        self.package = module if is_package else module.rpartition(".")[0]
        self.depth = 0
        self.type_checking = 0
        self.imports: list = []  # (line, module, deferred, type_only)
        self.private: list = []
        self.probes: list = []
        self.aliases: dict = {}  # local name -> imported torchstrategy module
        self.source = ""

    # scopes
    def visit_FunctionDef(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        guarded = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
        if not guarded:
            self.generic_visit(node)
            return
        self.visit(node.test)
        self.type_checking += 1
        for child in node.body:
            self.visit(child)
        self.type_checking -= 1
        for child in node.orelse:
            self.visit(child)

    def _add_import(self, line: int, module: str) -> None:
        entry = (line, module, self.depth > 0, self.type_checking > 0)
        if entry not in self.imports:
            self.imports.append(entry)

    # imports
    def _resolve(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = self.package.split(".")
        base = base[:len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def _existing(self, module: str) -> str:
        while module and module not in self.modules:
            module = module.rpartition(".")[0]
        return module

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] != PACKAGE:
                continue
            target = self._existing(alias.name)
            self._add_import(node.lineno, target)
            self._check_private_path(node.lineno, alias.name)
            if alias.asname:
                self.aliases[alias.asname] = target
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = self._resolve(node)
        if module.split(".")[0] != PACKAGE:
            return
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if full in self.modules:  # a submodule
                self._add_import(node.lineno, full)
                self._check_private_path(node.lineno, full)
                self.aliases[alias.asname or alias.name] = full
            else:
                self._add_import(node.lineno, self._existing(module))
                self._check_private_path(node.lineno, full)

    def _check_private_path(self, line: int, dotted: str) -> None:
        """Reports the first underscore component of `dotted` that is not the importer's own business."""
        parts = dotted.split(".")
        for i in range(1, len(parts)):
            name = parts[i]
            if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
                continue
            prefix = ".".join(parts[:i + 1])
            owner = ".".join(parts[:i])
            if prefix in self.modules:  # a private module
                if i == 1 and name in SHARED_PRIVATE_MODULES:
                    continue
                if self._inside(owner):  # a private module of the importer's own package (or below it)
                    continue
            self._add_private(line, prefix, owner)
            return

    def _inside(self, owner: str) -> bool:
        return self.module == owner or self.module.startswith(owner + ".")

    def _add_private(self, line: int, dotted: str, owner_module: str) -> None:
        if self._existing(owner_module) == self.module:
            return  # the module's own names
        cross = package_of(self._existing(owner_module) or PACKAGE) != package_of(self.module)
        self.private.append(PrivateUse(self.rel, line, _short(dotted), cross))

    # attribute access on imported modules
    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.aliases:
            name = node.attr
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                owner = self.aliases[node.value.id]
                full = f"{owner}.{name}"
                self._add_private(node.lineno, full, owner)
        self.generic_visit(node)

    # probes
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr") and node.args:
            last = _last_identifier(node.args[0])
            if last is not None and _names_strategy(last):
                text = ast.get_source_segment(self.source, node) or func.id
                text = " ".join(text.split())
                self.probes.append(Probe(self.rel, node.lineno, text[:120]))
        self.generic_visit(node)


def _last_identifier(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _names_strategy(identifier: str) -> bool:
    bare = identifier.lstrip("_").lower()
    return "strateg" in bare or bare in PART_NAMES


# ----------------------------------------------------------------------------------------------- analysis

def find_cycles(edges: list) -> list:
    """The cycles (strongly connected components, as sorted unit lists) that `edges` make;
    TYPE_CHECKING-only edges are left out."""
    graph: dict = {}
    for edge in edges:
        if not edge.type_only:
            graph.setdefault(edge.source, set()).add(edge.target)
    return _cycles(graph)


def _cycles(graph: dict) -> list:
    """Strongly connected components with more than one unit (Tarjan)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    found: list = []
    counter = [0]

    def strongconnect(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                strongconnect(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strongconnect(node)
    return sorted(found)


def analyze(root: Optional[str] = None) -> Report:
    """Analyzes the package directory `root` (default: the torchstrategy next to tools/)."""
    if root is None:
        root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), PACKAGE)
    root = os.path.abspath(root)
    _SUBPACKAGES.clear()
    _SUBPACKAGES.update(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "__init__.py")))
    modules = _module_table(root)
    report = Report()
    counts: dict = {}
    class_homes: dict = {}
    for module, path in sorted(modules.items()):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        visitor = _FileVisitor(module, path, rel, path.endswith("__init__.py"), modules)
        visitor.source = source
        visitor.visit(ast.parse(source, filename=path))
        report.probes.extend(visitor.probes)
        report.private.extend(visitor.private)
        tree_body = ast.parse(source, filename=path).body
        defined = [node for node in tree_body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
        if not defined and not rel.endswith("__init__.py"):
            report.facades.append(rel)
        for node in defined:
            if isinstance(node, ast.ClassDef) and node.name[:1].isupper():  # lowercase ones hold namespaces
                class_homes.setdefault(node.name, []).append(rel)
        src_unit = unit_of(module)
        for line, target, deferred, type_only in visitor.imports:
            dst_unit = unit_of(target)
            if not target or dst_unit == src_unit:
                continue
            edge = Edge(rel, line, src_unit, dst_unit, _short(target), deferred, type_only)
            report.edges.append(edge)
            counts[f"{src_unit} -> {dst_unit}"] = counts.get(f"{src_unit} -> {dst_unit}", 0) + 1
            if type_only:
                continue
            if LAYERS.get(dst_unit, -1) > LAYERS.get(src_unit, -1):
                report.upward.append(edge)
    report.import_map = dict(sorted(counts.items()))
    report.duplicate_classes = {name: homes for name, homes in sorted(class_homes.items()) if len(homes) > 1}
    report.cycles = find_cycles(report.edges)
    return report


# ----------------------------------------------------------------------------------------------- printing

def _print_text(report: Report) -> None:
    print("== Import map between units (import statements, deferred and TYPE_CHECKING ones included)")
    for key, count in report.import_map.items():
        print(f"  {key:40s} {count}")
    print(f"\n== Cycles between units (strongly connected components): {len(report.cycles)}")
    for component in report.cycles:
        members = set(component)
        print("  " + " <-> ".join(component))
        print("    closed by these imports (upward, or between units of one rank):")
        for edge in report.edges:
            if (edge.source in members and edge.target in members and not edge.type_only
                    and LAYERS.get(edge.target, -1) >= LAYERS.get(edge.source, -1)):
                print(f"      {edge.file}:{edge.line}  {edge.source} -> {edge.module}"
                      f"{'  (deferred)' if edge.deferred else ''}")
    print(f"\n== Upward imports (against the layer order): {len(report.upward)}")
    for edge in report.upward:
        print(f"  {edge.file}:{edge.line}  {edge.source} -> {edge.target}: {edge.module}"
              f"{'  (deferred)' if edge.deferred else ''}")
    print(f"\n== getattr/hasattr probes on strategies or strategy parts: {len(report.probes)}")
    for probe in report.probes:
        print(f"  {probe.file}:{probe.line}  {probe.call}")
    cross = report.cross_package_private()
    print(f"\n== Cross-package private uses (rule: none): {len(cross)}")
    for use in cross:
        lines = sorted({u.line for u in report.private if u.key == use.key})
        print(f"  {use.key}  (line {', '.join(map(str, lines))})")
    within = report.within_package_private()
    print(f"\n== Within-package private uses (reported only): {len(within)}")
    for use in within:
        lines = sorted({u.line for u in report.private if u.key == use.key})
        print(f"  {use.key}  (line {', '.join(map(str, lines))})")
    print("\n== Summary")
    for key, value in report.summary().items():
        print(f"  {key}: {value}")


def main(argv: Optional[list] = None) -> int:
    """Command line: prints the report (text, or JSON with --json)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--root", default=None, help="the package directory (default: ../torchstrategy)")
    args = parser.parse_args(argv)
    report = analyze(args.root)
    if args.json:
        data = asdict(report)
        data["summary"] = report.summary()
        data["cross_package_private"] = [use.key for use in report.cross_package_private()]
        data["within_package_private"] = [use.key for use in report.within_package_private()]
        json.dump(data, sys.stdout, indent=1)
        print()
    else:
        _print_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
