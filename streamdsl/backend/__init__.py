"""Backends: the reference simulator, the Vitis HLS project and its C-simulation, and what they share: the
output folder a build writes (:mod:`.folder`) and the escaping of user strings in generated text (:mod:`.text`)."""
from .folder import OutputFolder, OutputFolderError, plain_parts
from .text import comment, md_code

__all__ = ["OutputFolder", "OutputFolderError", "comment", "md_code", "plain_parts"]
