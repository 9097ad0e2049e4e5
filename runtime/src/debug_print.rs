//! Lines compiled kernels print (`block.print`, `pl.debug_print`): the
//! functions compiled code calls (`tessel_dialects::PRINT_FUNCTIONS`)
//! collect each line's site and values; a call of an entry that prints
//! hands its lines to the calling thread (`take_printed`), whose owner
//! formats them (`tessel run` with `format_line`, the JAX backend as
//! JAX's own debug_print does).

use std::cell::RefCell;
use std::sync::Mutex;

/// One printed value, widened as compiled code passes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrintValue {
    Int(i64),
    Float32(f32),
    Float(f64),
}

/// One printed line: its `block.print` site and values.
#[derive(Clone, Debug, PartialEq)]
pub struct PrintRecord {
    pub site: usize,
    pub values: Vec<PrintValue>,
}

/// Lines of the call running now, in the order their `end` came.
static RECORDS: Mutex<Vec<PrintRecord>> = Mutex::new(Vec::new());
/// Held for the whole of a call whose module prints: its lines are its own.
pub(crate) static PRINTING_CALL: Mutex<()> = Mutex::new(());

thread_local! {
    /// The line this thread is building.
    static PENDING: RefCell<Option<PrintRecord>> = const { RefCell::new(None) };
    /// The lines of this thread's last call of an entry that prints.
    static LAST: RefCell<Vec<PrintRecord>> = const { RefCell::new(Vec::new()) };
}

pub(crate) extern "C" fn print_begin(site: i64) {
    PENDING
        .with(|pending| *pending.borrow_mut() = Some(PrintRecord { site: site.max(0) as usize, values: Vec::new() }));
}

pub(crate) extern "C" fn print_i64(value: i64) {
    push(PrintValue::Int(value));
}

pub(crate) extern "C" fn print_f32(value: f32) {
    push(PrintValue::Float32(value));
}

pub(crate) extern "C" fn print_f64(value: f64) {
    push(PrintValue::Float(value));
}

pub(crate) extern "C" fn print_end() {
    if let Some(record) = PENDING.with(|pending| pending.borrow_mut().take()) {
        RECORDS.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(record);
    }
}

fn push(value: PrintValue) {
    PENDING.with(|pending| {
        if let Some(record) = pending.borrow_mut().as_mut() {
            record.values.push(value);
        }
    });
}

/// Empties the lines before a call.
pub(crate) fn clear() {
    RECORDS.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
}

/// Moves the call's lines to the calling thread (`take_printed`).
pub(crate) fn keep_for_caller() {
    let lines = std::mem::take(&mut *RECORDS.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
    LAST.with(|last| *last.borrow_mut() = lines);
}

/// The lines the calling thread's last call of a printing entry printed.
pub fn take_printed() -> Vec<PrintRecord> {
    LAST.with(|last| std::mem::take(&mut *last.borrow_mut()))
}

/// `format` with each `{}` replaced by the next value (`{{`, `}}` are
/// braces), or without placeholders `format` and the values separated by
/// spaces: JAX's debug_print, with integers in decimal and floats in
/// their shortest round-trip form.
pub fn format_line(format: &str, values: &[PrintValue]) -> String {
    let text = |value: &PrintValue| match value {
        PrintValue::Int(v) => v.to_string(),
        PrintValue::Float32(v) => format!("{v:?}"),
        PrintValue::Float(v) => format!("{v:?}"),
    };
    if !format.contains("{}") {
        return std::iter::once(format.to_string()).chain(values.iter().map(text)).collect::<Vec<_>>().join(" ");
    }
    let mut line = String::new();
    let mut values = values.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('{', Some('{')) | ('}', Some('}')) => {
                line.push(c);
                chars.next();
            }
            ('{', Some('}')) => {
                chars.next();
                line.push_str(&values.next().map(text).unwrap_or_default());
            }
            _ => line.push(c),
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_formatted_as_jax_formats_them() {
        let values = [PrintValue::Int(-3), PrintValue::Float(0.5), PrintValue::Float32(0.1)];
        assert_eq!(format_line("a={} b={} c={}", &values), "a=-3 b=0.5 c=0.1");
        assert_eq!(format_line("values", &values), "values -3 0.5 0.1");
        assert_eq!(format_line("{{literal}} {}", &values[..1]), "{literal} -3");
        assert_eq!(format_line("It works!", &[]), "It works!");
    }
}
