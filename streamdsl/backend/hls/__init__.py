"""The Vitis HLS backend: C++ emission, project files and g++ C-simulation."""
from __future__ import annotations

from pathlib import Path

from ...ir.nodes import Kernel
from ...boards import board as get_board
from .project import CSimError, HLSProject, HLSProjectError, emitted, generate, write


def build(k: Kernel, output=None, board: str = "u55c", overwrite: bool = False, source: str | None = None) -> HLSProject:
    """Generate the project for ``k``; write it to ``output`` when given."""
    from .lint import lint

    b = get_board(board)
    lint(k)
    labels: dict = {}
    files = generate(k, board=b, source=source or (k.loc.file if k.loc else "?"), labels=labels)
    out = Path(output) if output is not None else None
    if out is not None:
        write(files, out, overwrite=overwrite)
    return emitted(HLSProject(k, files, out, b.name, b.part, b.clock_mhz, labels=labels))


__all__ = ["build", "HLSProject", "CSimError", "HLSProjectError"]
