"""The dataflow layer: itensors, task graphs, fusion, FIFO sizing and the token simulator."""
from .dfschedule import DataflowSchedule, EdgeHandle, FifoHandle, Placement, TaskHandle
from .fusion import FusionPlan
from .graph import DataflowFunction, DataflowGraph, dataflow
from .itensor import Converter, ITensor, converter
from .layout import DMA
from .packing import Packing, pack, unpack
from .tokensim import DeadlockError, SimResult

__all__ = ["Converter", "DMA", "DataflowFunction", "DataflowGraph", "DataflowSchedule", "DeadlockError", "EdgeHandle",
           "FifoHandle", "FusionPlan", "ITensor", "Packing", "Placement", "SimResult", "TaskHandle", "converter", "dataflow", "pack",
           "unpack"]
