"""Where a kernel's Python source lives, and how AST positions map back to it."""
from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass

from ..errors import KernelSyntaxError, Loc


@dataclass(frozen=True)
class Source:
    """The parsed source of one function, with offsets into the user's file."""

    file: str
    tree: ast.FunctionDef
    line_offset: int
    col_offset: int

    def loc(self, node: ast.AST) -> Loc:
        line = getattr(node, "lineno", 1) + self.line_offset
        col = getattr(node, "col_offset", 0) + self.col_offset
        end_line = getattr(node, "end_lineno", None)
        end = getattr(node, "end_col_offset", None)
        end_col = end + self.col_offset if end is not None and end_line == node.lineno else None
        return Loc(self.file, line, col, end_col)


def get_source(fn) -> Source:
    """Parse ``fn``'s definition; a function without source cannot be a kernel."""
    try:
        lines, first = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError):
        raise KernelSyntaxError(
            f"cannot read the source of {getattr(fn, '__name__', fn)!r}",
            hint="kernels must be defined in a file (not typed into a bare interpreter or built with exec)",
        ) from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip())
    tree = ast.parse(dedented)
    fdef = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    src = Source(file, fdef, first - 1, indent)
    if isinstance(fdef, ast.AsyncFunctionDef):
        raise KernelSyntaxError("a kernel cannot be async", src.loc(fdef), hint="remove 'async'")
    return src
