"""What one wave of a kernel executes, by running its integer and control
code: a small interpreter of the scalar unit, of the vector unit's integer
operations per lane and of the exec mask, over the assembly `codeobject`
reads. `model.estimate_streaming` times what it returns; from the command
line it says, per wave, what that is (for tests and for reading code):

    python3 benchmarks/amdgpu/interpreter.py KERNEL.s

Loops whose trip counts are not visible in the code as one constant (a
counter starting at the work-item id, exec-masked loops, LLVM's
out-of-line blocks that branch back into a loop) are thus counted as the
hardware would run them. Loaded values, floats and kernel arguments are
unknown; the run gives up (returns None) where a branch depends on one.
Work-group 0 is run: Tessel's and Triton's kernels here take the same
paths in every work-group (full blocks).
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import codeobject  # noqa: E402

MASK32 = (1 << 32) - 1
MASK64 = (1 << 64) - 1

REGISTER = re.compile(r"^(-?)([sv])(?:(\d+)|\[(\d+):(\d+)\])$")
SPECIAL = {
    "vcc": ("vcc_lo", "vcc_hi"),
    "vcc_lo": ("vcc_lo",),
    "exec": ("exec_lo", "exec_hi"),
    "exec_lo": ("exec_lo",),
    "m0": ("m0",),
}
# Instructions that write no register (their first operand is a source).
NO_DESTINATION = (
    "s_waitcnt",
    "s_wait_",
    "s_barrier",
    "s_nop",
    "s_cmp",
    "s_bitcmp",
    "s_sleep",
    "s_setprio",
    "s_set",
    "s_delay",
    "s_clause",
    "s_sendmsg",
    "s_dcache",
    "s_endpgm",
    "s_branch",
    "s_cbranch",
    "global_store",
    "buffer_store",
    "flat_store",
    "scratch_store",
    "ds_write",
    "ds_store",
    "global_atomic",
    "buffer_atomic",
)


class GaveUp(Exception):
    """The wave's path depends on a value the interpreter does not know."""


def split_operands(text):
    """Operands of an instruction (modifiers such as `offset:16` kept)."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def register_names(operand):
    """('s' | 'v', [names]) of a register operand, else None."""
    operand = operand.split()[0] if operand else operand
    if operand in SPECIAL:
        return "s", list(SPECIAL[operand])
    match = REGISTER.match(operand or "")
    if not match:
        return None
    _, file, single, low, high = match.groups()
    numbers = [int(single)] if single is not None else list(range(int(low), int(high) + 1))
    return file, [f"{file}{n}" for n in numbers]


def literal(operand):
    try:
        value = int(operand, 0)
    except ValueError:
        return None
    return value


def sign_extended_16(operand):
    """A SOPK instruction's 16-bit immediate as its `_i32` forms read it:
    sign-extended to 32 bits (`s_movk_i32 s0, 0xffc0` sets -64), or None."""
    value = literal(operand)
    if value is None:
        return None
    value &= 0xFFFF
    return (value - ((value & 0x8000) << 1)) & MASK32


class Wave:
    """Registers of one wave: scalars as ints (None: unknown), vectors as a
    list per lane (None: unknown in every lane), the exec mask and SCC."""

    def __init__(self, lanes, scalars):
        self.lanes = lanes
        self.scalars = dict(scalars)
        self.vectors = {}
        self.scc = None

    # Reading operands ------------------------------------------------------

    def scalar(self, operand, bits=32):
        """An operand's scalar value (a literal or SGPRs), or None."""
        value = literal(operand)
        if value is not None:
            return value & (MASK64 if bits == 64 else MASK32)
        names = register_names(operand)
        if names is None or names[0] != "s":
            return None
        words = [self.scalars.get(name) for name in names[1]]
        if None in words:
            return None
        return sum(word << (32 * shift) for shift, word in enumerate(words))

    def vcc_name(self):
        return "vcc" if self.lanes == 64 else "vcc_lo"

    def exec_name(self):
        return "exec" if self.lanes == 64 else "exec_lo"

    def exec_mask(self):
        low, high = self.scalars.get("exec_lo"), self.scalars.get("exec_hi", 0)
        if low is None or (self.lanes == 64 and high is None):
            raise GaveUp("exec unknown")
        return low | ((high or 0) << 32) if self.lanes == 64 else low

    def per_lane(self, operand, bits=32):
        """An operand's value per lane (list), or None where unknown."""
        names = register_names(operand)
        if names is not None and names[0] == "v":
            words = [self.vectors.get(name) for name in names[1]]
            if None in words:
                return None
            if len(words) == 1:
                return words[0]
            return lanewise(lambda low, high: low | (high << 32), words[0], words[1], mask=MASK64)
        value = self.scalar(operand, bits)
        return None if value is None else [value] * self.lanes

    # Writing results -------------------------------------------------------

    def set_scalar(self, operand, value):
        _, names = register_names(operand) or (None, [])
        for index, name in enumerate(names):
            self.scalars[name] = None if value is None else (value >> (32 * index)) & MASK32

    def set_vector(self, operand, values):
        """Writes `values` (per lane, or None) to the active lanes."""
        _, names = register_names(operand) or (None, [])
        mask = self.exec_mask()
        for index, name in enumerate(names):
            old = self.vectors.get(name) or [None] * self.lanes
            word = [None] * self.lanes if values is None else values
            self.vectors[name] = [
                (None if word[lane] is None else (word[lane] >> (32 * index)) & MASK32)
                if mask >> lane & 1
                else old[lane]
                for lane in range(self.lanes)
            ]

    def clobber(self, instruction, operands):
        """An instruction the interpreter does not evaluate: its destination
        (and the carry/flag output of `_co_` and `div_scale`) is unknown."""
        if instruction.mnemonic.startswith(NO_DESTINATION) or not operands:
            return
        self.forget(operands[0])
        if ("_co_" in instruction.mnemonic or "div_scale" in instruction.mnemonic) and len(operands) > 1:
            self.forget(operands[1])
        if instruction.mnemonic.startswith(("v_cmp_", "v_cmp_class")) and instruction.mnemonic.endswith("_e32"):
            self.forget("vcc")
        if instruction.mnemonic.startswith("v_cmpx"):
            raise GaveUp("exec from an unknown comparison")

    def forget(self, operand):
        names = register_names(operand)
        if names is None:
            return
        if names[0] == "s":
            for name in names[1]:
                self.scalars[name] = None
            if "exec_lo" in names[1]:
                raise GaveUp("exec unknown")
        else:
            for name in names[1]:
                self.vectors[name] = None


def bits_of(mnemonic):
    return 64 if mnemonic.endswith(("_b64", "_u64", "_i64")) else 32


def compare(kind, signed, bits, a, b):
    if signed:
        half = 1 << (bits - 1)
        a, b = (a ^ half) - half, (b ^ half) - half
    return {
        "eq": a == b,
        "lg": a != b,
        "ne": a != b,
        "lt": a < b,
        "le": a <= b,
        "gt": a > b,
        "ge": a >= b,
    }[kind]


COMPARISON = re.compile(r"^[sv]_cmpk?x?_(eq|lg|ne|lt|le|gt|ge)_([ui])(32|64)")
# By mnemonic without its type suffix (`s_and_b64` -> `s_and`).
SCALAR_BINARY = {
    "s_and": lambda a, b: a & b,
    "s_or": lambda a, b: a | b,
    "s_xor": lambda a, b: a ^ b,
    "s_andn2": lambda a, b: a & ~b,
    "s_and_not1": lambda a, b: a & ~b,
    "s_orn2": lambda a, b: a | ~b,
    "s_or_not1": lambda a, b: a | ~b,
    "s_lshl": lambda a, b: a << (b & 63),
    "s_lshr": lambda a, b: a >> (b & 63),
    "s_mul": lambda a, b: a * b,
}
VECTOR_BINARY = {
    "v_and_b32": lambda a, b: a & b,
    "v_or_b32": lambda a, b: a | b,
    "v_xor_b32": lambda a, b: a ^ b,
    "v_add_u32": lambda a, b: a + b,
    "v_add_nc_u32": lambda a, b: a + b,
    "v_sub_u32": lambda a, b: a - b,
    "v_sub_nc_u32": lambda a, b: a - b,
    "v_subrev_u32": lambda a, b: b - a,
    "v_subrev_nc_u32": lambda a, b: b - a,
    "v_lshlrev_b32": lambda a, b: b << (a & 31),
    "v_lshrrev_b32": lambda a, b: b >> (a & 31),
    "v_lshlrev_b64": lambda a, b: b << (a & 63),
    "v_lshrrev_b64": lambda a, b: b >> (a & 63),
    "v_mul_lo_u32": lambda a, b: a * b,
    "v_mul_u32_u24": lambda a, b: (a & 0xFFFFFF) * (b & 0xFFFFFF),
    "v_min_u32": min,
    "v_max_u32": max,
}


def base(mnemonic):
    """The mnemonic without its encoding suffix (`_e32`, `_e64`, `_sdwa`)."""
    return re.sub(r"_(e32|e64|e64_dpp|dpp|sdwa)$", "", mnemonic)


def step(wave, instruction):
    """Runs one instruction; returns ('branch', label) when it jumps, 'end'
    at s_endpgm, None otherwise."""
    if instruction.mnemonic.startswith("v_dual_"):
        # RDNA 3's VOPD: two vector instructions in one (`X :: Y`); each
        # reads its sources before either writes (they may not overlap).
        first, _, second = instruction.operands.partition("::")
        mnemonic, _, rest = second.strip().partition(" ")
        halves = [(instruction.mnemonic, first), (mnemonic, rest)]
        for half_mnemonic, half_operands in halves:
            half = type(instruction)("v_" + half_mnemonic[len("v_dual_") :], half_operands.strip(), "valu")
            step(wave, half)
        return None
    name = base(instruction.mnemonic)
    operands = split_operands(instruction.operands)
    bits = bits_of(name)
    if name == "s_endpgm":
        return "end"
    if name == "s_branch":
        return ("branch", operands[0])
    if name.startswith("s_cbranch_"):
        condition = name[len("s_cbranch_") :]
        if condition in ("scc0", "scc1"):
            if wave.scc is None:
                raise GaveUp("branch on an unknown comparison")
            taken = wave.scc == (condition == "scc1")
        elif condition in ("execz", "execnz"):
            taken = (wave.exec_mask() == 0) == (condition == "execz")
        elif condition in ("vccz", "vccnz"):
            vcc = wave.scalar(wave.vcc_name())
            if vcc is None:
                raise GaveUp("branch on an unknown vcc")
            taken = (vcc == 0) == (condition == "vccz")
        else:
            raise GaveUp(f"branch {name}")
        return ("branch", operands[0]) if taken else None
    if name.startswith(("s_setpc", "s_swappc", "s_getpc")):
        raise GaveUp(name)
    if instruction.mnemonic != name and not instruction.mnemonic.endswith(("_e32", "_e64")):
        # DPP and SDWA forms move or select lanes' bytes: not evaluated.
        wave.clobber(instruction, operands)
        return None
    try:
        evaluated = evaluate(wave, name, operands, bits)
    except (IndexError, TypeError):
        evaluated = False
    if not evaluated:
        wave.clobber(instruction, operands)
    return None


def evaluate(wave, name, operands, bits):
    """Evaluates the integer and mask instructions; False for the others."""
    mask = MASK64 if bits == 64 else MASK32
    if name == "s_movk_i32":
        wave.set_scalar(operands[0], sign_extended_16(operands[1]))
        return True
    if name.startswith("s_mov_b"):
        wave.set_scalar(operands[0], wave.scalar(operands[1], bits))
        return True
    if name in ("s_add_u32", "s_sub_u32", "s_addc_u32", "s_subb_u32", "s_add_i32", "s_sub_i32"):
        a, b = wave.scalar(operands[1]), wave.scalar(operands[2])
        carry = 0
        if name in ("s_addc_u32", "s_subb_u32"):
            carry = None if wave.scc is None else int(wave.scc)
        if None in (a, b, carry):
            wave.set_scalar(operands[0], None)
            wave.scc = None
            return True
        total = a - b - carry if "sub" in name else a + b + carry
        wave.set_scalar(operands[0], total & MASK32)
        if name.endswith("u32"):
            wave.scc = total < 0 or total > MASK32
        return True
    if name.startswith("s_cselect"):
        chosen = operands[1] if wave.scc else operands[2]
        wave.set_scalar(operands[0], None if wave.scc is None else wave.scalar(chosen, bits))
        return True
    if name.startswith(("s_not_b",)):
        a = wave.scalar(operands[1], bits)
        wave.set_scalar(operands[0], None if a is None else ~a & mask)
        wave.scc = None if a is None else (~a & mask) != 0
        return True
    function = SCALAR_BINARY.get(name.rsplit("_", 1)[0])
    if function is not None:
        a, b = wave.scalar(operands[1], bits), wave.scalar(operands[2], bits)
        value = None if None in (a, b) else function(a, b) & mask
        wave.set_scalar(operands[0], value)
        wave.scc = None if value is None else value != 0
        return True
    if "saveexec" in name:
        # s_and_saveexec: dst = exec; exec = op(src, exec).
        old = wave.exec_mask()
        source = wave.scalar(operands[1], bits)
        if source is None:
            raise GaveUp("exec from an unknown mask")
        operation = name.split("_saveexec")[0]
        new = {
            "s_and": source & old,
            "s_or": source | old,
            "s_andn2": source & ~old,
            "s_and_not1": source & ~old,
        }.get(operation)
        if new is None:
            raise GaveUp(name)
        wave.set_scalar(operands[0], old)
        wave.set_scalar(wave.exec_name(), new & ((1 << wave.lanes) - 1))
        wave.scc = new != 0
        return True
    match = COMPARISON.match(name)
    if match:
        kind, sign, width = match.groups()
        width = int(width)
        if name.startswith("s_"):
            a, b = wave.scalar(operands[0], width), wave.scalar(operands[1], width)
            if name.startswith("s_cmpk_") and sign == "i":
                b = sign_extended_16(operands[1])
            wave.scc = None if None in (a, b) else compare(kind, sign == "i", width, a, b)
            return True
        explicit = name.endswith("_e64") or (len(operands) == 3)
        destination = operands[0] if explicit else wave.vcc_name()
        sources = operands[1:] if explicit else operands
        a, b = wave.per_lane(sources[0], width), wave.per_lane(sources[1], width)
        active = wave.exec_mask()
        lanes = [lane for lane in range(wave.lanes) if active >> lane & 1]
        if a is None or b is None or any(a[lane] is None or b[lane] is None for lane in lanes):
            if "cmpx" in name:
                raise GaveUp("exec from an unknown comparison")
            wave.set_scalar(destination, None)
            return True
        low = (1 << width) - 1
        result = sum(1 << lane for lane in lanes if compare(kind, sign == "i", width, a[lane] & low, b[lane] & low))
        if "cmpx" in name:
            wave.set_scalar(wave.exec_name(), result)
        else:
            wave.set_scalar(destination, result)
        return True
    if not name.startswith("v_"):
        return False
    return evaluate_vector(wave, name, operands)


def lanewise(function, *inputs, mask=MASK32):
    """`function` of the inputs' values per lane; None in a lane where an
    input is unknown, None overall where an input is unknown everywhere."""
    if any(values is None for values in inputs):
        return None
    return [None if None in lane else function(*lane) & mask for lane in zip(*inputs, strict=True)]


THREE_OPERAND = {
    "v_lshl_add_u32": lambda x, y, z: (x << (y & 31)) + z,
    "v_add_lshl_u32": lambda x, y, z: (x + y) << (z & 31),
    "v_lshl_or_b32": lambda x, y, z: (x << (y & 31)) | z,
    "v_and_or_b32": lambda x, y, z: (x & y) | z,
    "v_or3_b32": lambda x, y, z: x | y | z,
    "v_add3_u32": lambda x, y, z: x + y + z,
    "v_mad_u32_u24": lambda x, y, z: (x & 0xFFFFFF) * (y & 0xFFFFFF) + z,
    "v_alignbit_b32": lambda high, low, shift: ((high << 32) | low) >> (shift & 31),
    "v_bfe_u32": lambda value, offset, width: (value >> (offset & 31)) & ((1 << (width & 31)) - 1),
}


def evaluate_vector(wave, name, operands):
    """The vector unit's integer instructions, per lane."""
    if name in ("v_mov_b32", "v_mov_b64"):
        wave.set_vector(operands[0], wave.per_lane(operands[1], 64 if name.endswith("64") else 32))
        return True
    if name == "v_pk_mov_b32":
        # Each half from either half of its source (op_sel).
        selects = re.search(r"op_sel:\[(\d),(\d)\]", ",".join(operands))
        low_high, high_high = (int(selects.group(1)), int(selects.group(2))) if selects else (0, 0)
        first, second = wave.per_lane(operands[1], 64), wave.per_lane(operands[2], 64)
        values = lanewise(
            lambda a, b: ((a >> 32 * low_high) & MASK32) | (((b >> 32 * high_high) & MASK32) << 32),
            first,
            second,
            mask=MASK64,
        )
        wave.set_vector(operands[0], values)
        return True
    if name in VECTOR_BINARY:
        wide = name.endswith("b64")
        a, b = wave.per_lane(operands[1]), wave.per_lane(operands[2], 64 if wide else 32)
        wave.set_vector(operands[0], lanewise(VECTOR_BINARY[name], a, b, mask=MASK64 if wide else MASK32))
        return True
    if name == "v_lshl_add_u64":
        a, shift, b = wave.per_lane(operands[1], 64), wave.per_lane(operands[2]), wave.per_lane(operands[3], 64)
        wave.set_vector(operands[0], lanewise(lambda x, s, y: (x << s) + y, a, shift, b, mask=MASK64))
        return True
    if name in THREE_OPERAND:
        inputs = [wave.per_lane(operand) for operand in operands[1:4]]
        wave.set_vector(operands[0], lanewise(THREE_OPERAND[name], *inputs))
        return True
    if name in ("v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_addc_co_u32", "v_add_co_ci_u32"):
        return add_with_carry(wave, name, operands)
    if name == "v_cndmask_b32":
        # dst = condition ? b : a, the condition a mask (vcc by default).
        condition = wave.scalar(operands[3] if len(operands) >= 4 else wave.vcc_name(), 64)
        a, b = wave.per_lane(operands[1]), wave.per_lane(operands[2])
        chosen = None if condition is None else [(condition >> lane) & 1 for lane in range(wave.lanes)]
        wave.set_vector(operands[0], lanewise(lambda x, y, take_b: y if take_b else x, a, b, chosen))
        return True
    if name == "v_readfirstlane_b32":
        values = wave.per_lane(operands[1])
        active = wave.exec_mask()
        first = next((lane for lane in range(wave.lanes) if active >> lane & 1), None)
        wave.set_scalar(operands[0], None if values is None or first is None else values[first])
        return True
    return False


def add_with_carry(wave, name, operands):
    """v_add_co_u32 and its kin: the sums per lane and the carry-out mask
    (unknown where an active lane's sum is)."""
    a, b = wave.per_lane(operands[2]), wave.per_lane(operands[3])
    carry_in = [0] * wave.lanes
    if name in ("v_addc_co_u32", "v_add_co_ci_u32"):
        mask = wave.scalar(operands[4]) if len(operands) > 4 else None
        carry_in = None if mask is None else [(mask >> lane) & 1 for lane in range(wave.lanes)]
    functions = {
        "v_sub_co_u32": lambda x, y, c: x - y,
        "v_subrev_co_u32": lambda x, y, c: y - x,
    }
    totals = lanewise(functions.get(name, lambda x, y, c: x + y + c), a, b, carry_in, mask=-1)
    active = wave.exec_mask()
    carries = None
    if totals is not None and all(totals[lane] is not None for lane in range(wave.lanes) if active >> lane & 1):
        carries = sum(1 << lane for lane, t in enumerate(totals) if active >> lane & 1 and (t < 0 or t > MASK32))
    wave.set_vector(operands[0], None if totals is None else [None if t is None else t & MASK32 for t in totals])
    wave.set_scalar(operands[1], carries)
    return True


def run(kernel, wave_index, wave_size, workgroup_size, limit=2_000_000, workgroup_id=0):
    """The instructions wave `wave_index` of work-group `workgroup_id` (x)
    executes, in order, or None where its path depends on an unknown value."""
    user = kernel.metadata.get("user_sgpr_count", 0)
    scalars = {
        f"s{user}": workgroup_id,
        "exec_lo": MASK32 if wave_size == 32 else MASK32,
        "exec_hi": MASK32,
        "m0": None,
    }
    lanes_here = min(wave_size, workgroup_size - wave_index * wave_size)
    full = (1 << lanes_here) - 1
    scalars["exec_lo"], scalars["exec_hi"] = full & MASK32, (full >> 32) & MASK32
    wave = Wave(wave_size, scalars)
    # v0: the work-item id (x; y and z are 0 in these one-dimensional launches).
    wave.vectors["v0"] = [wave_index * wave_size + lane for lane in range(wave_size)]
    executed, index = [], 0
    instructions = kernel.instructions
    try:
        while index < len(instructions):
            if len(executed) >= limit:
                raise GaveUp("too long")
            instruction = instructions[index]
            executed.append(instruction)
            outcome = step(wave, instruction)
            if outcome == "end":
                return executed
            if outcome is None:
                index += 1
                continue
            target = kernel.labels.get(outcome[1])
            if target is None:
                raise GaveUp(f"unknown label {outcome[1]}")
            index = target
    except GaveUp:
        return None
    return executed


def workgroup(kernel, wave_size, workgroup_id=0):
    """Every wave of work-group `workgroup_id` (0 unless asked): one list of
    executed instructions per wave, or None where any cannot be run."""
    threads = kernel.metadata.get("max_flat_workgroup_size", 256)
    waves = []
    for index in range(max(1, -(-threads // wave_size))):
        executed = run(kernel, index, wave_size, threads, workgroup_id=workgroup_id)
        if executed is None:
            return None
        waves.append(executed)
    return waves


def round_trips(executed):
    """Times a wave waits for global loads it issued (a run of loads and
    then waits for any of them is one round trip to memory)."""
    waiting, trips = False, 0
    for instruction in executed:
        if instruction.kind == "global_load":
            waiting = True
        elif instruction.kind == "wait_vm" and waiting:
            trips += 1
            waiting = False
    return trips


KINDS = ("global_load", "global_store")


def facts(kernel, workgroup_id=0):
    """One line per fact: per wave, the instructions it executes, the
    global bytes one of its lanes loads and stores, the round trips to
    memory it waits for, and how often it runs the target
    of each backward branch (a loop's trips; once for an out-of-line
    block that branches back)."""
    wave_size = kernel.metadata.get("wavefront_size", 64)
    waves = workgroup(kernel, wave_size, workgroup_id)
    lines = [f"kernel {kernel.name}"] + ([f"work-group {workgroup_id}"] if workgroup_id else [])
    if waves is None:
        return lines + ["unknown: a branch depends on a value not in the code"]
    names = {index: label for label, index in kernel.labels.items()}
    for number, executed in enumerate(waves):
        loaded, stored = (sum(codeobject.access_bytes(i) for i in executed if i.kind == kind) for kind in KINDS)
        lines.append(
            f"wave {number} executes {len(executed)} loads {loaded} stores {stored} bytes per lane "
            f"in {round_trips(executed)} round trips"
        )
        for start, _ in kernel.loops():
            head = kernel.instructions[start]
            trips = sum(instruction is head for instruction in executed)
            lines.append(f"wave {number} runs {names.get(start, start)} {trips} times")
    return lines


def main():
    usage = "usage: interpreter.py KERNEL.s [--workgroup N]"
    # --workgroup N runs work-group N (x) instead of 0: a grid's edge
    # program, say, which may take another path.
    workgroup_id = 0
    if "--workgroup" in sys.argv:
        at = sys.argv.index("--workgroup")
        try:
            workgroup_id = int(sys.argv[at + 1])
        except (IndexError, ValueError):
            print(usage, file=sys.stderr)
            sys.exit(2)
        del sys.argv[at : at + 2]
    codeobject.print_facts(lambda kernel: facts(kernel, workgroup_id), "interpreter.py", usage)


if __name__ == "__main__":
    main()
