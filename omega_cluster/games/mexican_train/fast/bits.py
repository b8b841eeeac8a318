"""Bit instructions for the compiled kernels (numba intrinsics): count trailing zeros, count
leading zeros, population count — one processor instruction each, where the rules' kernels look
16-bit chunks up in a 65,536-entry table (512 KB that the search's trees would rather have in
cache)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["clz", "ctz", "popcount"]


if TYPE_CHECKING:  # what the kernels see: functions of one integer

    def ctz(x: int) -> int: ...
    def popcount(x: int) -> int: ...
    def clz(x: int) -> int: ...

else:

    @intrinsic
    def ctz(typingctx, x):
        """The index of the lowest set bit of ``x`` (> 0): LLVM's ``cttz``, one instruction."""
        if not isinstance(x, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

        return x(x), codegen

    @intrinsic
    def popcount(typingctx, x):
        """The number of set bits of ``x``: LLVM's ``ctpop``, one instruction."""
        if not isinstance(x, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            return builder.ctpop(args[0])

        return x(x), codegen

    @intrinsic
    def clz(typingctx, x):
        """Leading zero bits of ``x`` (> 0): LLVM's ``ctlz``."""
        if not isinstance(x, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 1))

        return x(x), codegen
