"""Numba intrinsics: processor hints that Numba does not expose."""

from __future__ import annotations

import llvmlite.ir as ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, array, row):
    """Ask the processor to start loading row ``row`` of a C-contiguous array (a hint: no effect on
    results). Kernels that visit bodies in an order known ahead (a gather's list, the next rows of
    candidate lists) prefetch their rows, so that their cache misses overlap instead of stalling one after
    another."""
    sig = types.void(array, row)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        index = [context.cast(builder, args[1], signature.args[1], types.intp)]
        index += [context.get_constant(types.intp, 0)] * (aryty.ndim - 1)
        ptr = cgutils.get_item_pointer2(
            context,
            builder,
            ary.data,
            cgutils.unpack_tuple(builder, ary.shape),
            cgutils.unpack_tuple(builder, ary.strides),
            aryty.layout,
            index,
        )
        i32 = ir.IntType(32)
        ptr = builder.bitcast(ptr, ir.IntType(8).as_pointer())  # one declaration for every element type
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32]), "llvm.prefetch.p0"
        )
        builder.call(fn, [ptr, i32(0), i32(3), i32(1)])  # read, keep in all cache levels, data
        return context.get_dummy_value()

    return sig, codegen
