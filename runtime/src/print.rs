//! Arrays printed the way numpy's `print(array)` does, so outputs compare
//! with the Pallas documentation's examples as text.

use crate::{ElementType, HostArray};

/// numpy's `str(array)` for integer and boolean arrays, and numpy's
/// default float formatting for float arrays (up to 8 significant digits,
/// trailing zeros dropped, as in `[1.5 2.  0.25]`).
pub fn format_numpy(array: &HostArray) -> String {
    let mut texts: Vec<String> = (0..array.len()).map(|i| element_text(array, i)).collect();
    if array.element.is_float() {
        align_decimal_points(&mut texts);
    }
    if array.shape.is_empty() {
        return texts.first().cloned().unwrap_or_default();
    }
    let width = texts.iter().map(String::len).max().unwrap_or(0);
    let mut out = String::new();
    nest(&mut out, &array.shape, &texts, width, 0);
    out
}

fn element_text(array: &HostArray, i: usize) -> String {
    let value = array.get(i);
    match array.element {
        ElementType::I1 => (if value != 0.0 { "True" } else { "False" }).to_string(),
        e if e.is_float() => float_text(value),
        _ => format!("{}", value as i64),
    }
}

fn float_text(value: f64) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let text = format!("{:.8}", value);
    let text = text.trim_end_matches('0');
    text.to_string()
}

/// numpy aligns floats on the decimal point: the fractions are padded on
/// the right to the longest one.
fn align_decimal_points(texts: &mut [String]) {
    let fraction = |t: &String| t.find('.').map_or(0, |dot| t.len() - dot - 1);
    let longest = texts.iter().map(fraction).max().unwrap_or(0);
    for text in texts.iter_mut() {
        if text.contains('.') {
            let pad = longest - fraction(text);
            text.push_str(&" ".repeat(pad));
        }
    }
}

fn nest(out: &mut String, shape: &[usize], texts: &[String], width: usize, depth: usize) {
    out.push('[');
    if shape.len() == 1 {
        let items: Vec<String> = texts.iter().map(|t| format!("{t:>width$}")).collect();
        out.push_str(&items.join(" "));
    } else {
        let stride = texts.len() / shape[0].max(1);
        for row in 0..shape[0] {
            if row > 0 {
                out.push_str(&"\n".repeat(shape.len() - 1));
                out.push_str(&" ".repeat(depth + 1));
            }
            nest(out, &shape[1..], &texts[row * stride..(row + 1) * stride], width, depth + 1);
        }
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(shape: &[usize], values: &[i32]) -> HostArray {
        let mut array = HostArray::zeros(ElementType::I32, shape);
        for (i, v) in values.iter().enumerate() {
            array.set(i, *v as f64);
        }
        array
    }

    #[test]
    fn integers_print_like_numpy() {
        assert_eq!(format_numpy(&ints(&[2, 3], &[0, 0, 1, 10, 10, 11])), "[[ 0  0  1]\n [10 10 11]]");
        assert_eq!(format_numpy(&ints(&[1, 2], &[0, 0])), "[[0 0]]");
        assert_eq!(format_numpy(&ints(&[3], &[9, 109, 19])), "[  9 109  19]");
        assert_eq!(format_numpy(&ints(&[2, 1, 2], &[1, 2, 3, 4])), "[[[1 2]]\n\n [[3 4]]]");
    }

    #[test]
    fn floats_drop_trailing_zeros() {
        let mut array = HostArray::zeros(ElementType::F32, &[3]);
        for (i, v) in [1.5, 2.0, 0.25].iter().enumerate() {
            array.set(i, *v);
        }
        assert_eq!(format_numpy(&array), "[1.5  2.   0.25]");
    }
}
