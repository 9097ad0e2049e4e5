"""What the hot loop of each kernel in an AMDGPU assembly file does, one
fact per line, for structural tests (test/gpu/tessel-to-rocm.mlir) and
for reading code by hand:

    python3 benchmarks/amdgpu/hot_loop.py KERNEL.s

The hot loop is a contraction's k loop (the loop with the most matrix
instructions of its own); `around` facts describe the loop enclosing it
(a grid's arbitrary axis, when the kernel has one). Without matrix
instructions, the kernel's loops are summarized instead."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import codeobject  # noqa: E402
import model  # noqa: E402

# Bits one lane reads per LDS instruction (the two reads of a ds_read2
# are separate addresses: their width is one element's).
LDS_READ_BITS = {"b128": 128, "b96": 96, "b64": 64, "b32": 32, "u16": 16, "i16": 16, "u8": 8, "i8": 8}


def lds_read_bits(instruction):
    return LDS_READ_BITS.get(instruction.mnemonic.rsplit("_", 1)[-1], 32)


def facts(kernel):
    lines = [f"kernel {kernel.name}"]
    hot = kernel.hot_loop()
    if hot is None:
        # No contraction: the whole kernel's size, LDS traffic and
        # synchronization (a reduction's combine folded by one lane shows
        # as hundreds of LDS reads; one through LDS levels, as a barrier
        # per level), and its lane exchanges (a cross-lane reduction).
        counts = codeobject.mix(kernel.instructions)
        lines += [
            f"loops {len(kernel.loops())}",
            f"instructions {len(kernel.instructions)}",
            f"lds-reads {counts.get('lds_read', 0)}",
            f"global-stores {counts.get('global_store', 0)}",
            f"barriers {counts.get('barrier', 0)}",
            f"cross-lane {sum(codeobject.is_cross_lane(i) for i in kernel.instructions)}",
        ]
        return lines
    loop = kernel.instructions[hot[0] : hot[1] + 1]
    counts = codeobject.mix(loop)
    reads = [lds_read_bits(i) for i in loop if i.kind == "lds_read"]
    lines += [
        f"matrix {counts.get('matrix', 0)}",
        f"barriers {counts.get('barrier', 0)}",
        f"global-loads {counts.get('global_load', 0)}",
        f"global-stores {counts.get('global_store', 0)}",
        f"lds-reads {len(reads)}",
        f"lds-read-min-bits {min(reads, default=0)}",
        f"waits-before-matrix {'yes' if model.exposed_latency(loop) else 'no'}",
    ]
    outer = kernel.enclosing_loop(hot)
    if outer is not None:
        around = kernel.instructions[outer[0] : hot[0]] + kernel.instructions[hot[1] + 1 : outer[1] + 1]
        around_counts = codeobject.mix(around)
        lines += [
            f"around-global-loads {around_counts.get('global_load', 0)}",
            f"around-global-stores {around_counts.get('global_store', 0)}",
        ]
    else:
        lines.append("around none")
    return lines


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        text = Path(sys.argv[1]).read_text()
    except OSError as error:
        print(f"hot_loop.py: {error}", file=sys.stderr)
        sys.exit(1)
    for kernel in codeobject.kernels_of(text):
        print("\n".join(facts(kernel)))


if __name__ == "__main__":
    main()
