"""Which TF/Keras dotted names a script or notebook uses, found by parsing (never running) it: import aliases,
simple instance tracking (`model = keras.Sequential(...)`; `model.fit`), and the keyword arguments of calls.

Stdlib only. tools/script_coverage.py checks what this finds against the TF 2.21 manifest and torchstrategy.
A used name is written with TF's roots: `tf.keras.layers.Dense`, `keras.ops.sum`, `tf.data.Dataset.batch`.
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Protocol, Set

# Top-level packages that are TF or Keras themselves (other tensorflow_* packages are not TF's API).
_ROOTS = {"tensorflow": "tf", "keras": "keras"}


class Facts(Protocol):
    """What the collector asks about TF's API (tools/script_coverage.py answers from the manifest)."""

    def is_name(self, path: str) -> bool:
        """True when `path` is a public TF/Keras name (module, class, function or constant)."""

    def is_class(self, path: str) -> bool:
        """True when `path` is a TF/Keras class."""

    def member_of(self, class_path: str, name: str) -> bool:
        """True when TF's class at `class_path` (or a public base) has the member `name`."""

    def returns(self, path: str) -> Optional[str]:
        """The TF class of what calling `path` returns, when known (a class returns an instance of itself)."""


@dataclass
class ScriptNames:
    """What one script uses: {name: keyword arguments passed in calls to it}, and how many parts failed to parse."""

    names: Dict[str, Set[str]] = field(default_factory=dict)
    unparsed_parts: int = 0
    parts: int = 0


def notebook_cells(text: str) -> List[str]:
    """The code cells of a notebook's JSON, with shell (`!`) and magic (`%`) lines dropped; a cell that opens
    with a cell magic (`%%bash`, `%%writefile`) is not Python and is dropped whole."""
    cells = []
    for cell in json.loads(text).get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if source.lstrip().startswith("%%"):
            continue
        lines = [line for line in source.splitlines() if not line.lstrip().startswith(("!", "%"))]
        cells.append("\n".join(lines))
    return cells


def module_path(dotted: str) -> Optional[str]:
    """`tensorflow.keras.layers` -> `tf.keras.layers`; `keras.ops` -> `keras.ops`; None for any other package."""
    head, _, rest = dotted.partition(".")
    root = _ROOTS.get(head)
    if root is None:
        return None
    return f"{root}.{rest}" if rest else root


class _Collector(ast.NodeVisitor):
    """Walks a module in source order with one flat table of bindings (a name rebound to anything else is
    forgotten). Instance attributes are recorded only when TF's class has that member (Facts.member_of), so
    `self.dense1` in a Layer subclass is not a TF name."""

    def __init__(self, facts: "Facts"):
        self.facts = facts
        self.paths: Dict[str, str] = {}       # local name -> TF path (module, class, function)
        self.instances: Dict[str, str] = {}   # local name or `self.x` -> TF class path of the object
        self.user_classes: Dict[str, tuple] = {}  # class name -> (TF base class path, own attribute names)
        self.star_modules: List[str] = []
        self.class_stack: List[tuple] = []
        self.used: Dict[str, Set[str]] = {}

    # ---- recording
    def _use(self, path: str, keywords: Iterable[str] = ()) -> None:
        self.used.setdefault(path, set()).update(keywords)

    # ---- imports
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            path = module_path(alias.name)
            if path is None:
                continue
            self._use(path)
            if alias.asname:
                self.paths[alias.asname] = path
            else:
                head = alias.name.partition(".")[0]
                self.paths[head] = module_path(head)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = module_path(node.module or "") if not node.level else None
        if base is None:
            for alias in node.names:
                self._forget(alias.asname or alias.name)
            return
        for alias in node.names:
            if alias.name == "*":
                self.star_modules.append(base)
                continue
            path = f"{base}.{alias.name}"
            self._use(path)
            self.paths[alias.asname or alias.name] = path

    # ---- expressions
    def _forget(self, name: str) -> None:
        self.paths.pop(name, None)
        self.instances.pop(name, None)
        self.user_classes.pop(name, None)

    def _target_key(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return f"self.{node.attr}"
        return None

    def path_of(self, node: ast.AST) -> Optional[str]:
        """The TF path an expression names (a module, class, function or member), or None."""
        if isinstance(node, ast.Name):
            if node.id in self.paths:
                return self.paths[node.id]
            if node.id not in self.instances and node.id not in self.user_classes:
                for module in self.star_modules:
                    if self.facts.is_name(f"{module}.{node.id}"):
                        return f"{module}.{node.id}"
            return None
        if isinstance(node, ast.Attribute):
            key = self._target_key(node)
            if key is not None and key in self.paths:
                return self.paths[key]
            owner = self.path_of(node.value)
            if owner is not None:
                return f"{owner}.{node.attr}"
            klass = self.class_of(node.value)
            if klass is not None and self.facts.member_of(klass, node.attr):
                return f"{klass}.{node.attr}"
        return None

    def class_of(self, node: ast.AST) -> Optional[str]:
        """The TF class of the object an expression stands for (a tracked instance, `self` or `super()` in a
        subclass of a TF class), or None."""
        key = self._target_key(node)
        if key is not None and key in self.instances:
            return self.instances[key]
        if isinstance(node, ast.Name) and node.id == "self" and self.class_stack:
            return self.class_stack[-1][0]
        if not isinstance(node, ast.Call):
            return None
        if isinstance(node.func, ast.Name) and node.func.id == "super":
            return self.class_stack[-1][0] if self.class_stack else None
        if isinstance(node.func, ast.Name) and node.func.id in self.user_classes:
            return self.user_classes[node.func.id][0]
        path = self.path_of(node.func)
        return self.facts.returns(path) if path is not None else None

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        path = None if isinstance(node.value, ast.Call) else self.path_of(node.value)
        klass = self.class_of(node.value)
        for target in node.targets:
            key = self._target_key(target)
            if key is None:
                self.visit(target)
                continue
            self._forget(key)
            if path is not None:
                self.paths[key] = path
            elif klass is not None:
                self.instances[key] = klass

    def _visit_owner(self, node: ast.Attribute) -> None:
        """Visits what an attribute hangs on unless it is a TF path itself (`tf.keras` in `tf.keras.layers`):
        an object expression such as `Dataset.from_tensor_slices(x)` in `...(x).batch` has names of its own."""
        if self.path_of(node.value) is None:
            self.visit(node.value)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            key = self._target_key(item.optional_vars) if item.optional_vars is not None else None
            if key is None:
                continue
            self._forget(key)
            klass = self.class_of(item.context_expr)  # `with tf.GradientTape() as tape`
            if klass is not None:
                self.instances[key] = klass
        for statement in node.body:
            self.visit(statement)

    visit_AsyncWith = visit_With

    def visit_Attribute(self, node: ast.Attribute) -> None:
        path = self.path_of(node)
        if path is not None:
            self._use(path)
        self._visit_owner(node)

    def visit_Name(self, node: ast.Name) -> None:
        path = self.path_of(node)
        if path is not None and (node.id not in self.paths or "." in path):
            self._use(path)

    def visit_Call(self, node: ast.Call) -> None:
        keywords = [k.arg for k in node.keywords if k.arg is not None]
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super" and self.class_stack):
            self._use(self.class_stack[-1][0], keywords)  # super().__init__(...) calls TF's constructor
        else:
            path = self.path_of(func)
            if path is None:
                self.visit(func)
            else:
                self._use(path, keywords)
                if isinstance(func, ast.Attribute):
                    self._visit_owner(func)
        for arg in node.args:
            self.visit(arg)
        for keyword in node.keywords:
            self.visit(keyword.value)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._forget(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        base = None
        for expr in node.bases:
            self.visit(expr)
            path = self.path_of(expr)
            if path is not None and self.facts.is_class(path):
                base = base or path
            elif isinstance(expr, ast.Name) and expr.id in self.user_classes:
                base = base or self.user_classes[expr.id][0]
        for keyword in node.keywords:
            self.visit(keyword.value)
        own = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self._forget(node.name)
        if base is not None:
            self.user_classes[node.name] = (base, own)
            self.class_stack.append((base, own))
        saved = {k: v for k, v in self.instances.items() if k.startswith("self.")}
        for statement in node.body:
            self.visit(statement)
        for key in [k for k in self.instances if k.startswith("self.")]:
            del self.instances[key]
        self.instances.update(saved)
        if base is not None:
            self.class_stack.pop()


def collect(sources: List[str], facts: "Facts") -> ScriptNames:
    """The TF/Keras names used across `sources` (the parts of one script, in order: a .py file is one part,
    a notebook one part per code cell). A part that does not parse is skipped and counted."""
    collector = _Collector(facts)
    result = ScriptNames()
    for source in sources:
        result.parts += 1
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            result.unparsed_parts += 1
            continue
        collector.visit(tree)
    result.names = collector.used
    return result


def script_sources(filename: str, text: str) -> List[str]:
    """The parts of a file to parse: a notebook's code cells, or the whole .py file."""
    if filename.endswith(".ipynb"):
        try:
            return notebook_cells(text)
        except (ValueError, AttributeError, TypeError):
            return []
    return [text]
