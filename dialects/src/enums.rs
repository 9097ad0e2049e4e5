//! Rust mirrors of the dialects' ODS enums (`dialects/td/*Dialect.td`):
//! one table per enum, holding every fact the lowering, the reference
//! interpreter and the builders need about each case — its integer and
//! keyword in ODS, the `arith` op combining two elements, the identity a
//! reduction starts from, the `memref.atomic_rmw` kind. Nothing else
//! matches on an enum's integers. A unit test checks each table against
//! the `.td` file, case for case.

use crate::RawOp;

/// The value a combiner starts from, whatever the element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Identity {
    Zero,
    One,
    /// -inf for floats, the signed minimum for integers.
    Lowest,
    /// +inf for floats, the signed maximum for integers.
    Highest,
    /// 0: the smallest unsigned value.
    UnsignedLowest,
    /// All ones: the largest unsigned value.
    UnsignedHighest,
}

/// How a combiner treats two elements: the `arith` op for floats (`None`:
/// not defined on floats) and for integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Combiner {
    pub float: Option<&'static str>,
    pub integer: &'static str,
}

impl Combiner {
    /// The op for an element type that is a float or not; `None` where the
    /// combiner is not defined for it.
    pub fn op(self, float: bool) -> Option<&'static str> {
        if float { self.float } else { Some(self.integer) }
    }
}

/// `block.reduce`'s combiner (`Block_ReduceKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceKind {
    Sum,
    Max,
    Min,
    Prod,
    UMax,
    UMin,
}

/// One case of [`ReduceKind`] with its facts.
pub struct ReduceCase {
    pub kind: ReduceKind,
    pub ods: i64,
    pub keyword: &'static str,
    pub combiner: Combiner,
    pub identity: Identity,
}

const fn combiner(float: Option<&'static str>, integer: &'static str) -> Combiner {
    Combiner { float, integer }
}

/// Every `ReduceKind`, in ODS order.
pub const REDUCE_KINDS: [ReduceCase; 6] = [
    ReduceCase {
        kind: ReduceKind::Sum,
        ods: 0,
        keyword: "sum",
        combiner: combiner(Some("arith.addf"), "arith.addi"),
        identity: Identity::Zero,
    },
    ReduceCase {
        kind: ReduceKind::Max,
        ods: 1,
        keyword: "max",
        combiner: combiner(Some("arith.maximumf"), "arith.maxsi"),
        identity: Identity::Lowest,
    },
    ReduceCase {
        kind: ReduceKind::Min,
        ods: 2,
        keyword: "min",
        combiner: combiner(Some("arith.minimumf"), "arith.minsi"),
        identity: Identity::Highest,
    },
    ReduceCase {
        kind: ReduceKind::Prod,
        ods: 3,
        keyword: "prod",
        combiner: combiner(Some("arith.mulf"), "arith.muli"),
        identity: Identity::One,
    },
    ReduceCase {
        kind: ReduceKind::UMax,
        ods: 4,
        keyword: "umax",
        combiner: combiner(None, "arith.maxui"),
        identity: Identity::UnsignedLowest,
    },
    ReduceCase {
        kind: ReduceKind::UMin,
        ods: 5,
        keyword: "umin",
        combiner: combiner(None, "arith.minui"),
        identity: Identity::UnsignedHighest,
    },
];

impl ReduceKind {
    /// The case whose ODS integer is `ods`.
    pub fn from_ods(ods: i64) -> Option<Self> {
        REDUCE_KINDS.iter().find(|case| case.ods == ods).map(|case| case.kind)
    }

    /// The `kind` attribute of a `block.reduce`.
    pub fn of(op: RawOp) -> Option<Self> {
        op.has("kind").then(|| Self::from_ods(op.integer("kind"))).flatten()
    }

    pub fn case(self) -> &'static ReduceCase {
        REDUCE_KINDS.iter().find(|case| case.kind == self).expect("every kind has a row")
    }

    pub fn keyword(self) -> &'static str {
        self.case().keyword
    }

    pub fn combiner(self) -> Combiner {
        self.case().combiner
    }

    pub fn identity(self) -> Identity {
        self.case().identity
    }
}

/// `block.atomic_rmw`'s combiner (`Block_AtomicKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicKind {
    Add,
    Max,
    Min,
    Xchg,
    And,
    Or,
    Xor,
    UMax,
    UMin,
}

/// One case of [`AtomicKind`] with its facts.
pub struct AtomicCase {
    pub kind: AtomicKind,
    pub ods: i64,
    pub keyword: &'static str,
    /// `None` for xchg, which stores the value.
    pub combiner: Option<Combiner>,
    /// `memref.atomic_rmw`'s kind for floats (`None`: not defined on
    /// floats) and for integers.
    pub memref_float: Option<&'static str>,
    pub memref_integer: &'static str,
}

/// Every `AtomicKind`, in ODS order.
pub const ATOMIC_KINDS: [AtomicCase; 9] = [
    AtomicCase {
        kind: AtomicKind::Add,
        ods: 0,
        keyword: "add",
        combiner: Some(combiner(Some("arith.addf"), "arith.addi")),
        memref_float: Some("addf"),
        memref_integer: "addi",
    },
    AtomicCase {
        kind: AtomicKind::Max,
        ods: 1,
        keyword: "max",
        combiner: Some(combiner(Some("arith.maximumf"), "arith.maxsi")),
        memref_float: Some("maximumf"),
        memref_integer: "maxs",
    },
    AtomicCase {
        kind: AtomicKind::Min,
        ods: 2,
        keyword: "min",
        combiner: Some(combiner(Some("arith.minimumf"), "arith.minsi")),
        memref_float: Some("minimumf"),
        memref_integer: "mins",
    },
    AtomicCase {
        kind: AtomicKind::Xchg,
        ods: 3,
        keyword: "xchg",
        combiner: None,
        memref_float: Some("assign"),
        memref_integer: "assign",
    },
    AtomicCase {
        kind: AtomicKind::And,
        ods: 4,
        keyword: "and",
        combiner: Some(combiner(None, "arith.andi")),
        memref_float: None,
        memref_integer: "andi",
    },
    AtomicCase {
        kind: AtomicKind::Or,
        ods: 5,
        keyword: "or",
        combiner: Some(combiner(None, "arith.ori")),
        memref_float: None,
        memref_integer: "ori",
    },
    AtomicCase {
        kind: AtomicKind::Xor,
        ods: 6,
        keyword: "xor",
        combiner: Some(combiner(None, "arith.xori")),
        memref_float: None,
        memref_integer: "xori",
    },
    AtomicCase {
        kind: AtomicKind::UMax,
        ods: 7,
        keyword: "umax",
        combiner: Some(combiner(None, "arith.maxui")),
        memref_float: None,
        memref_integer: "maxu",
    },
    AtomicCase {
        kind: AtomicKind::UMin,
        ods: 8,
        keyword: "umin",
        combiner: Some(combiner(None, "arith.minui")),
        memref_float: None,
        memref_integer: "minu",
    },
];

impl AtomicKind {
    /// The case whose ODS integer is `ods`.
    pub fn from_ods(ods: i64) -> Option<Self> {
        ATOMIC_KINDS.iter().find(|case| case.ods == ods).map(|case| case.kind)
    }

    /// The `kind` attribute of a `block.atomic_rmw`.
    pub fn of(op: RawOp) -> Option<Self> {
        op.has("kind").then(|| Self::from_ods(op.integer("kind"))).flatten()
    }

    pub fn case(self) -> &'static AtomicCase {
        ATOMIC_KINDS.iter().find(|case| case.kind == self).expect("every kind has a row")
    }

    pub fn ods(self) -> i64 {
        self.case().ods
    }

    pub fn keyword(self) -> &'static str {
        self.case().keyword
    }

    /// What the kind does to an element of a float or integer type;
    /// `None` where it is not defined on the type.
    pub fn update(self, float: bool) -> Option<AtomicUpdate> {
        match self.case().combiner {
            None => Some(AtomicUpdate::Store),
            Some(combiner) => combiner.op(float).map(AtomicUpdate::Combine),
        }
    }

    /// `memref.atomic_rmw`'s kind for a float or integer element.
    pub fn memref_kind(self, float: bool) -> Option<&'static str> {
        let case = self.case();
        if float { case.memref_float } else { Some(case.memref_integer) }
    }
}

/// What an atomic read-modify-write writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicUpdate {
    /// The value itself (xchg).
    Store,
    /// The `arith` op of the value and the element.
    Combine(&'static str),
}

/// The iteration semantics of one grid axis (`Grid_DimensionSemantics`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisSemantics {
    /// Programs along the axis may run concurrently, in any order.
    Parallel,
    /// Programs along the axis run in order.
    Arbitrary,
}

/// Every `AxisSemantics`, in ODS order: (case, ODS integer, keyword).
pub const AXIS_SEMANTICS: [(AxisSemantics, i64, &str); 2] =
    [(AxisSemantics::Parallel, 0, "parallel"), (AxisSemantics::Arbitrary, 1, "arbitrary")];

impl AxisSemantics {
    pub fn from_ods(ods: i64) -> Option<Self> {
        AXIS_SEMANTICS.iter().find(|(_, value, _)| *value == ods).map(|(case, _, _)| *case)
    }

    pub fn keyword(self) -> &'static str {
        AXIS_SEMANTICS.iter().find(|(case, _, _)| *case == self).map(|(_, _, keyword)| *keyword).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The (keyword, integer) cases of the ODS enum `name` in `file`.
    fn ods_cases(file: &str, name: &str) -> Vec<(String, i64)> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("td").join(file);
        let text = std::fs::read_to_string(path).expect("the .td file");
        let start = text.find(&format!("def {name} ")).unwrap_or_else(|| panic!("{name} in {file}"));
        let body = &text[start..text[start..].find("]>").map(|end| start + end).expect("the enum's end")];
        body.split("I32EnumAttrCase<")
            .skip(1)
            .map(|case| {
                let fields: Vec<&str> = case.split('>').next().unwrap().split(',').map(str::trim).collect();
                // <"cpp name", value> or <"cpp name", value, "keyword">.
                let keyword = fields.get(2).unwrap_or(&fields[0]).trim_matches('"').to_string();
                (keyword, fields[1].parse().expect("an integer value"))
            })
            .collect()
    }

    #[test]
    fn tables_mirror_the_ods_enums_case_for_case() {
        let reduce: Vec<(String, i64)> = REDUCE_KINDS.iter().map(|c| (c.keyword.to_string(), c.ods)).collect();
        assert_eq!(reduce, ods_cases("BlockDialect.td", "Block_ReduceKind"));
        let atomic: Vec<(String, i64)> = ATOMIC_KINDS.iter().map(|c| (c.keyword.to_string(), c.ods)).collect();
        assert_eq!(atomic, ods_cases("BlockDialect.td", "Block_AtomicKind"));
        let axes: Vec<(String, i64)> = AXIS_SEMANTICS.iter().map(|(_, ods, k)| (k.to_string(), *ods)).collect();
        assert_eq!(axes, ods_cases("GridDialect.td", "Grid_DimensionSemantics"));
    }

    #[test]
    fn every_case_round_trips_and_names_its_ops() {
        for case in &REDUCE_KINDS {
            assert_eq!(ReduceKind::from_ods(case.ods), Some(case.kind));
            assert_eq!(case.kind.keyword(), case.keyword);
            assert!(case.combiner.integer.starts_with("arith."));
        }
        for case in &ATOMIC_KINDS {
            assert_eq!(AtomicKind::from_ods(case.ods), Some(case.kind));
            // A kind defined on floats has a float atomic, and back.
            let float_combiner = case.combiner.map_or(Some("assign"), |combiner| combiner.float);
            assert_eq!(float_combiner.is_some(), case.memref_float.is_some(), "{}", case.keyword);
        }
        assert_eq!(ReduceKind::from_ods(6), None);
        assert_eq!(AtomicKind::from_ods(9), None);
        assert_eq!(AxisSemantics::from_ods(2), None);
    }
}
