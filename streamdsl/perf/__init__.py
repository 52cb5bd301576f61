"""The whole-design performance model (timing, resources, SLRs), its reports, and design-space exploration."""
from ..boards import BOARDS, Board, BoardError, Memory, board
from .explore import Config, Exploration, ExploreError, commit, evaluate, explore
from .model import DesignPerf, model_design, partition_slrs
from .report import resource_lines

__all__ = ["BOARDS", "Board", "BoardError", "Config", "DesignPerf", "Exploration", "ExploreError", "Memory", "board",
           "commit", "evaluate", "explore", "model_design", "partition_slrs", "resource_lines"]
