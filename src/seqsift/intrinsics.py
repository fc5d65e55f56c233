"""CPU instructions Numba's public API lacks, written as LLVM IR through numba.extending;
shared by the engines' kernels.

eq_mask32 is a 32-byte compare followed by a byte movemask (vpcmpeqb +
vpmovmskb on AVX2): Numba cannot express the movemask, and the scratch-buffer
substitute ran at half the speed here (see docs/benchmarks.md). LLVM lowers
the same IR to whatever vector unit the CPU has, so it stays portable.
"""

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_VEC = ir.VectorType(_I8, 32)


def splat(builder, value, vec: ir.VectorType):
    """IR: `value` in every lane of a vector of type vec."""
    lane0 = builder.insert_element(ir.Constant(vec, ir.Undefined), value, ir.Constant(_I32, 0))
    return builder.shuffle_vector(lane0, ir.Constant(vec, ir.Undefined), ir.Constant(ir.VectorType(_I32, vec.count), [0] * vec.count))


def vector_call(builder, name: str, vec: ir.VectorType, *args):
    """IR: a call of LLVM's lane-wise intrinsic llvm.<name> (smax, usub.sat, ...) on vectors of type vec."""
    full = f"llvm.{name}.v{vec.count}i{vec.element.width}"
    fn = builder.module.globals.get(full) or ir.Function(builder.module, ir.FunctionType(vec, [vec] * len(args)), full)
    return builder.call(fn, list(args))


@intrinsic
def eq_mask32(typingctx, address, byte):
    """Bit j of the result is set when the byte at address + j equals `byte` (unaligned load)."""
    sig = types.uint32(types.uint64, types.uint8)

    def codegen(context, builder, signature, args):
        addr, value = args
        data = builder.load(builder.inttoptr(addr, _VEC.as_pointer()), align=1)
        return builder.bitcast(builder.icmp_unsigned("==", data, splat(builder, value, _VEC)), _I32)

    return sig, codegen


@intrinsic
def cttz64(typingctx, x):
    """Count of trailing zero bits (the index of the lowest set bit); x must be non-zero."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return sig, codegen


@intrinsic
def bswap64(typingctx, x):
    """x with its 8 bytes in reverse order: 8 reverse-strand read codes, loaded at once, put in
    the order that strand reads them."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.bswap(args[0])

    return sig, codegen


@intrinsic
def popcount64(typingctx, x):
    """Number of set bits (popcnt): the rank of a base within an FM-index rank block."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


_PREFETCH = "llvm.prefetch.p0"  # the name LLVM 15+ (opaque pointers) gives it


@intrinsic
def prefetch(typingctx, address):
    """Ask for the cache line at `address` ahead of use (prefetcht0): interleaved FM-index
    searches overlap their independent rank-block misses this way (the GEM paper, 4.2.3)."""
    sig = types.void(types.uint64)

    def codegen(context, builder, signature, args):
        ptr_type = ir.IntType(8).as_pointer()
        fn_type = ir.FunctionType(ir.VoidType(), [ptr_type, _I32, _I32, _I32])
        fn = builder.module.globals.get(_PREFETCH) or ir.Function(builder.module, fn_type, _PREFETCH)
        builder.call(fn, [builder.inttoptr(args[0], ptr_type), _I32(0), _I32(3), _I32(1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def load_u64(typingctx, address):
    """The 8 bytes at address as a little-endian uint64 (unaligned load): the signature
    scanner's prefilter probes an 8-byte window with one load."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        return builder.load(builder.inttoptr(args[0], i64.as_pointer()), align=1)

    return sig, codegen


def _has_ssse3() -> bool:
    """Whether the CPU Numba compiles for has SSSE3's byte shuffle (pshufb): the host's, unless
    NUMBA_CPU_NAME / NUMBA_CPU_FEATURES name another (then only when the features list it)."""
    from llvmlite import binding
    from numba.core import config

    if config.CPU_NAME or config.CPU_FEATURES:
        return "+ssse3" in (config.CPU_FEATURES or "").split(",")
    return binding.get_process_triple().startswith("x86_64") and bool(binding.get_host_cpu_features().get("ssse3"))


@intrinsic
def byte_lookup16(typingctx, table, codes, out):
    """out[k] = table[codes[k]] for 16 bytes k, the table 32 bytes and every code below 32
    (addresses; unaligned). On SSSE3 two byte shuffles and a select, where a loop costs a load
    a byte: the database search's profiles are this lookup (lanes.batch_profile); elsewhere
    16 loads."""
    sig = types.void(types.uint64, types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        table, codes, out = args
        vec = ir.VectorType(_I8, 16)
        indices = builder.load(builder.inttoptr(codes, vec.as_pointer()), align=1)
        if _has_ssse3():
            name = "llvm.x86.ssse3.pshuf.b.128"
            fn = builder.module.globals.get(name) or ir.Function(builder.module, ir.FunctionType(vec, [vec, vec]), name)
            low, high = (builder.load(builder.inttoptr(builder.add(table, ir.Constant(ir.IntType(64), k)), vec.as_pointer()),
                                      align=1) for k in (0, 16))
            upper = builder.icmp_unsigned(">", indices, ir.Constant(vec, [15] * 16))  # pshufb reads the low 4 bits
            result = builder.select(upper, builder.call(fn, [high, indices]), builder.call(fn, [low, indices]))
        else:
            result = ir.Constant(vec, ir.Undefined)
            for k in range(16):
                index = builder.zext(builder.extract_element(indices, _I32(k)), ir.IntType(64))
                value = builder.load(builder.inttoptr(builder.add(table, index), _I8.as_pointer()))
                result = builder.insert_element(result, value, _I32(k))
        builder.store(result, builder.inttoptr(out, vec.as_pointer()), align=1)
        return context.get_dummy_value()

    return sig, codegen


def _equal_block(width: int):
    @intrinsic
    def equal(typingctx, a, b):
        sig = types.boolean(types.uint64, types.uint64)

        def codegen(context, builder, signature, args):
            vec = ir.VectorType(_I8, width)
            left, right = (builder.load(builder.inttoptr(x, vec.as_pointer()), align=1) for x in args)
            same = builder.bitcast(builder.icmp_unsigned("==", left, right), ir.IntType(width))
            return builder.icmp_unsigned("==", same, ir.Constant(ir.IntType(width), (1 << width) - 1))

        return sig, codegen

    equal.__doc__ = f"Whether the {width} bytes at addresses a and b are equal (unaligned loads, one vector compare)."
    return equal


equal16 = _equal_block(16)
equal32 = _equal_block(32)


@intrinsic
def acgt32(typingctx, source, folded, codes):
    """The 32 bytes at source upper-cased into folded and coded A 0, C 1, G 2, T 3 into codes
    (either case: the code is bits 1-2 of the letter xor bits 2-3); returns the mask of bytes
    that are none of ACGTacgt (their outputs are meaningless). One vector pass where a byte
    table costs a load a base: the read parser's common case."""
    sig = types.uint32(types.uint64, types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        src, dst_folded, dst_codes = (builder.inttoptr(a, _VEC.as_pointer()) for a in args)
        data = builder.load(src, align=1)
        upper = builder.and_(data, splat(builder, _I8(0xDF), _VEC))
        letter = None
        for base in b"ACGT":
            same = builder.icmp_unsigned("==", upper, splat(builder, _I8(base), _VEC))
            letter = same if letter is None else builder.or_(letter, same)
        builder.store(upper, dst_folded, align=1)
        shifted1 = builder.lshr(data, splat(builder, _I8(1), _VEC))
        shifted2 = builder.lshr(data, splat(builder, _I8(2), _VEC))
        code = builder.and_(builder.xor(shifted1, shifted2), splat(builder, _I8(3), _VEC))
        builder.store(code, dst_codes, align=1)
        return builder.bitcast(builder.not_(letter), _I32)

    return sig, codegen
