"""streamdsl: a Python-embedded HLS DSL for stream-based dataflow accelerators.

    import streamdsl as sd

    @sd.kernel
    def vadd(A: sd.f32[1024], B: sd.f32[1024]) -> sd.f32[1024]:
        C: sd.f32[1024] = 0.0
        for i in range(1024):
            C[i] = A[i] + B[i]
        return C

    C = vadd(A, B)        # runs the reference simulator on NumPy arrays
    print(vadd.ir)        # the loop IR; sd.parse_ir(str(vadd.ir)) == vadd.ir

``sd.llm`` (loaded on first use) is the LLM library: model builders, configs, weight loaders, ``llm_perf``
and the transformer blocks.  ``import streamdsl`` loads no backend, no explorer and no SciPy, and leaves
``sys.excepthook`` alone (``sd.install_excepthook()`` prints located errors without streamdsl's frames in a
script; errors raised through the API are already located).
"""
from . import registry as _registry
from ._version import __version__
from .api import KernelFunction, KernelTemplate, dataflow, explore, kernel, parse_ir, schedule, template
from .boards import BOARDS, Board, BoardError, board
from .builtins import abs, cast, cos, erf, exp, grid, log, max, min, rsqrt, sigmoid, sin, sqrt, tanh
from .dfg import Converter, DataflowFunction, DataflowSchedule, DeadlockError, ITensor, Placement, converter
from .errors import (
    IRParseError, IRVerifyError, KernelSyntaxError, KernelTypeError, Loc, ScheduleError, ShapeError, StreamDSLError,
    install_excepthook,
)
from .sched.schedule import Schedule
from .types import (
    DType, Fixed, FixedType, FloatType, Int, IntType, TensorType, UFixed, UInt,
    bf16, f16, f32, f64, i8, i16, i32, i64, u1, u8, u16, u32, u64,
)

# What the lower parts reach through the registry (imported on first use, see streamdsl/registry.py).
_registry.register("build.kernel", "hls", "streamdsl.backend.hls:build")
_registry.register("build.kernel", "sim", "streamdsl.backend.sim:SimModule")
_registry.register("build.dataflow", "hls", "streamdsl.backend.hls.dataflow:build")
_registry.register("present", "html", "streamdsl.htmlreport:present")

_EXTENSIONS = "streamdsl.extensions"  # entry points: sd.<name> loads the module an installed package names


def __getattr__(name: str):
    """``sd.llm`` and other installed extensions, imported on first use (Python entry points)."""
    from importlib import import_module
    from importlib.metadata import entry_points

    for ep in entry_points(group=_EXTENSIONS):
        if ep.name == name:
            module = import_module(ep.value)
            globals()[name] = module
            return module
    raise AttributeError(f"module 'streamdsl' has no attribute {name!r}")


__all__ = [
    "BOARDS", "Board", "BoardError", "Converter", "DType", "DataflowFunction", "DataflowSchedule", "DeadlockError",
    "Fixed", "FixedType", "FloatType", "IRParseError", "IRVerifyError", "ITensor", "Int", "IntType",
    "KernelFunction", "KernelSyntaxError", "KernelTemplate", "KernelTypeError", "Loc", "Placement", "Schedule", "ScheduleError",
    "ShapeError", "StreamDSLError", "TensorType", "UFixed", "UInt", "__version__", "abs", "bf16", "board", "cast",
    "converter", "cos", "dataflow", "erf", "exp", "explore", "f16", "f32", "f64", "grid", "i8", "i16", "i32", "i64",
    "install_excepthook", "kernel", "log", "max", "min", "parse_ir", "rsqrt", "schedule", "sigmoid", "sin", "sqrt",
    "tanh", "template", "u1", "u8", "u16", "u32", "u64",
]
