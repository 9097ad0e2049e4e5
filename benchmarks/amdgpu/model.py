"""The time model of benchmarks/amdgpu (see README.md): occupancy from
registers and LDS, and a contraction's time from its hot loop's issue
cycles and the global-load latency each iteration waits for."""

import itertools
import math

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

# Latency (cycles) of a global load that must complete before the matrix
# instructions can start: an L2 hit on CDNA 3 is ~300-500 cycles, HBM
# ~700-900; the operands of a tiled matmul mostly hit L2.
GLOBAL_LATENCY = 500

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
    vgprs = metadata.get("vgpr_count", 0)
    if chip != "gfx1100":
        # Unified register file: AGPRs follow the VGPRs (4-aligned).
        vgprs = math.ceil(vgprs / 4) * 4 + metadata.get("agpr_count", 0)
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


def expand(kernel, start, end, trips):
    """Instructions start..end as executed, the loops nested in them
    repeated `trips` times."""
    nested = outermost_nested(kernel, start, end)
    executed, index = [], start
    while index <= end:
        span = next((s for s in nested if s[0] == index), None)
        if span is None:
            executed.append(kernel.instructions[index])
            index += 1
            continue
        executed.extend(kernel.instructions[span[0] : span[1] + 1] * trips)
        index = span[1] + 1
    return executed


def iteration(kernel, loop, expected_bytes):
    """One iteration of `loop` (first, last) as executed: nested loops'
    bodies repeated as often as the operand bytes the iteration must load
    (`expected_bytes` per lane) require — their trip counts are not in the
    code, the bytes they move are."""
    start, end = loop
    inside = {index for s, e in outermost_nested(kernel, start, end) for index in range(s, e + 1)}
    instructions = kernel.instructions

    def loaded(indices):
        return sum(codeobject.access_bytes(instructions[i]) for i in indices if instructions[i].kind == "global_load")

    body_bytes = loaded(i for i in range(start, end + 1) if i not in inside)
    nested_bytes = loaded(inside)
    trips = 1
    if nested_bytes:
        trips = max(1, round((expected_bytes - body_bytes) / nested_bytes))
    return expand(kernel, start, end, trips), trips


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


def fma_iteration(kernel, loop, block, element_bytes, threads, wave):
    """One iteration of the FMA k loop as executed: the iteration's own
    global loads are the next chunk of A and B (k of it: bytes x items /
    ((bm + bn) x element bytes)), and the loops over k steps nested in it
    repeat as often as that chunk's multiply-adds for the wave require."""
    start, end = loop
    nested = outermost_nested(kernel, start, end)
    inside = {i for s, e in nested for i in range(s, e + 1)}
    own = [kernel.instructions[i] for i in range(start, end + 1) if i not in inside]
    chunk = (
        sum(codeobject.access_bytes(i) for i in own if i.kind == "global_load")
        * threads
        / ((block[0] + block[1]) * element_bytes)
    )
    needed = chunk * block[0] * block[1] / (threads // wave)
    nested_work = contraction_work([kernel.instructions[i] for i in sorted(inside)], wave)
    trips = 1
    if nested_work:
        trips = max(1, round((needed - contraction_work(own, wave)) / nested_work))
    return expand(kernel, start, end, trips), trips


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


def estimate_contraction(kernel, lds, chip, shape, block, element_bytes, outer_trips):
    """Estimated time of a contraction kernel computing an m x n x k `shape`
    in `block` output tiles, from its hot loop (the k loop): each wave's
    iteration occupies its SIMD for the iteration's issue cycles; waiting
    for the iteration's own global loads adds their latency, which the
    other waves resident on the SIMD hide as far as they can. The work of
    the loop around it (accumulators in and out per k step of the grid)
    counts `outer_trips` times per wave, likewise. Returns a dict: `us`
    (with the kernel's occupancy), `serial_us` (one wave per SIMD: every
    latency exposed), the iteration's issue and exposed cycles."""
    spec = CHIPS[chip]
    hot, nested_trips = kernel.hot_loop(), 1
    if hot is None:
        hot = fma_loop(kernel)
    waves = occupancy(kernel.metadata, lds, chip)
    if hot is None or waves == 0:
        return None
    wave = spec["wave_size"]
    threads = kernel.metadata.get("max_flat_workgroup_size", 256)
    waves_per_group = threads // wave
    m, n, k = shape
    body = kernel.instructions[hot[0] : hot[1] + 1]
    compute = "matrix" if matrix_work(body) else "fma"
    if compute == "matrix":
        work = matrix_work(body)
        k_per_iteration = work * waves_per_group / (block[0] * block[1])
        expected = (block[0] + block[1]) * k_per_iteration * element_bytes / threads
        executed, trips = iteration(kernel, hot, expected)
    else:
        # The FMA path: loops over k steps nested in the k loop (their
        # trips from the chunk's work), and run as often around it.
        executed, trips = fma_iteration(kernel, hot, block, element_bytes, threads, wave)
        work, nested_trips = contraction_work(executed, wave), trips
    issue = sum(issue_cycles(instruction, wave) for instruction in executed)
    exposed = exposed_latency(executed, compute)
    around_issue = around_exposed = around_work = 0
    outer = kernel.enclosing_loop(hot)
    if outer is not None and outer_trips > 1:
        around = expand(kernel, outer[0], hot[0] - 1, nested_trips) + expand(kernel, hot[1] + 1, outer[1], nested_trips)
        around_issue = sum(issue_cycles(instruction, wave) for instruction in around)
        around_exposed = exposed_latency(around, compute)
        around_work = matrix_work(around) if compute == "matrix" else contraction_work(around, wave)
    total_waves = m * n / (block[0] * block[1]) * waves_per_group
    # The hot loop's iterations: the rest of each wave's matrix work.
    wave_iterations = (m * n * k - total_waves * outer_trips * around_work) / work
    simds = spec["cus"] * spec["simds"]
    hertz = spec["clock_ghz"] * 1e9

    def microseconds(resident):
        cycles = wave_iterations * max(issue, (issue + exposed) / resident)
        cycles += total_waves * outer_trips * max(around_issue, (around_issue + around_exposed) / resident)
        return cycles / simds / hertz * 1e6

    return {
        "us": microseconds(waves),
        "serial_us": microseconds(1),
        "issue": issue,
        "exposed": exposed,
        "nested_trips": trips,
    }


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
