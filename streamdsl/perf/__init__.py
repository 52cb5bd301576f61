"""The whole-design performance model (timing, resources, SLRs) and its reports; the explorer that searches
designs with it is :mod:`streamdsl.explorer`."""
from ..boards import BOARDS, Board, BoardError, Memory, board
from .fit import GUIDELINE, Fit, fit_designs
from .model import DesignPerf, model_design, partition_slrs
from .modelperf import ModelPerf
from .report import resource_lines

__all__ = ["BOARDS", "Board", "BoardError", "DesignPerf", "Fit", "GUIDELINE", "Memory", "ModelPerf", "board",
           "fit_designs", "model_design", "partition_slrs", "resource_lines"]
