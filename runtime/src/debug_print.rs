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

/// `format` with each `{}` replaced by the next value's text (`{{`, `}}`
/// are braces), or without placeholders `format` and the values' texts
/// separated by spaces: JAX's debug_print.
pub fn format_line(format: &str, texts: &[String]) -> String {
    if !format.contains("{}") {
        return std::iter::once(format.to_string()).chain(texts.iter().cloned()).collect::<Vec<_>>().join(" ");
    }
    let mut line = String::new();
    let mut texts = texts.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('{', Some('{')) | ('}', Some('}')) => {
                line.push(c);
                chars.next();
            }
            ('{', Some('}')) => {
                chars.next();
                line.push_str(texts.next().map_or("", String::as_str));
            }
            _ => line.push(c),
        }
    }
    line
}

/// A scalar's text: integers in decimal, floats in their shortest
/// round-trip form (as JAX prints them).
pub fn scalar_text(value: &PrintValue) -> String {
    match value {
        PrintValue::Int(v) => v.to_string(),
        PrintValue::Float32(v) => format!("{v:?}"),
        PrintValue::Float(v) => format!("{v:?}"),
    }
}

/// The texts of a line's values, printed one element at a time, grouped by
/// the site's value types (`PRINT_TYPES`: `f32`, `tensor<8x128xf32>`, by
/// `;`): a tensor's elements make one array, printed as numpy prints it.
pub fn value_texts(values: &[PrintValue], types: &str) -> Vec<String> {
    let mut values = values.iter();
    let mut texts = Vec::new();
    for r#type in types.split(';').filter(|t| !t.is_empty()) {
        match tensor_type(r#type) {
            Some((element, shape)) => {
                let elements: Vec<PrintValue> = values.by_ref().take(shape.iter().product()).copied().collect();
                texts.push(array_text(element, &shape, &elements));
            }
            None => texts.extend(values.next().map(scalar_text)),
        }
    }
    // Values beyond the listed types (a module without them): as scalars.
    texts.extend(values.map(scalar_text));
    texts
}

/// numpy's text of an array of `element`s of `shape` holding `values`.
pub fn array_text(element: crate::ElementType, shape: &[usize], values: &[PrintValue]) -> String {
    let Ok(mut array) = crate::HostArray::zeros(element, shape) else {
        return values.iter().map(scalar_text).collect::<Vec<_>>().join(" ");
    };
    for (i, value) in values.iter().enumerate().take(array.len()) {
        match value {
            PrintValue::Int(v) => array.set_int(i, *v),
            PrintValue::Float32(v) => array.set(i, f64::from(*v)),
            PrintValue::Float(v) => array.set(i, *v),
        }
    }
    crate::format_numpy(&array)
}

/// The element type and shape of a static `tensor<AxBxT>` type's text.
fn tensor_type(text: &str) -> Option<(crate::ElementType, Vec<usize>)> {
    let inner = text.strip_prefix("tensor<")?.strip_suffix('>')?;
    let mut parts: Vec<&str> = inner.split('x').collect();
    let element = crate::ElementType::from_mlir(parts.pop()?)?;
    let shape = parts.iter().map(|d| d.parse().ok()).collect::<Option<Vec<usize>>>()?;
    Some((element, shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_formatted_as_jax_formats_them() {
        let values = [PrintValue::Int(-3), PrintValue::Float(0.5), PrintValue::Float32(0.1)];
        let texts = value_texts(&values, "i32;f64;f32");
        assert_eq!(format_line("a={} b={} c={}", &texts), "a=-3 b=0.5 c=0.1");
        assert_eq!(format_line("values", &texts), "values -3 0.5 0.1");
        assert_eq!(format_line("{{literal}} {}", &texts[..1]), "{literal} -3");
        assert_eq!(format_line("It works!", &[]), "It works!");
    }

    #[test]
    fn tensors_are_printed_as_numpy_prints_arrays() {
        let values: Vec<PrintValue> =
            (0..6).map(PrintValue::Int).chain([PrintValue::Float32(1.5), PrintValue::Float32(-2.0)]).collect();
        let texts = value_texts(&values, "tensor<2x3xi32>;tensor<2xf32>");
        assert_eq!(texts, ["[[0 1 2]\n [3 4 5]]", "[ 1.5 -2. ]"]);
        assert_eq!(format_line("x = {}", &texts[1..]), "x = [ 1.5 -2. ]");
    }
}
