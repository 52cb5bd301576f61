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
"""
from .errors import (  # noqa: F401
    IRParseError, IRVerifyError, KernelSyntaxError, KernelTypeError, Loc,
    ScheduleError, ShapeError, StreamDSLError, install_excepthook,
)
from .types import (  # noqa: F401
    DType, FixedType, FloatType, IntType, TensorType,
    Fixed, Int, UFixed, UInt,
    bf16, f16, f32, f64, i8, i16, i32, i64, u1, u8, u16, u32, u64,
)
from .builtins import (  # noqa: F401
    abs, cast, cos, erf, exp, grid, log, max, min, rsqrt, sigmoid, sin, sqrt, tanh,
)
from .sched.schedule import Schedule  # noqa: F401
from .dfg.itensor import Converter, ITensor, converter  # noqa: F401
from .dfg.tokensim import DeadlockError  # noqa: F401
from .dfg.dfschedule import DataflowSchedule  # noqa: F401
from .dfg.graph import DataflowFunction  # noqa: F401
from .api import KernelFunction, kernel, schedule  # noqa: F401  (bound after the subpackages it shadows)
from .dfg.graph import dataflow  # noqa: F401  (the decorator)
from .perf.explore import explore  # noqa: F401


def parse_ir(text: str, filename: str = "<ir>"):
    """Parse the IR text printed by ``str(kernel.ir)`` back into a Kernel."""
    from .errors import user_facing
    from .ir.parser import parse_ir as _parse

    return user_facing(_parse)(text, filename)


install_excepthook()

__version__ = "0.1.0"
