"""Bit instructions for the compiled kernels (numba intrinsics): count trailing zeros, count
leading zeros, population count — one processor instruction each, where the rules' kernels look
16-bit chunks up in a 65,536-entry table (512 KB that the search's trees would rather have in
cache)."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["clz", "ctz", "popcount"]


@intrinsic
def ctz(typingctx, x):  # type: ignore[no-untyped-def]
    """The index of the lowest set bit of ``x`` (> 0): LLVM's ``cttz``, one instruction."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return x(x), codegen


@intrinsic
def popcount(typingctx, x):  # type: ignore[no-untyped-def]
    """The number of set bits of ``x``: LLVM's ``ctpop``, one instruction."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.ctpop(args[0])

    return x(x), codegen


@intrinsic
def clz(typingctx, x):  # type: ignore[no-untyped-def]
    """Leading zero bits of ``x`` (> 0): LLVM's ``ctlz``."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 1))

    return x(x), codegen
