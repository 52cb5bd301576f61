"""The loop IR: frozen nodes (:mod:`.nodes`, whose docstring states their meaning), the op registry, the text
form (printer and parser), the verifier and the analyses the other parts share.  The names below are the IR
a user's script or the library may inspect (``for n in walk(kernel): ...``)."""
from .nodes import (
    Alloc, Assign, BinOp, Call, CallKernel, Cast, Const, Decl, Expr, For, If, Kernel, Load, Param, Ref, Return,
    Select, Stmt, Store, UnaryOp, Var, children, walk,
)
from .loops import loops_with_parents

__all__ = [
    "Alloc", "Assign", "BinOp", "Call", "CallKernel", "Cast", "Const", "Decl", "Expr", "For", "If", "Kernel", "Load",
    "Param", "Ref", "Return", "Select", "Stmt", "Store", "UnaryOp", "Var", "children", "loops_with_parents", "walk",
]
