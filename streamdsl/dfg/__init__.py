"""The dataflow layer: itensors, task graphs, fusion, FIFO sizing and the token simulator."""
from .dfschedule import DataflowSchedule, EdgeHandle, FifoHandle, TaskHandle  # noqa: F401
from .fusion import FusionPlan  # noqa: F401
from .graph import DataflowFunction, DataflowGraph, dataflow  # noqa: F401
from .layout import DMA  # noqa: F401
from .tokensim import DeadlockError, SimResult  # noqa: F401
