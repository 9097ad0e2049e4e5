"""What the hot loop of each kernel in an AMDGPU assembly file does, one
fact per line, for structural tests (test/gpu/tessel-to-rocm.mlir) and
for reading code by hand:

    python3 benchmarks/amdgpu/hot_loop.py KERNEL.s

The hot loop is a contraction's k loop (of the innermost loops holding
matrix instructions, the one with the most); `around` facts describe the
loop enclosing it (a sub-block loop, or a grid's arbitrary axis), or say
`around none`. Without matrix
instructions, the kernel's loops are summarized instead, followed, where
a loop does multiply-adds, by `fma-` facts of the innermost loop with the
most (the FMA path's loop over k steps) and the global traffic of the loops
enclosing it (`chunk`: the k-chunk loop, `outer`: the one around that)."""

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
            f"global-loads {counts.get('global_load', 0)}",
            f"global-stores {counts.get('global_store', 0)}",
            f"barriers {counts.get('barrier', 0)}",
            f"cross-lane {sum(codeobject.is_cross_lane(i) for i in kernel.instructions)}",
        ]
        return lines + fma_facts(kernel)
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
    # The fewest loads a wait in the loop leaves in flight: at least a
    # chunk's worth where the loads run more than one chunk ahead.
    in_flight = [model.waits_for(i).get("vm") for i in loop if i.kind == "wait_vm"]
    in_flight = [count for count in in_flight if count is not None]
    lines.append(f"wait-vm-min {min(in_flight) if in_flight else 'none'}")
    return lines


def fma_facts(kernel):
    """The FMA loop's multiply-adds per lane, LDS reads and global
    traffic, and the global traffic of the loops around it."""
    # The innermost loop with the most multiply-adds: the loop over k steps
    # (LLVM may also unroll a chunk's steps into the loops around it).
    loops = kernel.loops()
    innermost = [(s, e) for s, e in loops if not any(s < s2 and e2 < e for s2, e2 in loops)]
    counted = [(sum(codeobject.fma_lanes(i) for i in kernel.instructions[s : e + 1]), (s, e)) for s, e in innermost]
    best = max(counted, default=(0, None), key=lambda entry: entry[0])
    if best[0] == 0:
        return []
    hot = best[1]
    loop = kernel.instructions[hot[0] : hot[1] + 1]
    counts = codeobject.mix(loop)
    reads = [lds_read_bits(i) for i in loop if i.kind == "lds_read"]
    fmas = sum(codeobject.fma_lanes(i) for i in loop)
    lines = [
        f"fma-loop-fmas {fmas}",
        f"fma-loop-lds-reads {len(reads)}",
        f"fma-loop-fmas-per-lds-read {fmas // max(1, len(reads))}",
        f"fma-loop-lds-read-min-bits {min(reads, default=0)}",
        f"fma-loop-global-loads {counts.get('global_load', 0)}",
        f"fma-loop-global-stores {counts.get('global_store', 0)}",
    ]
    inner = hot
    for name in ("chunk", "outer"):
        enclosing = kernel.enclosing_loop(inner)
        if enclosing is None:
            lines.append(f"fma-{name} none")
            break
        around = codeobject.mix(kernel.instructions[enclosing[0] : enclosing[1] + 1])
        lines += [
            f"fma-{name}-global-loads {around.get('global_load', 0)}",
            f"fma-{name}-global-stores {around.get('global_store', 0)}",
        ]
        inner = enclosing
    return lines


def main():
    codeobject.print_facts(facts, "hot_loop.py", __doc__)


if __name__ == "__main__":
    main()
