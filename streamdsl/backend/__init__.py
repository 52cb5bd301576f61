"""Backends: the reference simulator, the Vitis HLS project and its C-simulation, and what they share: the
output folder a build writes (:mod:`.folder`) and the escaping of user strings in generated text (:mod:`.text`)."""
from .folder import OutputFolder, OutputFolderError, plain_parts
from .text import comment, md_code


def __getattr__(name: str):
    """``CSimError``, ``write_hls_project`` (an HLS project's files and bundled headers into a folder) and
    ``csim_binary`` (g++'s cached build of C-simulation sources, :func:`.hls.gxx.compiled`), loaded on first
    use: ``import streamdsl`` does not load the HLS backend."""
    if name in ("CSimError", "write_hls_project", "csim_binary"):
        from .hls import gxx, project

        return {"CSimError": gxx.CSimError, "write_hls_project": project.write, "csim_binary": gxx.compiled}[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CSimError", "OutputFolder", "OutputFolderError", "comment", "csim_binary", "md_code", "plain_parts",
           "write_hls_project"]
