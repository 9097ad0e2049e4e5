//! Every schedule knob, defined once: the module attribute the passes read,
//! its type and legal values, its default, and the help text of its
//! command-line flag. The lowering writes knobs as these attributes, the
//! passes read them through this table, the driver's flags take their help
//! and ranges from it, and the tuner searches within its ranges. Adding a
//! knob touches this table and the pass that uses it.

use crate::{Chip, RawOp};

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

#[derive(Debug)]
pub struct Knob {
    /// `--<flag>` of `tessel run`/`compile` (`None`: derived by Tessel,
    /// e.g. from `--chip` or `--cpu`).
    pub flag: Option<&'static str>,
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

    /// Whether `op` (the module) sets the knob.
    pub fn is_set(&self, op: RawOp) -> bool {
        op.has(self.attribute)
    }

    /// The knob's integer value on `op`, `default` when absent.
    pub fn integer_or(&self, op: RawOp, default: i64) -> i64 {
        op.integer_or(self.attribute, default)
    }
}

pub const REGISTER_TILE: Knob = Knob {
    flag: Some("register-tile"),
    attribute: "tessel.register_tile",
    kind: Kind::Tile { max: 64 },
    default: "from the CPU's vector width and registers",
    target: Target::Cpu,
    help: "Register tile of contractions, ROWSxCOLUMNS (default: from the host's vector width). Results are \
           identical under every tile",
};

pub const NUM_STAGES: Knob = Knob {
    flag: Some("num-stages"),
    attribute: "tessel.num_stages",
    kind: Kind::Integer { min: 1, max: 8 },
    default: "1",
    target: Target::Both,
    help: "Blocks in flight along arbitrary grid axes: step k prefetches the blocks of step k + N - 1 (default 1: \
           no software pipelining)",
};

pub const K_CHUNK: Knob = Knob {
    flag: Some("k-chunk"),
    attribute: "tessel.k_chunk",
    kind: Kind::Integer { min: 1, max: i64::MAX },
    default: "all of k",
    target: Target::Cpu,
    help: "k steps per cache block of contractions (default: all of k at once)",
};

pub const K_UNROLL: Knob = Knob {
    flag: Some("k-unroll"),
    attribute: "tessel.k_unroll",
    kind: Kind::Integer { min: 1, max: 64 },
    default: "1",
    target: Target::Cpu,
    help: "k steps per iteration of contractions' k loops (default 1)",
};

pub const NUM_THREADS: Knob = Knob {
    flag: Some("num-threads"),
    attribute: "tessel.num_threads",
    kind: Kind::Integer { min: 1, max: 4096 },
    default: "one per core",
    target: Target::Cpu,
    help: "Threads sharing a grid's programs (default: one per core)",
};

pub const GRID_ORDER: Knob = Knob {
    flag: Some("grid-order"),
    attribute: "tessel.grid_order",
    kind: Kind::Choice(&["row-major", "column-major"]),
    default: "row-major",
    target: Target::Both,
    help: "Order of the programs along consecutive parallel grid axes, over threads (CPU) or workgroups (GPU): \
           row-major (default: the last axis fastest) or column-major",
};

pub const PAD_TILES: Knob = Knob {
    flag: Some("pad-tiles"),
    attribute: "tessel.pad_tiles",
    kind: Kind::Flag,
    default: "off",
    target: Target::Cpu,
    help: "Keep the register tile's size where it does not divide a block, padding the partial tiles (default: \
           shrink the tile to a divisor)",
};

pub const VECTOR_BITS: Knob = Knob {
    flag: Some("vector-bits"),
    attribute: "tessel.vector_bits",
    kind: Kind::OneOf(&[128, 256, 512]),
    default: "the host's widest",
    target: Target::Cpu,
    help: "Vector width the CPU code is generated for (default: the host's widest)",
};

pub const VECTOR_REGISTERS: Knob = Knob {
    flag: None,
    attribute: "tessel.vector_registers",
    kind: Kind::Integer { min: 1, max: 64 },
    default: "the host's",
    target: Target::Cpu,
    help: "Vector registers of the CPU the code is for (from --cpu; register tiles must fit them)",
};

pub const GROUP: Knob = Knob {
    flag: Some("group"),
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
    attribute: "tessel.group_top",
    kind: Kind::Flag,
    default: "off",
    target: Target::Cpu,
    help: "As --group, each partial combining a contiguous chunk (GROUPTOP)",
};

pub const POISON: Knob = Knob {
    flag: Some("poison"),
    attribute: "tessel.poison",
    kind: Kind::Unit,
    default: "zeros",
    target: Target::Both,
    help: "Pad partial blocks with NaN / the integer minimum instead of zeros",
};

pub const CHIP: Knob = Knob {
    flag: Some("chip"),
    attribute: "tessel.chip",
    kind: Kind::Name(&["gfx90a", "gfx942", "gfx1100"]),
    default: "gfx90a",
    target: Target::Gpu,
    help: "AMD GPU: gfx90a (MI200), gfx942 (MI300), gfx1100 (RDNA3)",
};

pub const NUM_WARPS: Knob = Knob {
    flag: Some("num-warps"),
    attribute: "tessel.num_warps",
    kind: Kind::Integer { min: 1, max: 16 },
    default: "4",
    target: Target::Gpu,
    help: "Wavefronts per workgroup (default 4)",
};

pub const MATRIX_CORES: Knob = Knob {
    flag: Some("matrix-cores"),
    attribute: "tessel.matrix_cores",
    kind: Kind::Flag,
    default: "on",
    target: Target::Gpu,
    help: "Contractions on matrix cores (MFMA on gfx90a/gfx942, WMMA on gfx1100) where they compute block.dot \
           exactly: f32 and 8-bit integer ones on CDNA, 8-bit integer ones on RDNA3 (default on)",
};

pub const LDS_CHUNK: Knob = Knob {
    flag: None,
    attribute: "tessel.lds_chunk",
    kind: Kind::Integer { min: 1, max: 1024 },
    default: "16",
    target: Target::Gpu,
    help: "k steps per LDS chunk of a contraction (the GPU tuner's knob)",
};

pub const WAVE_SIZE: Knob = Knob {
    flag: None,
    attribute: "tessel.wave_size",
    kind: Kind::OneOf(&[32, 64]),
    default: "the chip's",
    target: Target::Gpu,
    help: "Work-items per wavefront (from --chip)",
};

pub const WORKGROUP_MEMORY: Knob = Knob {
    flag: None,
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
    &PAD_TILES,
    &VECTOR_BITS,
    &VECTOR_REGISTERS,
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
    fn legality_follows_the_kind() {
        assert!(NUM_STAGES.allows(1) && NUM_STAGES.allows(8) && !NUM_STAGES.allows(0));
        assert!(VECTOR_BITS.allows(256) && !VECTOR_BITS.allows(384));
        assert!(GRID_ORDER.allows(1) && !GRID_ORDER.allows(2));
        assert!(PAD_TILES.allows(0) && !PAD_TILES.allows(2));
    }
}
