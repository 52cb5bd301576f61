"""The Vitis HLS backend: C++ emission, project files and g++ C-simulation."""
from __future__ import annotations

from pathlib import Path

from ...ir.nodes import Kernel
from .project import BOARDS, CSimError, HLSProject, HLSProjectError, generate, write


def build(k: Kernel, output=None, board: str = "u55c", overwrite: bool = False, source: str | None = None) -> HLSProject:
    """Generate the project for ``k``; write it to ``output`` when given."""
    from .lint import lint

    lint(k)
    files = generate(k, board=board, source=source or (k.loc.file if k.loc else "?"))
    out = Path(output) if output is not None else None
    if out is not None:
        write(files, out, overwrite=overwrite)
    part, clock = BOARDS[board]
    return HLSProject(k, files, out, board, part, clock)


__all__ = ["build", "HLSProject", "CSimError", "HLSProjectError"]
