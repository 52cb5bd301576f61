"""The package's layering, checked from its source: every import, at module level or inside a function.

The parts, bottom up (docs/architecture.md draws the same map).  A module may import its own part and the
parts below it; no import cycle between parts; nothing below the face imports ``streamdsl/__init__``.
The LLM library and the examples sit above everything and use public names only: ``streamdsl`` itself, or a
name in the ``__all__`` of a part's package or top-level module (``from streamdsl.dfg import Placement``).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

LAYERS: tuple[tuple[str, ...], ...] = (
    ("_version", "compat", "errors", "types", "numeric", "progress", "registry"),
    ("boards",),
    ("ir",),
    ("frontend", "sched"),
    ("cost",),
    ("dfg",),
    ("backend",),
    ("perf", "explorer"),
    ("viz", "htmlreport"),
    ("builtins", "api", "__init__", "cli", "__main__"),
)
RANK = {part: n for n, parts in enumerate(LAYERS) for part in parts}
FACE = set(LAYERS[-1])


@dataclass(frozen=True)
class Import:
    src: str  # importing module, dotted
    target: str  # imported module, dotted
    names: tuple[str, ...]  # the names taken from it (empty for ``import x``)
    path: Path
    line: int

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def module_name(path: Path, root: Path, package: str) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts])


def imports_of(path: Path, module: str, is_package: bool) -> list[Import]:
    """Every import in the file, the ones inside functions and classes too, resolved to absolute names."""
    tree = ast.parse(path.read_text(), str(path))
    here = module.split(".") if is_package else module.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [Import(module, a.name, (), path, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append(Import(module, target, tuple(a.name for a in node.names), path, node.lineno))
    return out


def package_imports(root: Path, package: str = "streamdsl") -> list[Import]:
    out = []
    for path in sorted(root.rglob("*.py")):
        out += imports_of(path, module_name(path, root, package), path.name == "__init__.py")
    return out


def part_of(module: str, package: str = "streamdsl") -> str | None:
    """The part a module belongs to (``streamdsl.dfg.lower`` -> ``dfg``; ``streamdsl`` -> ``__init__``)."""
    if module == package:
        return "__init__"
    if not module.startswith(package + "."):
        return None
    return module.split(".")[1]


def _targets(imp: Import, package: str) -> list[str]:
    """The modules an import reaches: ``from streamdsl import dfg`` reaches ``streamdsl.dfg``, not the face."""
    if imp.target == package and imp.names:
        return [f"{package}.{n}" if n in RANK or n == "library" else package for n in imp.names]
    return [imp.target]


def layer_violations(root: Path, package: str = "streamdsl") -> list[str]:
    """What breaks the layering: an upward import, an import cycle between parts, the face imported below it."""
    problems = []
    graph: dict[str, set[str]] = {}
    for imp in package_imports(root, package):
        src = part_of(imp.src, package)
        for target in _targets(imp, package):
            dst = part_of(target, package)
            if dst is None or src is None:
                continue
            if src not in RANK:
                problems.append(f"{imp.where()}: module {imp.src} is in no part of the map")
                continue
            if dst == "library":
                if src != "cli" and src != "__main__":
                    problems.append(f"{imp.where()}: {imp.src} imports the LLM library, which sits above the package")
                continue
            if dst not in RANK:
                problems.append(f"{imp.where()}: {target} is in no part of the map")
                continue
            if dst == "__init__" and src not in FACE:
                problems.append(f"{imp.where()}: {imp.src} imports streamdsl/__init__ (the face) from below it")
            elif RANK[dst] > RANK[src]:
                problems.append(f"{imp.where()}: {imp.src} ({src}) imports {target} ({dst}), a part above it")
            if dst != src:
                graph.setdefault(src, set()).add(dst)
    problems += [f"import cycle between parts: {' -> '.join(c)}" for c in _cycles(graph)]
    return problems


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected set of parts (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp) + [sorted(comp)[0]])

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def public_names(root: Path, package: str = "streamdsl") -> dict[str, set[str]]:
    """``__all__`` of the face and of every part's package or top-level module, read from the source."""
    out = {}
    for path in [root / "__init__.py", *sorted(root.glob("*.py")), *sorted(root.glob("*/__init__.py"))]:
        mod = module_name(path, root, package)
        names: set[str] = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                names |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
        out[mod] = names
    return out


def public_use_violations(files: list[Path], root: Path, package: str = "streamdsl") -> list[str]:
    """Imports of the package from ``files`` (the library, the examples) that reach past its public names."""
    public = public_names(root, package)
    problems = []
    for path in files:
        for imp in imports_of(path, "user", False):
            if not (imp.target == package or imp.target.startswith(package + ".")):
                continue
            if imp.target.startswith(f"{package}.library"):
                continue  # the library's own modules
            if imp.target not in public:
                problems.append(f"{imp.where()}: imports {imp.target}, not a public module (use {package} or a "
                                "part's package)")
                continue
            for n in imp.names:
                if n not in public[imp.target] and f"{imp.target}.{n}" not in public:
                    problems.append(f"{imp.where()}: {imp.target}.{n} is not in that module's __all__")
    return problems
