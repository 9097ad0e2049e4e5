"""Reading AMDGPU assembly as LLVM's AMDGPU backend prints it (Tessel's
`--emit asm`, Triton's `asm["amdgcn"]`): the kernel's resource metadata,
its loops and the instruction mix of its hot loop."""

import re
import sys
from pathlib import Path
from dataclasses import dataclass, field

METADATA_KEYS = (
    "vgpr_count",
    "agpr_count",
    "sgpr_count",
    "group_segment_fixed_size",
    "private_segment_fixed_size",
    "vgpr_spill_count",
    "sgpr_spill_count",
    "wavefront_size",
    "max_flat_workgroup_size",
)

# Mnemonic prefixes by class, most specific first.
CLASSES = (
    ("matrix", ("v_mfma", "v_smfmac", "v_wmma")),
    ("global_load", ("global_load", "buffer_load", "flat_load")),
    ("global_store", ("global_store", "buffer_store", "flat_store")),
    ("global_atomic", ("global_atomic", "buffer_atomic", "flat_atomic")),
    # Spilled registers' traffic (private memory).
    ("scratch", ("scratch_",)),
    ("lds_read", ("ds_read", "ds_load")),
    ("lds_write", ("ds_write", "ds_store")),
    ("lds_other", ("ds_",)),
    # Multiply-adds of the FMA contraction path (and of other math).
    ("fma", ("v_fma_f", "v_fmac_f", "v_pk_fma_f", "v_dual_fmac")),
    ("wait_vm", ()),  # s_waitcnt naming vmcnt / s_wait_loadcnt: classified below
    ("wait", ("s_waitcnt", "s_wait_")),
    ("barrier", ("s_barrier",)),
    ("branch", ("s_branch", "s_cbranch")),
    ("scalar_memory", ("s_load", "s_buffer_load")),
    ("salu", ("s_",)),
    ("valu", ("v_",)),
)


def classify(mnemonic, operands):
    if mnemonic in ("s_waitcnt", "s_waitcnt_vmcnt") and ("vmcnt" in operands or mnemonic.endswith("vmcnt")):
        return "wait_vm"
    if mnemonic == "s_wait_loadcnt":
        return "wait_vm"
    if mnemonic.startswith("v_dual_") and "v_dual_fmac" in operands:
        return "fma"
    for name, prefixes in CLASSES:
        if any(mnemonic.startswith(prefix) for prefix in prefixes):
            return name
    return "other"


# Lane exchanges within a wave: DPP forms (`v_add_f32_dpp ... row_shr:1`),
# swizzles and permutes through the LDS crossbar, permlanes, readlane.
CROSS_LANE_PREFIXES = ("ds_swizzle", "ds_bpermute", "ds_permute", "v_permlane", "v_readlane")


def fma_lanes(instruction):
    """Multiply-adds one lane computes with an `fma` instruction: two for
    packed (`v_pk_fma_f32`) and for RDNA 3's dual issue when both halves
    are FMAs (`v_dual_fmac_f32 ... :: v_dual_fmac_f32 ...`)."""
    if instruction.kind != "fma":
        return 0
    if instruction.mnemonic.startswith("v_pk_fma"):
        return 2
    if instruction.mnemonic.startswith("v_dual_"):
        return ("fmac" in instruction.mnemonic) + instruction.operands.count("v_dual_fmac")
    return 1


def is_cross_lane(instruction):
    """Does the instruction move values between the lanes of a wave?"""
    return "_dpp" in instruction.mnemonic or instruction.mnemonic.startswith(CROSS_LANE_PREFIXES)


# Bytes per lane of a global load or store, by mnemonic suffix.
ACCESS_BYTES = {
    "dwordx4": 16,
    "b128": 16,
    "dwordx3": 12,
    "b96": 12,
    "dwordx2": 8,
    "b64": 8,
    "dword": 4,
    "b32": 4,
    "short": 2,
    "ushort": 2,
    "sshort": 2,
    "u16": 2,
    "i16": 2,
    "b16": 2,
    "byte": 1,
    "ubyte": 1,
    "sbyte": 1,
    "u8": 1,
    "i8": 1,
}


def access_bytes(instruction):
    """Bytes one lane moves with a global load or store."""
    suffix = instruction.mnemonic.rsplit("_", 1)[-1]
    return ACCESS_BYTES.get(suffix, 4)


@dataclass
class Instruction:
    mnemonic: str
    operands: str
    kind: str


@dataclass
class Kernel:
    """One kernel of an assembly file."""

    name: str
    metadata: dict
    instructions: list
    labels: dict = field(default_factory=dict)  # label -> index of the next instruction

    def loops(self):
        """(first, last) instruction indices of each loop: a branch back to
        a label above it."""
        found = []
        for index, instruction in enumerate(self.instructions):
            if instruction.kind != "branch":
                continue
            target = instruction.operands.split(",")[0].strip()
            start = self.labels.get(target)
            if start is not None and start <= index:
                found.append((start, index))
        return found

    def hot_loop(self):
        """A contraction's k loop: of the loops with matrix instructions of
        their own and none in loops nested in them (a pipelined loop's
        prologue and epilogue chunks sit in the loop around it, which can
        hold more), the one with the most (the shortest of equals). None
        without matrix instructions in a loop."""
        loops = self.loops()

        def own_matrix(start, end):
            nested = {i for s, e in loops if start < s and e < end for i in range(s, e + 1)}
            return sum(self.instructions[i].kind == "matrix" for i in range(start, end + 1) if i not in nested)

        counts = {loop: own_matrix(*loop) for loop in loops}
        innermost = [
            (start, end)
            for (start, end), count in counts.items()
            if count and not any(start < s and e < end and counts[(s, e)] for s, e in loops)
        ]
        return max(innermost, key=lambda loop: (counts[loop], -(loop[1] - loop[0])), default=None)

    def enclosing_loop(self, loop):
        """The innermost loop strictly containing `loop`, if any."""
        outer = [(s, e) for s, e in self.loops() if s <= loop[0] and e >= loop[1] and (s, e) != loop]
        return min(outer, key=lambda span: span[1] - span[0], default=None)


def mix(instructions):
    counts = {}
    for instruction in instructions:
        counts[instruction.kind] = counts.get(instruction.kind, 0) + 1
    return counts


def widths(instructions, kind):
    """Mnemonics of `kind` with their counts, e.g. LDS reads by width."""
    counts = {}
    for instruction in instructions:
        if instruction.kind == kind:
            counts[instruction.mnemonic] = counts.get(instruction.mnemonic, 0) + 1
    return counts


LINE = re.compile(r"^\s+([a-z_][a-z0-9_.]*)\s*(.*?)\s*(?:;.*)?$")
LABEL = re.compile(r"^([.A-Za-z_][\w.$]*):")
METADATA = re.compile(r"\.amdgpu_metadata\n(.*?)\.end_amdgpu_metadata", re.S)
DESCRIPTOR = re.compile(r"\.amdhsa_kernel (\S+)\n(.*?)\.end_amdhsa_kernel", re.S)


def kernel_metadata(text):
    """{kernel name: {key: int}} from the code object's metadata (YAML: one
    `- .key: value` list entry per kernel under `amdhsa.kernels`)."""
    found = {}
    block = METADATA.search(text)
    for entry in re.split(r"\n  - ", block.group(1) if block else "")[1:]:
        fields = dict(re.findall(r"^\s*\.(\w+):\s*(\S+)\s*$", "  " + entry, re.M))
        if "name" in fields:
            found[fields["name"]] = {key: int(fields[key]) for key in METADATA_KEYS if key in fields}
    return found


def kernels_of(text):
    """The kernels of an assembly file: instructions, labels, metadata."""
    kernels = {}
    current = None
    code = METADATA.sub("", text)
    for line in code.splitlines():
        label = LABEL.match(line)
        if label:
            name = label.group(1)
            if not name.startswith("."):
                current = kernels.setdefault(name, Kernel(name, {}, []))
            elif current is not None:
                current.labels[name] = len(current.instructions)
            continue
        match = LINE.match(line)
        if match and current is not None and not match.group(1).startswith("."):
            mnemonic, operands = match.group(1), match.group(2)
            current.instructions.append(Instruction(mnemonic, operands, classify(mnemonic, operands)))
    for name, metadata in kernel_metadata(text).items():
        if name in kernels:
            kernels[name].metadata = metadata
    # The kernel descriptor's user SGPRs: the work-group id follows them.
    for name, descriptor in DESCRIPTOR.findall(text):
        count = re.search(r"\.amdhsa_user_sgpr_count (\d+)", descriptor)
        if name in kernels and count:
            kernels[name].metadata["user_sgpr_count"] = int(count.group(1))
    return [kernel for kernel in kernels.values() if kernel.instructions]


def print_facts(facts, tool, usage):
    """The command line of a facts tool (hot_loop.py, interpreter.py): the
    `facts` lines of every kernel of the assembly file named by the one
    argument; exit 2 on a usage error (`usage` printed), 1 on an unreadable
    file."""
    if len(sys.argv) != 2:
        print(usage, file=sys.stderr)
        sys.exit(2)
    try:
        text = Path(sys.argv[1]).read_text()
    except OSError as error:
        print(f"{tool}: {error}", file=sys.stderr)
        sys.exit(1)
    for kernel in kernels_of(text):
        print("\n".join(facts(kernel)))
