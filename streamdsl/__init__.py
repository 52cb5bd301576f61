"""streamdsl: a Python-embedded HLS DSL for stream-based dataflow accelerators."""
from .errors import (  # noqa: F401
    IRParseError, IRVerifyError, KernelSyntaxError, KernelTypeError, Loc,
    ScheduleError, ShapeError, StreamDSLError, install_excepthook,
)
from .types import (  # noqa: F401
    DType, FixedType, FloatType, IntType, TensorType,
    Fixed, Int, UFixed, UInt,
    bf16, f16, f32, f64, i8, i16, i32, i64, u1, u8, u16, u32, u64,
)

install_excepthook()

__version__ = "0.1.0"
