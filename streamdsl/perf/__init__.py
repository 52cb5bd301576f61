"""Board models, the whole-design performance model, exploration and reports (issue 6)."""
from ..boards import BOARDS, Board, BoardError, Memory, board  # noqa: F401
from .model import DesignPerf, model_design, partition_slrs  # noqa: F401
from .explore import Config, Exploration, ExploreError, explore  # noqa: F401
