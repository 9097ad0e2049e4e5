//! Every schedule knob, defined once: the module attribute the passes read,
//! its type and legal values, its default, and the help text of its
//! command-line flag. The lowering writes knobs as these attributes, the
//! passes read them through this table, the driver's flags take their help
//! and ranges from it, and the tuner searches within its ranges. Adding a
//! knob touches this table and the pass that uses it.

use crate::{Chip, RawOp};
use melior::{
    Context,
    ir::{
        Attribute, Module,
        attribute::{AttributeLike, DenseI64ArrayAttribute, IntegerAttribute, StringAttribute},
        operation::{OperationLike, OperationMutLike},
    },
};
use std::collections::BTreeMap;

/// Which pipelines read a knob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Cpu,
    Gpu,
    Both,
}

/// A knob's attribute and its legal values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An `i64` attribute in `min..=max`.
    Integer { min: i64, max: i64 },
    /// An `i64` attribute, one of these values.
    OneOf(&'static [i64]),
    /// An `i64` attribute, 0 (off) or 1 (on).
    Flag,
    /// An `i64` attribute: the index of one of these names.
    Choice(&'static [&'static str]),
    /// `array<i64: rows, columns>`, both in `1..=max`.
    Tile { max: i64 },
    /// A string attribute, one of these names.
    Name(&'static [&'static str]),
    /// A unit attribute: set or not.
    Unit,
}

/// How a knob's flag reads on the command line.
#[derive(Clone, Copy, Debug)]
pub enum Cli {
    /// No flag: Tessel derives the knob (from `--chip`, `--cpu`) or only the
    /// tuner sets it.
    Derived,
    /// `--flag VALUE`, VALUE as the kind reads it.
    Value,
    /// `--flag`: sets the knob to 1 (or, for a unit knob, sets it).
    Switch,
    /// `--flag on|off`: 1 or 0.
    OnOff,
    /// `--flag VALUE` sets `of` to VALUE and this knob to 1 (`--group-top P`
    /// is GROUP = P with GROUPTOP); it excludes `of`'s own flag.
    SetsWith { of: &'static Knob },
}

#[derive(Debug)]
pub struct Knob {
    /// `--<flag>` of `tessel run`/`compile`, when the knob has one.
    pub flag: Option<&'static str>,
    pub cli: Cli,
    /// The flag's value placeholder in help texts.
    pub value_name: &'static str,
    /// The module attribute the passes read.
    pub attribute: &'static str,
    pub kind: Kind,
    /// The value when the attribute is absent, in words (some defaults
    /// depend on the host or the chip).
    pub default: &'static str,
    pub target: Target,
    /// The flag's help (and this knob's documentation).
    pub help: &'static str,
}

impl Knob {
    /// Whether `value` is legal for an integer-valued knob.
    pub fn allows(&self, value: i64) -> bool {
        match self.kind {
            Kind::Integer { min, max } => (min..=max).contains(&value),
            Kind::OneOf(values) => values.contains(&value),
            Kind::Flag => value == 0 || value == 1,
            Kind::Choice(names) => (0..names.len() as i64).contains(&value),
            Kind::Tile { max } => (1..=max).contains(&value),
            Kind::Name(_) | Kind::Unit => false,
        }
    }

    /// The least and greatest legal integer values.
    pub fn range(&self) -> (i64, i64) {
        match self.kind {
            Kind::Integer { min, max } => (min, max),
            Kind::OneOf(values) => {
                (values.iter().copied().min().unwrap_or(0), values.iter().copied().max().unwrap_or(0))
            }
            Kind::Flag => (0, 1),
            Kind::Choice(names) => (0, names.len() as i64 - 1),
            Kind::Tile { max } => (1, max),
            Kind::Name(_) | Kind::Unit => (0, 0),
        }
    }

    /// The knob's integer value on `op`, `default` when absent.
    pub fn integer_or(&self, op: RawOp, default: i64) -> i64 {
        op.integer_or(self.attribute, default)
    }

    /// The knob's integer value on `op` (a module, usually), when set.
    pub fn integer_on<'c: 'a, 'a>(&self, op: &impl OperationLike<'c, 'a>) -> Option<i64> {
        let attribute = op.attribute(self.attribute).ok()?;
        IntegerAttribute::try_from(attribute).ok().map(|integer| integer.value())
    }

    /// Sets the knob on `module` to the integer `value`.
    pub fn set_integer_on(&self, context: &Context, module: &mut Module, value: i64) {
        let attribute = Attribute::parse(context, &format!("{value} : i64")).expect("an integer attribute");
        module.as_operation_mut().set_attribute(self.attribute, attribute);
    }
}

pub const REGISTER_TILE: Knob = Knob {
    flag: Some("register-tile"),
    cli: Cli::Value,
    value_name: "ROWSxCOLUMNS",
    attribute: "tessel.register_tile",
    kind: Kind::Tile { max: i64::MAX },
    default: "from the CPU's vector width and registers; on GPUs the largest that fits the block",
    target: Target::Both,
    help: "Register tile of contractions, ROWSxCOLUMNS: on CPUs (default: from the host's vector width) and per \
           work-item of GPU contractions on FMAs (default: the largest that fits the block). Results are identical \
           under every tile",
};

pub const NUM_STAGES: Knob = Knob {
    flag: Some("num-stages"),
    cli: Cli::Value,
    value_name: "N",
    attribute: "tessel.num_stages",
    kind: Kind::Integer { min: 1, max: 8 },
    default: "1",
    target: Target::Both,
    help: "Blocks in flight along arbitrary grid axes: step k prefetches the blocks of step k + N - 1 (default 1: \
           no software pipelining)",
};

pub const K_CHUNK: Knob = Knob {
    flag: Some("k-chunk"),
    cli: Cli::Value,
    value_name: "N",
    attribute: "tessel.k_chunk",
    kind: Kind::Integer { min: 1, max: i64::MAX },
    default: "from the CPU's caches",
    target: Target::Cpu,
    help: "k steps per cache block of contractions (default: from the CPU's caches: all of k where a register \
           tile's B panel fits half the L2 and the block's A half the core's L3; a value >= k keeps k whole)",
};

pub const K_UNROLL: Knob = Knob {
    flag: Some("k-unroll"),
    cli: Cli::Value,
    value_name: "U",
    attribute: "tessel.k_unroll",
    kind: Kind::Integer { min: 1, max: 64 },
    default: "1",
    target: Target::Cpu,
    help: "k steps per iteration of contractions' k loops (default 1)",
};

pub const NUM_THREADS: Knob = Knob {
    flag: Some("num-threads"),
    cli: Cli::Value,
    value_name: "N",
    attribute: "tessel.num_threads",
    kind: Kind::Integer { min: 1, max: 4096 },
    default: "one per core",
    target: Target::Cpu,
    help: "Threads sharing a grid's programs (default: one per core)",
};

pub const GRID_ORDER: Knob = Knob {
    flag: Some("grid-order"),
    cli: Cli::Value,
    value_name: "ORDER",
    attribute: "tessel.grid_order",
    kind: Kind::Choice(&["row-major", "column-major"]),
    default: "row-major",
    target: Target::Both,
    help: "Order of the programs along consecutive parallel grid axes, over threads (CPU) or workgroups (GPU): \
           row-major (default: the last axis fastest) or column-major",
};

pub const DMA_MODE: Knob = Knob {
    flag: Some("dma-mode"),
    cli: Cli::Value,
    value_name: "MODE",
    attribute: "tessel.dma_mode",
    kind: Kind::Choice(&["eager", "on_wait"]),
    default: "eager",
    target: Target::Cpu,
    help: "When DMAs copy (JAX's InterpretParams.dma_execution_mode): eager (default: when they start) or on_wait \
           (a wait on a DMA's semaphore copies the pending DMAs on it, the last started first, until its count \
           suffices; a DMA never waited for never copies). Race-free kernels give the same results in both",
};

pub const OUT_OF_BOUNDS_READS: Knob = Knob {
    flag: Some("out-of-bounds-reads"),
    cli: Cli::Value,
    value_name: "MODE",
    attribute: "tessel.out_of_bounds_reads",
    kind: Kind::Choice(&["unchecked", "raise", "uninitialized"]),
    default: "unchecked",
    target: Target::Cpu,
    help: "Check kernels' ref accesses and block indices against the shapes they index (JAX's \
           InterpretParams.out_of_bounds_reads): unchecked (default), raise (an out-of-bounds read or write is an \
           error naming its line), or uninitialized (an out-of-bounds read gives uninitialized values, see \
           --uninitialized-memory; a write is an error)",
};

pub const UNINITIALIZED_MEMORY: Knob = Knob {
    flag: Some("uninitialized-memory"),
    cli: Cli::Value,
    value_name: "FILL",
    attribute: "tessel.uninitialized_memory",
    kind: Kind::Choice(&["unset", "nan", "zero"]),
    default: "unset",
    target: Target::Cpu,
    help: "What scratch, the padding of partial blocks and out-of-bounds reads hold before a kernel writes them \
           (JAX's InterpretParams.uninitialized_memory): unset (default: zero padding, scratch as allocated), nan \
           (NaN, the integer maximum, true) or zero",
};

pub const DETECT_RACES: Knob = Knob {
    flag: Some("detect-races"),
    cli: Cli::Switch,
    value_name: "",
    attribute: "tessel.detect_races",
    kind: Kind::Flag,
    default: "off",
    target: Target::Cpu,
    help: "Report races between a kernel's accesses and its DMAs in flight (JAX's \
           InterpretParams.detect_races): a read of a DMA's destination, or a write of its source or destination, \
           before a wait on its semaphore saw it complete, and DMAs in flight on overlapping bytes. Reported, not \
           raised",
};

pub const PAD_TILES: Knob = Knob {
    flag: Some("pad-tiles"),
    cli: Cli::Switch,
    value_name: "",
    attribute: "tessel.pad_tiles",
    kind: Kind::Flag,
    default: "off",
    target: Target::Cpu,
    help: "Keep the register tile's size where it does not divide a block, padding the partial tiles (default: \
           columns shrink to a divisor, rows leave a remainder strip)",
};

pub const VECTOR_BITS: Knob = Knob {
    flag: Some("vector-bits"),
    cli: Cli::Value,
    value_name: "128|256|512",
    attribute: "tessel.vector_bits",
    kind: Kind::OneOf(&[128, 256, 512]),
    default: "the host's widest",
    target: Target::Cpu,
    help: "Vector width the CPU code is generated for (default: the host's widest)",
};

pub const VECTOR_REGISTERS: Knob = Knob {
    flag: None,
    cli: Cli::Derived,
    value_name: "",
    attribute: "tessel.vector_registers",
    kind: Kind::Integer { min: 1, max: 64 },
    default: "the host's",
    target: Target::Cpu,
    help: "Vector registers of the CPU the code is for (from --cpu; register tiles must fit them)",
};

pub const VNNI: Knob = Knob {
    flag: None,
    cli: Cli::Derived,
    value_name: "",
    attribute: "tessel.vnni",
    kind: Kind::Integer { min: 0, max: 1 },
    default: "the host's",
    target: Target::Cpu,
    help: "Whether the CPU the code is for has VNNI's vpdpbusd (from --cpu; 1: 8-bit contractions use it)",
};

pub const PMADDWD: Knob = Knob {
    flag: None,
    cli: Cli::Derived,
    value_name: "",
    attribute: "tessel.pmaddwd",
    kind: Kind::Integer { min: 0, max: 1 },
    default: "the host's",
    target: Target::Cpu,
    help: "Whether the CPU the code is for has x86's vpmaddwd (every x86-64; from --cpu; 1: 8-bit contractions \
           without VNNI use it)",
};

pub const FMA_IN_FLIGHT: Knob = Knob {
    flag: None,
    cli: Cli::Derived,
    value_name: "",
    attribute: "tessel.fma_in_flight",
    kind: Kind::Integer { min: 1, max: 256 },
    default: "the host's, from LLVM's scheduling model",
    target: Target::Cpu,
    help: "FMAs the CPU the code is for needs in flight (latency x throughput; from --cpu): register tiles have at \
           least as many accumulators where they can",
};

pub const L2_BYTES: Knob = Knob {
    flag: None,
    cli: Cli::Derived,
    value_name: "",
    attribute: "tessel.l2_bytes",
    kind: Kind::Integer { min: 1024, max: i64::MAX },
    default: "the host's",
    target: Target::Cpu,
    help: "L2 bytes per core of the CPU the code is for (from --cpu): contractions' k blocks keep a B panel in half \
           of it",
};

pub const L3_BYTES: Knob = Knob {
    flag: None,
    cli: Cli::Derived,
    value_name: "",
    attribute: "tessel.l3_bytes",
    kind: Kind::Integer { min: 1024, max: i64::MAX },
    default: "the host's",
    target: Target::Cpu,
    help: "L3 bytes per core of the CPU the code is for (from --cpu): contractions' k blocks keep a block of A in \
           half of it",
};

pub const GROUP: Knob = Knob {
    flag: Some("group"),
    cli: Cli::Value,
    value_name: "P",
    attribute: "tessel.group",
    kind: Kind::Integer { min: 2, max: 4096 },
    default: "unsplit",
    target: Target::Cpu,
    help: "Reductions (block.reduce) as P partial results per result, partial p combining elements p, p + P, ..., \
           then combined (tinygrad's GROUP; default: unsplit). Float sums may round differently (their order is \
           unspecified); contractions never change",
};

pub const GROUP_TOP: Knob = Knob {
    flag: Some("group-top"),
    cli: Cli::SetsWith { of: &GROUP },
    value_name: "P",
    attribute: "tessel.group_top",
    kind: Kind::Flag,
    default: "off",
    target: Target::Cpu,
    help: "As --group, each partial combining a contiguous chunk (GROUPTOP)",
};

pub const POISON: Knob = Knob {
    flag: Some("poison"),
    // The padding choice of `tessel run`/`compile` (`cpu::prepare` records
    // it), not a schedule flag.
    cli: Cli::Derived,
    value_name: "",
    attribute: "tessel.poison",
    kind: Kind::Unit,
    default: "zeros",
    target: Target::Both,
    help: "Pad partial blocks with NaN / the integer minimum instead of zeros",
};

pub const CHIP: Knob = Knob {
    flag: Some("chip"),
    cli: Cli::Derived,
    value_name: "CHIP",
    attribute: "tessel.chip",
    kind: Kind::Name(&["gfx90a", "gfx942", "gfx1100"]),
    default: "gfx90a",
    target: Target::Gpu,
    help: "AMD GPU: gfx90a (MI200), gfx942 (MI300), gfx1100 (RDNA3)",
};

pub const NUM_WARPS: Knob = Knob {
    flag: Some("num-warps"),
    cli: Cli::Value,
    value_name: "N",
    attribute: "tessel.num_warps",
    kind: Kind::Integer { min: 1, max: 16 },
    default: "4",
    target: Target::Gpu,
    help: "Wavefronts per workgroup (default 4)",
};

pub const MATRIX_CORES: Knob = Knob {
    flag: Some("matrix-cores"),
    cli: Cli::OnOff,
    value_name: "on|off",
    attribute: "tessel.matrix_cores",
    kind: Kind::Flag,
    default: "on",
    target: Target::Gpu,
    help: "Contractions on matrix cores (MFMA on gfx90a/gfx942, WMMA on gfx1100) where they compute block.dot \
           exactly: f32 and 8-bit integer ones on CDNA, 8-bit integer ones on RDNA3 (default on)",
};

pub const LDS_CHUNK: Knob = Knob {
    flag: None,
    cli: Cli::Derived,
    value_name: "",
    attribute: "tessel.lds_chunk",
    kind: Kind::Integer { min: 1, max: 1024 },
    default: "16",
    target: Target::Gpu,
    help: "k steps per LDS chunk of a contraction (the GPU tuner's knob)",
};

pub const WAVE_SIZE: Knob = Knob {
    flag: None,
    cli: Cli::Derived,
    value_name: "",
    attribute: "tessel.wave_size",
    kind: Kind::OneOf(&[32, 64]),
    default: "the chip's",
    target: Target::Gpu,
    help: "Work-items per wavefront (from --chip)",
};

pub const WORKGROUP_MEMORY: Knob = Knob {
    flag: None,
    cli: Cli::Derived,
    value_name: "",
    attribute: "tessel.workgroup_memory",
    kind: Kind::Integer { min: 0, max: i64::MAX },
    default: "the chip's LDS (65536 bytes)",
    target: Target::Gpu,
    help: "LDS bytes a workgroup may use (from --chip)",
};

/// Every knob, CPU ones first.
pub static ALL: &[&Knob] = &[
    &REGISTER_TILE,
    &NUM_STAGES,
    &K_CHUNK,
    &K_UNROLL,
    &NUM_THREADS,
    &GRID_ORDER,
    &DMA_MODE,
    &OUT_OF_BOUNDS_READS,
    &UNINITIALIZED_MEMORY,
    &DETECT_RACES,
    &PAD_TILES,
    &VECTOR_BITS,
    &VECTOR_REGISTERS,
    &VNNI,
    &PMADDWD,
    &FMA_IN_FLIGHT,
    &L2_BYTES,
    &L3_BYTES,
    &GROUP,
    &GROUP_TOP,
    &POISON,
    &CHIP,
    &NUM_WARPS,
    &MATRIX_CORES,
    &LDS_CHUNK,
    &WAVE_SIZE,
    &WORKGROUP_MEMORY,
];

/// The chip a module's kernels are for (`tessel.chip`), the default when
/// unset; `Err` names an unknown one.
pub fn chip_of(op: RawOp) -> Result<Chip, String> {
    match op.string(CHIP.attribute) {
        None => Ok(Chip::default()),
        Some(name) => Chip::from_name(&name).ok_or(name),
    }
}

/// A knob's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// An `i64` knob (flags and choices included: 0/1, a choice's index).
    Integer(i64),
    /// A tile, rows x columns.
    Pair(i64, i64),
    /// A string knob.
    Name(&'static str),
    /// A unit knob, set.
    Set,
}

/// The knob of the table whose attribute is `attribute`.
pub fn by_attribute(attribute: &str) -> Option<&'static Knob> {
    ALL.iter().copied().find(|knob| knob.attribute == attribute)
}

/// Knob values for a module: what `tessel run`'s flags, a cached tune or a
/// tuner candidate set; knobs left out take the passes' defaults. Ordered
/// by attribute, so what is written and printed is deterministic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Settings(BTreeMap<&'static str, Value>);

impl Settings {
    /// Sets `knob` (a knob of the table) to `value`.
    pub fn set(&mut self, knob: &'static Knob, value: Value) -> &mut Self {
        debug_assert!(by_attribute(knob.attribute).is_some(), "{} is not in the table", knob.attribute);
        self.0.insert(knob.attribute, value);
        self
    }

    /// Sets the `i64` knob `knob` to `value`.
    pub fn set_integer(&mut self, knob: &'static Knob, value: i64) -> &mut Self {
        self.set(knob, Value::Integer(value))
    }

    pub fn get(&self, knob: &Knob) -> Option<Value> {
        self.0.get(knob.attribute).copied()
    }

    /// The `i64` value of `knob`, if set.
    pub fn integer(&self, knob: &Knob) -> Option<i64> {
        match self.get(knob)? {
            Value::Integer(value) => Some(value),
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every set knob and its value, by attribute.
    pub fn iter(&self) -> impl Iterator<Item = (&'static Knob, Value)> + '_ {
        self.0.iter().filter_map(|(attribute, value)| Some((by_attribute(attribute)?, *value)))
    }

    /// Records the settings on `module` as the attributes the passes read.
    pub fn apply(&self, context: &Context, module: &mut Module) {
        for (attribute, value) in &self.0 {
            let text = match *value {
                Value::Integer(value) => format!("{value} : i64"),
                Value::Pair(rows, columns) => format!("array<i64: {rows}, {columns}>"),
                Value::Name(name) => format!("\"{name}\""),
                Value::Set => "unit".to_string(),
            };
            let parsed = Attribute::parse(context, &text).expect("knob values print as attributes");
            module.as_operation_mut().set_attribute(attribute, parsed);
        }
    }
}

/// What a legal value of `knob` is, in words.
fn expectation(knob: &Knob) -> String {
    let bound = |max: i64| if max == i64::MAX { "any".to_string() } else { max.to_string() };
    match knob.kind {
        Kind::Integer { min, max } if max == i64::MAX => format!("an integer of at least {min}"),
        Kind::Integer { min, max } => format!("an integer in [{min}, {max}]"),
        Kind::OneOf(values) => format!("one of {}", values.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
        Kind::Flag => "0 or 1".to_string(),
        Kind::Choice(names) => {
            names.iter().enumerate().map(|(index, name)| format!("{index} ({name})")).collect::<Vec<_>>().join(" or ")
        }
        Kind::Tile { max } => format!("array<i64: rows, columns> with sizes in [1, {}]", bound(max)),
        Kind::Name(names) => {
            format!("one of {}", names.iter().map(|name| format!("\"{name}\"")).collect::<Vec<_>>().join(", "))
        }
        Kind::Unit => "a unit attribute".to_string(),
    }
}

/// Every knob attribute on `module` that the table does not allow, as a
/// message (`tessel.num_stages must be an integer in [1, 8], got 0 : i64`):
/// the one check of module knobs, which grid-verify-specs reports at the
/// start of every pipeline.
pub fn check<'c: 'a, 'a>(module: &impl OperationLike<'c, 'a>) -> Vec<String> {
    let mut messages = Vec::new();
    for knob in ALL {
        let Ok(attribute) = module.attribute(knob.attribute) else { continue };
        let legal = match knob.kind {
            Kind::Integer { .. } | Kind::OneOf(_) | Kind::Flag | Kind::Choice(_) => {
                IntegerAttribute::try_from(attribute).is_ok_and(|integer| knob.allows(integer.value()))
            }
            Kind::Tile { max } => DenseI64ArrayAttribute::try_from(attribute).is_ok_and(|tile| {
                tile.len() == 2 && (0..2).all(|index| tile.element(index).is_ok_and(|size| (1..=max).contains(&size)))
            }),
            Kind::Name(names) => StringAttribute::try_from(attribute).is_ok_and(|name| names.contains(&name.value())),
            Kind::Unit => attribute.is_unit(),
        };
        if !legal {
            messages.push(format!("{} must be {}, got {attribute}", knob.attribute, expectation(knob)));
        }
    }
    messages
}

/// `ROWSxCOLUMNS`, both positive (a tile knob's command-line form).
pub fn parse_tile(text: &str) -> Result<(i64, i64), String> {
    let parse = |part: Option<&str>| part.and_then(|p| p.trim().parse::<i64>().ok()).filter(|&size| size > 0);
    let mut parts = text.split('x');
    match (parse(parts.next()), parse(parts.next()), parts.next()) {
        (Some(rows), Some(columns), None) => Ok((rows, columns)),
        _ => Err(format!("expected ROWSxCOLUMNS with positive sizes, got '{text}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_and_flags_are_unique_and_named_alike() {
        for (index, knob) in ALL.iter().enumerate() {
            let name = knob.attribute.strip_prefix("tessel.").expect("knob attributes are tessel.*");
            if let Some(flag) = knob.flag {
                assert_eq!(flag.replace('-', "_"), name, "the flag of {} spells its attribute", knob.attribute);
            }
            assert!(ALL[..index].iter().all(|other| other.attribute != knob.attribute), "{} twice", knob.attribute);
            let (min, max) = knob.range();
            assert!(min <= max, "{} has an empty range", knob.attribute);
        }
        let chips: Vec<&str> = Chip::ALL.iter().map(|chip| chip.name()).collect();
        assert_eq!(CHIP.kind, Kind::Name(&["gfx90a", "gfx942", "gfx1100"]));
        assert_eq!(chips, ["gfx90a", "gfx942", "gfx1100"], "the chip knob names every chip");
    }

    #[test]
    fn check_reports_what_the_table_does_not_allow() {
        let context = crate::create_context();
        let module = |attributes: &str| Module::parse(&context, &format!("module attributes {{{attributes}}} {{}}"));
        let legal = module(
            "tessel.num_stages = 2 : i64, tessel.register_tile = array<i64: 4, 32>, tessel.chip = \"gfx942\", \
             tessel.grid_order = 1 : i64, tessel.vector_bits = 256 : i64",
        )
        .unwrap();
        assert!(check(&legal.as_operation()).is_empty());
        let illegal = module(
            "tessel.num_stages = 0 : i64, tessel.register_tile = array<i64: 4>, tessel.chip = \"gfx9000\", \
             tessel.vector_bits = 384 : i64, tessel.pad_tiles = \"yes\"",
        )
        .unwrap();
        let messages = check(&illegal.as_operation());
        assert_eq!(messages.len(), 5, "{messages:?}");
        assert!(messages.contains(&"tessel.num_stages must be an integer in [1, 8], got 0 : i64".to_string()));
        assert!(messages.contains(&"tessel.vector_bits must be one of 128, 256, 512, got 384 : i64".to_string()));
    }

    #[test]
    fn legality_follows_the_kind() {
        assert!(NUM_STAGES.allows(1) && NUM_STAGES.allows(8) && !NUM_STAGES.allows(0));
        assert!(VECTOR_BITS.allows(256) && !VECTOR_BITS.allows(384));
        assert!(GRID_ORDER.allows(1) && !GRID_ORDER.allows(2));
        assert!(PAD_TILES.allows(0) && !PAD_TILES.allows(2));
    }
}
