"""The time model of benchmarks/amdgpu (see README.md): occupancy from
registers and LDS, a contraction's time from what one wave executes (its
issue cycles and the cycles it stalls waiting for memory, in order), a
memory-bound kernel's from bytes, issue cycles and round trips."""

import collections
import itertools
import math
import re

import codeobject
import interpreter

# Per chip: the product it is estimated for and its published figures
# (per device: one GCD of an MI250X), plus the issue model's constants.
CHIPS = {
    "gfx90a": {
        "product": "MI250X (one GCD)",
        "wave_size": 64,
        "cus": 110,
        "clock_ghz": 1.7,
        "dram_gbps": 1638,
        "llc_gbps": 3500,  # L2 of one GCD (no Infinity Cache)
        "simds": 4,
        "max_waves": 8,
        "registers": 512,  # VGPRs + AGPRs per lane, per SIMD
        "register_granule": 8,
        "lds": 65536,
    },
    "gfx942": {
        "product": "MI300X",
        "wave_size": 64,
        "cus": 304,
        "clock_ghz": 2.1,
        "dram_gbps": 5300,
        "llc_gbps": 17200,  # Infinity Cache (MALL) peak
        "simds": 4,
        "max_waves": 8,
        "registers": 512,
        "register_granule": 8,
        "lds": 65536,
    },
    "gfx1100": {
        "product": "RX 7900 XTX",
        "wave_size": 32,
        "cus": 96,
        "clock_ghz": 2.5,
        "dram_gbps": 960,
        "llc_gbps": 3500,  # Infinity Cache, AMD's effective figure
        "simds": 2,
        "max_waves": 16,
        "registers": 1536,
        "register_granule": 16,
        "lds": 65536,
    },
}

# Issue cycles of the matrix instructions (a SIMD's matrix pipe is busy
# that long: 4 cycles per pass), from AMD's CDNA 2/3 ISA guides and
# RDNA 3's WMMA rate; (m, n, k) they compute.
MATRIX = {
    "v_mfma_f32_16x16x4f32": (32, (16, 16, 4)),
    "v_mfma_f32_16x16x4_f32": (32, (16, 16, 4)),
    "v_mfma_f32_32x32x2f32": (64, (32, 32, 2)),
    "v_mfma_f32_32x32x2_f32": (64, (32, 32, 2)),
    "v_mfma_i32_16x16x16i8": (32, (16, 16, 16)),
    "v_mfma_i32_16x16x32_i8": (16, (16, 16, 32)),
    "v_mfma_i32_32x32x8i8": (64, (32, 32, 8)),
    "v_mfma_i32_32x32x16_i8": (32, (32, 32, 16)),
    "v_wmma_i32_16x16x16_iu8": (32, (16, 16, 16)),
}

# Latency (cycles) of a contraction's global load: an L2 hit on CDNA 3 is
# ~300-500 cycles, HBM ~700-900; the operands of a tiled matmul mostly hit
# L2 (Tessel's software pipeline assumes the same: Chip::global_latency).
GLOBAL_LATENCY = 500

# Latency (cycles) of an LDS access and of a scalar load (constant cache).
LDS_LATENCY = 64
SCALAR_LATENCY = 200

# Latency (cycles) of a streaming kernel's global load: its data comes
# from HBM (~700-900 cycles on CDNA 3), not from a tile's L2 reuse.
STREAM_LATENCY = 800


def issue_cycles(instruction, wave_size):
    """Cycles a wave's instruction occupies its SIMD."""
    if instruction.kind == "matrix":
        return MATRIX.get(instruction.mnemonic, (32, None))[0]
    vector_pass = 4 if wave_size == 64 else 1  # SIMD16 x 4 on CDNA, SIMD32 on RDNA 3
    if instruction.kind in (
        "valu",
        "fma",
        "lds_read",
        "lds_write",
        "lds_other",
        "global_load",
        "global_store",
        "scratch",
    ):
        return vector_pass
    return 1


def occupancy(metadata, lds, chip):
    """Waves per SIMD: limited by registers, LDS and the hardware."""
    spec = CHIPS[chip]
    granule = spec["register_granule"]
    # On CDNA's unified register file the code object's vgpr_count is
    # already the total: VGPRs (4-aligned) and the AGPRs after them
    # (Triton's 256x256 four-warp kernel: 256 + 246 = 502).
    vgprs = metadata.get("vgpr_count", 0)
    per_wave = max(granule, math.ceil(vgprs / granule) * granule)
    by_registers = spec["registers"] // per_wave
    threads = metadata.get("max_flat_workgroup_size", 256)
    waves_per_group = max(1, threads // spec["wave_size"])
    groups_by_lds = spec["lds"] // lds if lds else 1 << 30
    by_lds = groups_by_lds * waves_per_group // spec["simds"]
    return max(0, min(spec["max_waves"], by_registers, by_lds))


def outermost_nested(kernel, start, end):
    """The loops nested in instructions start..end, outermost only."""
    nested = [span for span in kernel.loops() if start <= span[0] and span[1] <= end and span != (start, end)]
    return [span for span in nested if not any(o[0] < span[0] and span[1] < o[1] for o in nested)]


def fma_loop(kernel):
    """The FMA path's k loop: the innermost loop that loads global memory
    itself (the operands) and does multiply-adds (itself or in the loops
    over k steps nested in it). None without one."""
    loops = kernel.loops()
    candidates = []
    for start, end in loops:
        inside = {i for s, e in outermost_nested(kernel, start, end) for i in range(s, e + 1)}
        own = [kernel.instructions[i] for i in range(start, end + 1) if i not in inside]
        loads = any(instruction.kind == "global_load" for instruction in own)
        fmas = any(instruction.kind == "fma" for instruction in kernel.instructions[start : end + 1])
        if loads and fmas:
            candidates.append((start, end))
    return min(candidates, key=lambda span: span[1] - span[0], default=None)


COUNTER = re.compile(r"(vmcnt|lgkmcnt)\((\d+)\)")


def waits_for(instruction):
    """The counters an `s_waitcnt` waits on and the operations each may
    leave outstanding: {"vm": N, "lgkm": N}."""
    counts = {}
    if instruction.mnemonic == "s_waitcnt":
        for counter, count in COUNTER.findall(instruction.operands):
            counts["vm" if counter == "vmcnt" else "lgkm"] = int(count)
    elif instruction.mnemonic in ("s_waitcnt_vmcnt", "s_wait_loadcnt"):
        counts["vm"] = int(instruction.operands.split(",")[-1].strip(), 0)
    return counts


def in_order(executed, wave_size):
    """A wave's (issue, stalled) cycles running `executed` alone on its
    SIMD, in order: each instruction issues once the one before it has
    (`issue_cycles`); a global or scratch load's data arrives
    GLOBAL_LATENCY cycles after it issued, an LDS access's LDS_LATENCY
    and a scalar load's SCALAR_LATENCY after; `s_waitcnt vmcnt(N)` /
    `lgkmcnt(N)` hold the wave until at most N of its operations on that
    counter are outstanding (taken to complete in order). CDNA counts
    stores in vmcnt; RDNA 3 keeps them apart (vscnt), never waited for
    here."""
    queues = {"vm": collections.deque(), "lgkm": collections.deque()}
    now = stalled = 0
    for instruction in executed:
        for counter, keep in waits_for(instruction).items():
            queue = queues[counter]
            while len(queue) > keep:
                ready = queue.popleft()
                if ready > now:
                    stalled += ready - now
                    now = ready
        now += issue_cycles(instruction, wave_size)
        kind = instruction.kind
        stores_counted = wave_size == 64 and kind == "global_store"
        if kind == "global_load" or stores_counted or instruction.mnemonic.startswith("scratch_load"):
            queues["vm"].append(now + GLOBAL_LATENCY)
        elif kind in ("lds_read", "lds_write", "lds_other"):
            queues["lgkm"].append(now + LDS_LATENCY)
        elif kind == "scalar_memory":
            queues["lgkm"].append(now + SCALAR_LATENCY)
    return now - stalled, stalled


def exposed_latency(executed, compute="matrix"):
    """Cycles an iteration waits for global loads it issued itself before
    its first `compute` instruction (matrix, or fma on the FMA path; loads
    issued later overlap the compute; so does waiting for them after)."""
    before_compute = itertools.takewhile(lambda instruction: instruction.kind != compute, executed)
    return interpreter.round_trips(before_compute) * GLOBAL_LATENCY


def matrix_work(instructions):
    """Multiply-adds the matrix instructions among `instructions` compute."""
    return sum(
        math.prod(MATRIX.get(instruction.mnemonic, (32, (16, 16, 4)))[1])
        for instruction in instructions
        if instruction.kind == "matrix"
    )


def contraction_work(instructions, wave):
    """Multiply-adds a wave computes running `instructions`: its matrix
    instructions' tiles and its FMAs' lanes."""
    return matrix_work(instructions) + wave * sum(codeobject.fma_lanes(i) for i in instructions)


def estimate_contraction(kernel, lds, chip, shape):
    """Estimated time of a contraction kernel computing an m x n x k
    `shape`, from what wave 0 of a work-group executes
    (`interpreter.run`: every loop's real trips, prologues and zero fills
    included): its issue cycles, and the cycles it stalls on memory,
    waiting for loads issued too late to arrive (`in_order`); the other
    waves resident on its SIMD hide stalls as far as they can. The waves
    needed are the contraction's multiply-adds over the wave's. Returns a
    dict: `us` (with the kernel's occupancy), `serial_us` (one wave per
    SIMD: every stall exposed), the wave's `issue` and stalled (`exposed`)
    cycles; None where the run depends on a value not in the code."""
    spec = CHIPS[chip]
    waves = occupancy(kernel.metadata, lds, chip)
    if waves == 0:
        return None
    wave = spec["wave_size"]
    threads = kernel.metadata.get("max_flat_workgroup_size", 256)
    executed = interpreter.run(kernel, 0, wave, threads)
    if executed is None:
        return None
    work = contraction_work(executed, wave)
    if work == 0:
        return None
    issue, stalled = in_order(executed, wave)
    m, n, k = shape
    total_waves = m * n * k / work
    simds = spec["cus"] * spec["simds"]
    hertz = spec["clock_ghz"] * 1e9

    def microseconds(resident):
        cycles = total_waves * max(issue, (issue + stalled) / resident)
        return cycles / simds / hertz * 1e6

    return {"us": microseconds(waves), "serial_us": microseconds(1), "issue": issue, "exposed": stalled}


def lane_bytes(instructions):
    """Global bytes one lane loads and stores running `instructions`."""
    return sum(codeobject.access_bytes(i) for i in instructions if i.kind in ("global_load", "global_store"))


def estimate_streaming(kernel, lds, chip, programs, compulsory_bytes):
    """Estimated time of a memory-bound kernel, from the instructions each
    wave of a work-group executes (`interpreter.workgroup`: its integer and control
    code run, so every loop counts its real trips):
    the slowest of (1) DRAM: the bytes the computation must move (inputs
    read once, outputs written once; the same for every compiler) at the
    chip's bandwidth, (2) the last-level cache: the bytes the code moves
    (re-reads included) at its bandwidth, (3) the SIMDs: every wave's issue
    cycles plus, per round trip to memory, STREAM_LATENCY cycles that the
    other resident waves hide as far as they can. Returns a dict like
    `estimate_contraction`'s (`issue`, `exposed`: a wave's mean issue
    cycles and round trips x latency), or None where a wave's path depends
    on a value the run does not know."""
    spec = CHIPS[chip]
    waves = occupancy(kernel.metadata, lds, chip)
    if waves == 0:
        return None
    wave_size = spec["wave_size"]
    executed = interpreter.workgroup(kernel, wave_size)
    if executed is None:
        return None
    total_waves = programs * len(executed)

    def mean(measure):
        return sum(measure(instructions) for instructions in executed) / len(executed)

    issue = mean(lambda instructions: sum(issue_cycles(i, wave_size) for i in instructions))
    exposed = mean(interpreter.round_trips) * STREAM_LATENCY
    simds = spec["cus"] * spec["simds"]
    hertz = spec["clock_ghz"] * 1e9
    dram_us = compulsory_bytes / (spec["dram_gbps"] * 1e9) * 1e6
    llc_us = total_waves * wave_size * mean(lane_bytes) / (spec["llc_gbps"] * 1e9) * 1e6

    def microseconds(resident):
        cycles = total_waves * max(issue, (issue + exposed) / resident)
        return max(dram_us, llc_us, cycles / simds / hertz * 1e6)

    return {
        "us": microseconds(waves),
        "serial_us": microseconds(1),
        "issue": round(issue),
        "exposed": round(exposed),
    }
