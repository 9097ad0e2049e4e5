//! What memory a kernel has not written holds: the padding of partial
//! blocks, scratch, and (under `tessel.out_of_bounds_reads =
//! uninitialized`) reads past a ref. One choice per module, from its
//! knobs, read by every pass that fills such memory.

use tessel_dialects::{RawOp, knobs};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Fill {
    /// Zero padding, scratch as allocated: nothing to fill (the default).
    #[default]
    Unset,
    /// NaN and the integer minimum (`tessel.poison`: what JAX's HLO
    /// interpreter, `interpret=True`, pads with).
    Poison,
    /// NaN, the integer maximum and true (JAX's TPU interpreter's
    /// `uninitialized_memory="nan"`).
    Nan,
    /// Zeros, scratch included (`uninitialized_memory="zero"`).
    Zero,
}

impl Fill {
    /// The module's fill: `tessel.uninitialized_memory` when set, else
    /// `tessel.poison`.
    pub(crate) fn of(module: RawOp) -> Fill {
        match knobs::UNINITIALIZED_MEMORY.integer_or(module, 0) {
            1 => Fill::Nan,
            2 => Fill::Zero,
            _ if module.has(knobs::POISON.attribute) => Fill::Poison,
            _ => Fill::Unset,
        }
    }

    /// Whether fresh scratch must be filled (it starts as allocated
    /// otherwise).
    pub(crate) fn fills_scratch(self) -> bool {
        self != Fill::Unset
    }

    /// The `arith.constant` operand text (`value : type`) of the fill for
    /// elements of type `element`.
    pub(crate) fn constant(self, element: &str) -> String {
        let poisoned = matches!(self, Fill::Poison | Fill::Nan);
        let value = match (element, poisoned) {
            ("f32", true) => "0x7FC00000",
            ("f64", true) => "0x7FF8000000000000",
            ("f16", true) => "0x7E00",
            ("bf16", true) => "0x7FC0",
            (float, false) if float.starts_with('f') || float == "bf16" => "0.0",
            // `arith.constant false` is typed by the keyword alone.
            ("i1", true) if self == Fill::Nan => return "true".to_string(),
            ("i1", _) => return "false".to_string(),
            ("index", true) if self == Fill::Nan => "9223372036854775807",
            ("index", true) => "-9223372036854775808",
            (int, true) if int.starts_with('i') => {
                let bits: u32 = int[1..].parse().unwrap_or(64);
                let value = if self == Fill::Nan { (1i128 << (bits - 1)) - 1 } else { -(1i128 << (bits - 1)) };
                return format!("{value} : {element}");
            }
            _ => "0",
        };
        format!("{value} : {element}")
    }
}
