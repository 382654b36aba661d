"""Vector kernels of the tracked top-k scan, written as LLVM IR (Numba intrinsics).

The tracked scan (:func:`lshsim.hashing.productkey_topk.tracked_groups`) keeps, for each of ``G``
groups of a row's scores (score ``j`` in group ``j mod G``), the maximum, its position and
its runner-up. Written as Numba loops over arrays, that state went through memory on every
block of ``G`` scores: three loads, up to five masked stores and an aliasing check per block
(LLVM cannot prove that the row and the state arrays do not overlap). Here the state is
three ``G``-lane vectors held in registers for the whole row, so a block costs one load,
two comparisons and four selects: 1.06 -> 0.58 ms (``G = 32``, 4096 rows of 1024 float32
scores, one thread), 0.60 -> 0.31 ms at 512 scores. The group maxima are then ranked by
:data:`rank_counts`, every pair compared in vector lanes (0.41 -> 0.20 ms, 4096 rows of 32
maxima, the scatter included). The groups whose runner-up reaches the ``k``-th are found
from one vector comparison (:data:`mask_at_least`, its bits visited with :func:`lowest_bit`)
instead of a test per group (0.08-0.10 ms less per 4096 rows of 128-1024 scores).

``G`` is a compile-time constant, so each kernel exists for the group counts the scan uses
(:data:`GROUPS`). LLVM splits the ``G``-lane vectors into the machine's registers (eight
float32 lanes each where it prefers 256-bit vectors, as it does on AVX-512 machines).

Note: Numba's cache keys a compiled function on its own source file, so a kernel that calls
these must be recompiled by hand (its cache files deleted) after this file changes.

References:
    LLVM Language Reference, vector types, ``fcmp`` and ``select``
    (https://llvm.org/docs/LangRef.html).
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

__all__ = ["GROUPS", "fold_groups", "lowest_bit", "mask_at_least", "rank_counts"]

#: The group counts with kernels (those of ``tracked_groups``).
GROUPS = (32, 64)


def _data(context, builder, ty, value):
    """The data pointer of a Numba array argument."""
    return context.make_array(ty)(context, builder, value).data


def _vec_ptr(builder, ptr, vty):
    """``ptr`` as a pointer to ``vty`` (loads and stores then take the element's alignment)."""
    return builder.bitcast(ptr, vty.as_pointer())


def _splat(builder, scalar, vty):
    """A vector of type ``vty`` with ``scalar`` in every lane."""
    i32 = ir.IntType(32)
    undef = ir.Constant(vty, ir.Undefined)
    one = builder.insert_element(undef, scalar, ir.Constant(i32, 0))
    return builder.shuffle_vector(
        one, undef, ir.Constant(ir.VectorType(i32, vty.count), [0] * vty.count)
    )


def _is_c_vector(ty, dtypes) -> bool:
    """Whether Numba type ``ty`` is a C-contiguous 1-d array of one of ``dtypes``."""
    return isinstance(ty, types.Array) and ty.ndim == 1 and ty.layout == "C" and ty.dtype in dtypes


def _make_fold(G: int):
    @intrinsic
    def fold(typingctx, row, gm, ga, g2, full):
        """Fold the whole blocks of ``G`` scores in ``row[0:full]`` into the group state.

        ``gm``/``g2`` (the row's dtype) and ``ga`` (int32) hold ``G`` entries each (not
        checked: the caller sizes them), read at the start and written at the end; a
        partial last block is left to the caller. For block ``b`` (scores ``b .. b + G - 1``),
        where ``v = row[b + t] > gm[t]`` the old maximum becomes the runner-up, ``v`` the
        maximum and ``b`` its block; else ``g2[t] = v`` where ``v > g2[t]``. NaNs compare
        false, so they are never taken.
        """
        floats = (types.float32, types.float64)
        if not (
            _is_c_vector(row, floats)
            and _is_c_vector(gm, (row.dtype,))
            and _is_c_vector(g2, (row.dtype,))
            and _is_c_vector(ga, (types.int32,))
            and isinstance(full, types.Integer)
        ):
            return None

        def codegen(context, builder, sig, args):
            i32 = ir.IntType(32)
            vt = ir.VectorType(context.get_value_type(row.dtype), G)
            it = ir.VectorType(i32, G)
            align = row.dtype.bitwidth // 8
            p_row, p_gm, p_ga, p_g2 = (
                _data(context, builder, t, a) for t, a in zip(sig.args[:4], args[:4], strict=True)
            )
            end = args[4]
            m0 = builder.load(_vec_ptr(builder, p_gm, vt), align=align)
            a0 = builder.load(_vec_ptr(builder, p_ga, it), align=4)
            s0 = builder.load(_vec_ptr(builder, p_g2, vt), align=align)
            entry = builder.block
            head = builder.append_basic_block("fold.head")
            body = builder.append_basic_block("fold.body")
            done = builder.append_basic_block("fold.done")
            builder.branch(head)
            builder.position_at_end(head)
            b, m, a, s = (builder.phi(t) for t in (end.type, vt, it, vt))
            for phi, start in ((b, ir.Constant(end.type, 0)), (m, m0), (a, a0), (s, s0)):
                phi.add_incoming(start, entry)
            whole = builder.icmp_signed("<=", builder.add(b, ir.Constant(end.type, G)), end)
            builder.cbranch(whole, body, done)  # only whole blocks: never reads past full
            builder.position_at_end(body)
            v = builder.load(_vec_ptr(builder, builder.gep(p_row, [b]), vt), align=align)
            gt = builder.fcmp_ordered(">", v, m)
            s_next = builder.select(gt, m, builder.select(builder.fcmp_ordered(">", v, s), v, s))
            m_next = builder.select(gt, v, m)
            a_next = builder.select(gt, _splat(builder, builder.trunc(b, i32), it), a)
            b_next = builder.add(b, ir.Constant(end.type, G))
            for phi, value in ((b, b_next), (m, m_next), (a, a_next), (s, s_next)):
                phi.add_incoming(value, body)
            builder.branch(head)
            builder.position_at_end(done)
            builder.store(m, _vec_ptr(builder, p_gm, vt), align=align)
            builder.store(a, _vec_ptr(builder, p_ga, it), align=4)
            builder.store(s, _vec_ptr(builder, p_g2, vt), align=align)
            return context.get_dummy_value()

        return types.none(row, gm, ga, g2, full), codegen

    return fold


def _make_rank(G: int):
    @intrinsic
    def rank(typingctx, gm, cnt):
        """``cnt[t] = #{u : gm[u] > gm[t]}`` for the ``G`` entries; returns ``sum(cnt)``.

        The sum is ``G (G - 1) / 2`` exactly when the ``G`` values are distinct (then the
        counts are their ranks, a permutation of ``0 .. G - 1``); tied values share the lower
        rank, which makes it smaller.
        """
        if not (
            _is_c_vector(gm, (types.float32, types.float64)) and _is_c_vector(cnt, (types.int32,))
        ):
            return None

        def codegen(context, builder, sig, args):
            i32 = ir.IntType(32)
            vt = ir.VectorType(context.get_value_type(gm.dtype), G)
            it = ir.VectorType(i32, G)
            p_gm = _data(context, builder, sig.args[0], args[0])
            p_cnt = _data(context, builder, sig.args[1], args[1])
            v = builder.load(_vec_ptr(builder, p_gm, vt), align=gm.dtype.bitwidth // 8)
            r = ir.Constant(it, [0] * G)
            for u in range(G):
                w = _splat(builder, builder.extract_element(v, ir.Constant(i32, u)), vt)
                r = builder.add(r, builder.zext(builder.fcmp_ordered(">", w, v), it))
            builder.store(r, _vec_ptr(builder, p_cnt, it), align=4)
            total = builder.extract_element(r, ir.Constant(i32, 0))
            for u in range(1, G):
                total = builder.add(total, builder.extract_element(r, ir.Constant(i32, u)))
            return builder.sext(total, ir.IntType(64))

        return types.int64(gm, cnt), codegen

    return rank


def _make_mask(G: int):
    @intrinsic
    def mask(typingctx, arr, value):
        """The bits ``t`` (lowest first) of the ``G`` entries with ``arr[t] >= value``."""
        if not (_is_c_vector(arr, (types.float32, types.float64)) and value == arr.dtype):
            return None

        def codegen(context, builder, sig, args):
            vt = ir.VectorType(context.get_value_type(arr.dtype), G)
            p_arr = _data(context, builder, sig.args[0], args[0])
            v = builder.load(_vec_ptr(builder, p_arr, vt), align=arr.dtype.bitwidth // 8)
            ge = builder.fcmp_ordered(">=", v, _splat(builder, args[1], vt))
            return builder.zext(builder.bitcast(ge, ir.IntType(G)), ir.IntType(64))

        return types.int64(arr, value), codegen

    return mask


@intrinsic
def lowest_bit(typingctx, x):
    """The index of the lowest set bit of a nonzero int64 (``tzcnt``)."""
    if x != types.int64:
        return None

    def codegen(context, builder, sig, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return types.int64(x), codegen


#: ``fold_groups[G](row, gm, ga, g2, full)``: fold ``row[:full]``'s whole blocks into ``G``
#: groups' maxima, their blocks and runners-up (in place; NaN never taken). C-contiguous
#: float32/float64 row; every array argument holds at least ``G`` entries (not checked).
fold_groups = {g: _make_fold(g) for g in GROUPS}
#: ``rank_counts[G](gm, cnt) -> sum``: ``cnt[t] = #{u : gm[u] > gm[t]}``; the sum is
#: ``G (G - 1) / 2`` exactly when the ``G`` values are distinct.
rank_counts = {g: _make_rank(g) for g in GROUPS}
#: ``mask_at_least[G](arr, value) -> int64``: bit ``t`` set where ``arr[t] >= value`` (NaN:
#: unset), for iterating the few such entries with :func:`lowest_bit` instead of testing all.
mask_at_least = {g: _make_mask(g) for g in GROUPS}
