"""The comparison's kernels written for Triton, compiled offline for AMD
chips (no GPU or ROCm needed): same shapes and tile sizes as Tessel's in
kernels/, exact f32 (`input_precision="ieee"`, no FP fusion changes the
contraction: tl.dot's f32 MFMAs are exact fused multiply-adds)."""

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def matmul(a, b, c, K: tl.constexpr, N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), c.dtype.element_ty)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        if x.dtype == tl.float32:
            acc += tl.dot(x, y, input_precision="ieee")
        else:
            acc += tl.dot(x, y, out_dtype=tl.int32)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def softmax(x, o, N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, N)
    v = tl.load(x + rows[:, None] * N + cols[None, :])
    e = tl.exp(v - tl.max(v, axis=1)[:, None])
    tl.store(o + rows[:, None] * N + cols[None, :], e / tl.sum(e, axis=1)[:, None])


@triton.jit
def elementwise(x, y, w, o, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o + offsets, tl.load(x + offsets) * tl.load(y + offsets) + tl.load(w + offsets))


@triton.jit
def elementwise_masked(x, y, w, o, SIZE: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < SIZE
    v = tl.load(x + offsets, mask=mask) * tl.load(y + offsets, mask=mask) + tl.load(w + offsets, mask=mask)
    tl.store(o + offsets, v, mask=mask)


def _compile(fn, pointers, constexprs, chip, wave_size, num_warps, num_stages):
    signature = {name: kind for name, kind in pointers}
    signature.update({name: "constexpr" for name in constexprs})
    # What a launch with small, 16-byte aligned tensors gets (enables buffer_load).
    attrs = {(i,): [["tt.divisibility", 16], ["tt.pointer_range", 32]] for i in range(len(pointers))}
    source = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    options = {"num_warps": num_warps, "num_stages": num_stages}
    return triton.compile(source, target=GPUTarget("hip", chip, wave_size), options=options)


def compile_kernel(name, chip, wave_size):
    """(assembly, LDS bytes the launch allocates) of the comparison's `name`."""
    f32, i8, i32 = "*fp32", "*i8", "*i32"
    if name == "matmul_f32_256":
        # 256x256 tiles with eight warps: with four, each warp's 128x128
        # results fill the AGPRs (502 registers a lane, one wave per SIMD).
        matmul_args = [("a", f32), ("b", f32), ("c", f32)]
        shape = {"K": 2048, "N": 2048, "BM": 256, "BN": 256, "BK": 16}
        kernel = _compile(matmul, matmul_args, shape, chip, wave_size, 8, 2)
    elif name.startswith("matmul_f32"):
        matmul_args = [("a", f32), ("b", f32), ("c", f32)]
        shape = {"K": 2048, "N": 2048, "BM": 128, "BN": 128, "BK": 16}
        kernel = _compile(matmul, matmul_args, shape, chip, wave_size, 4, 2)
    elif name == "matmul_i8":
        matmul_args = [("a", i8), ("b", i8), ("c", i32)]
        shape = {"K": 1024, "N": 1024, "BM": 128, "BN": 128, "BK": 64}
        kernel = _compile(matmul, matmul_args, shape, chip, wave_size, 4, 2)
    elif name.startswith("softmax"):
        rows = 1 if name.endswith("row") else 8
        kernel = _compile(softmax, [("x", f32), ("o", f32)], {"N": 4096, "ROWS": rows}, chip, wave_size, 4, 1)
    elif name == "elementwise":
        args = [(n, f32) for n in ("x", "y", "w", "o")]
        kernel = _compile(elementwise, args, {"BLOCK": 65536}, chip, wave_size, 4, 1)
    elif name == "elementwise_partial":
        # 16,700,000 floats: the last of 255 blocks is partial (masked).
        args = [(n, f32) for n in ("x", "y", "w", "o")]
        shape = {"SIZE": 16700000, "BLOCK": 65536}
        kernel = _compile(elementwise_masked, args, shape, chip, wave_size, 4, 1)
    else:
        raise KeyError(name)
    return kernel.asm["amdgcn"], kernel.metadata.shared
