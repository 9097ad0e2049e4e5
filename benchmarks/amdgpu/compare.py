"""Tessel's AMD GPU code against Triton's, without a GPU.

Compiles the same kernels (kernels/*.mlir for Tessel, triton_kernels.py for
Triton 3.9, same shapes and tile sizes) for gfx90a, gfx942 and gfx1100 and
tabulates what the code objects say: registers, LDS, scratch, occupancy,
matrix instructions and the hot loop's instruction mix; then estimates each
kernel's time on MI250X / MI300X / RX 7900 XTX with the model of README.md.

    benchmarks/.peers/bin/python benchmarks/amdgpu/compare.py [--tessel PATH] [--json OUT] [--markdown OUT]

Needs Triton in the peers' venv (benchmarks/setup-peers.sh) and a release
build of `tessel`."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import codeobject  # noqa: E402

from model import CHIPS, estimate_contraction, estimate_streaming, fma_loop, occupancy  # noqa: E402


ROOT = HERE.parent.parent
KERNELS = {
    # name: Tessel source, Triton kernel, (m, n, k) of a contraction
    "matmul_f32_kgrid": ("benchmarks/amdgpu/kernels/matmul_f32_kgrid.mlir", "matmul_f32", (2048, 2048, 2048)),
    "matmul_f32_wholek": ("benchmarks/amdgpu/kernels/matmul_f32_wholek.mlir", "matmul_f32", (2048, 2048, 2048)),
    "matmul_f32_256": ("benchmarks/amdgpu/kernels/matmul_f32_256.mlir", "matmul_f32_256", (2048, 2048, 2048)),
    "matmul_i8": ("examples/matmul_i8.mlir", "matmul_i8", (1024, 1024, 1024)),
    "softmax_row": ("benchmarks/amdgpu/kernels/softmax_row.mlir", "softmax_row", None),
    "softmax_8rows": ("examples/softmax_4096.mlir", "softmax_8rows", None),
    "elementwise": ("examples/elementwise_16m.mlir", "elementwise", None),
    "elementwise_partial": ("benchmarks/amdgpu/kernels/elementwise_partial.mlir", "elementwise_partial", None),
}
# Memory-bound kernels: programs of the grid (the same on both sides) and
# the bytes the computation must move (inputs once, outputs once).
STREAMING = {
    "softmax_row": (4096, 2 * 4096 * 4096 * 4),
    "softmax_8rows": (512, 2 * 4096 * 4096 * 4),
    "elementwise": (256, 4 * 16777216 * 4),
    "elementwise_partial": (255, 4 * 16700000 * 4),
}


def tessel_assembly(tessel, source, chip):
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "kernel.s"
        command = [
            tessel,
            "compile",
            str(ROOT / source),
            "--target",
            "rocm",
            "--chip",
            chip,
            "--emit",
            "asm",
            "-o",
            str(out),
        ]
        subprocess.run(command, check=True, capture_output=True)
        text = out.read_text()
    (kernel,) = codeobject.kernels_of(text)
    return kernel, kernel.metadata.get("group_segment_fixed_size", 0)


def triton_assembly(name, chip):
    import triton_kernels

    text, shared = triton_kernels.compile_kernel(name, chip, CHIPS[chip]["wave_size"])
    (kernel,) = codeobject.kernels_of(text)
    # Triton allocates LDS at launch: the code object says 0.
    return kernel, shared


def row(name, kernel, lds, chip, spec):
    metadata = kernel.metadata
    _, _, shape = spec
    # A contraction's k loop: its matrix instructions' or, on the FMA
    # path, the loop loading the operands around the k steps' FMAs.
    hot = kernel.hot_loop() or (fma_loop(kernel) if shape is not None else None)
    loop = kernel.instructions[hot[0] : hot[1] + 1] if hot else kernel.instructions
    estimate = None
    if shape is not None:
        estimate = estimate_contraction(kernel, lds, chip, shape)
    elif name in STREAMING:
        estimate = estimate_streaming(kernel, lds, chip, *STREAMING[name])
    return {
        "vgpr": metadata.get("vgpr_count"),
        "agpr": metadata.get("agpr_count", 0),
        "sgpr": metadata.get("sgpr_count"),
        "lds": lds,
        "scratch": metadata.get("private_segment_fixed_size"),
        "spills": metadata.get("vgpr_spill_count", 0) + metadata.get("sgpr_spill_count", 0),
        "occupancy": occupancy(metadata, lds, chip),
        "matrix": sum(instruction.kind == "matrix" for instruction in kernel.instructions),
        "hot_loop": "k loop" if hot else "whole kernel",
        "mix": codeobject.mix(loop),
        "lds_reads": codeobject.widths(loop, "lds_read"),
        "lds_writes": codeobject.widths(loop, "lds_write"),
        "global_loads": codeobject.widths(loop, "global_load"),
        "estimate": estimate,
    }


MIX_COLUMNS = (
    "matrix",
    "fma",
    "global_load",
    "global_store",
    "lds_read",
    "lds_write",
    "wait_vm",
    "barrier",
    "valu",
    "salu",
    "scratch",
)


def markdown(results):
    """One row per kernel, chip and compiler: resources, the hot loop's
    static mix (the whole kernel where there is no matrix loop), the
    cycles a wave stalls on memory over its run and the estimates."""
    head = ["kernel", "chip", "compiler", "VGPR", "AGPR", "SGPR", "LDS", "scratch", "waves/SIMD"]
    head += list(MIX_COLUMNS) + ["stalled cycles", "est. us", "Triton/Tessel", "serial est. us", "serial ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for result in results:
        for compiler in ("tessel", "triton"):
            r = result[compiler]
            estimate, other = r["estimate"], result["triton"]["estimate"]
            cells = [
                result["kernel"],
                result["chip"],
                compiler,
                r["vgpr"],
                r["agpr"],
                r["sgpr"],
                r["lds"],
                r["scratch"],
            ]
            cells += [r["occupancy"]] + [r["mix"].get(column, 0) for column in MIX_COLUMNS]
            if estimate is None:
                cells += ["-"] * 5
            else:
                ratios = ["", ""]
                if compiler == "tessel" and other:
                    ratios = [
                        f"{other['us'] / estimate['us']:.2f}",
                        f"{other['serial_us'] / estimate['serial_us']:.2f}",
                    ]
                cells += [
                    estimate["exposed"],
                    f"{estimate['us']:.1f}",
                    ratios[0],
                    f"{estimate['serial_us']:.1f}",
                    ratios[1],
                ]
            lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessel", default=str(ROOT / "target/release/tessel"))
    parser.add_argument("--chips", default="gfx90a,gfx942,gfx1100")
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--markdown", help="write the table here")
    args = parser.parse_args()
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    results = []
    for name in args.kernels.split(","):
        spec = KERNELS[name]
        for chip in args.chips.split(","):
            tessel_kernel, tessel_lds = tessel_assembly(args.tessel, spec[0], chip)
            triton_kernel, triton_lds = triton_assembly(spec[1], chip)
            results.append(
                {
                    "kernel": name,
                    "chip": chip,
                    "tessel": row(name, tessel_kernel, tessel_lds, chip, spec),
                    "triton": row(name, triton_kernel, triton_lds, chip, spec),
                }
            )
    table = markdown(results)
    print(table)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(table)


if __name__ == "__main__":
    main()
