//! Arrays printed the way numpy's `print(array)` does (numpy's
//! `_formatArray`: 75-column lines, arrays over 1000 elements summarized
//! with `...` around 3 edge items), so outputs compare with the Pallas
//! documentation's examples as text.

use crate::{ElementType, HostArray};

const LINE_WIDTH: usize = 75;
const THRESHOLD: usize = 1000;
const EDGE_ITEMS: usize = 3;

/// numpy's `str(array)`.
pub fn format_numpy(array: &HostArray) -> String {
    if array.shape.is_empty() {
        return element_text(array, 0);
    }
    let summarize = array.len() > THRESHOLD;
    // Field widths come from the elements that are shown.
    let shown = shown_elements(&array.shape, summarize);
    let mut texts: Vec<(usize, String)> = shown.iter().map(|&i| (i, element_text(array, i))).collect();
    if array.element.is_float() {
        align_decimal_points(&mut texts);
    }
    let width = texts.iter().map(|(_, t)| t.len()).max().unwrap_or(0);
    let lookup = |i: usize| -> String {
        let text = &texts[texts.binary_search_by_key(&i, |(k, _)| *k).expect("shown")].1;
        format!("{text:>width$}")
    };
    let strides = strides(&array.shape);
    format_axis(&array.shape, &strides, 0, 0, " ", LINE_WIDTH, summarize, &lookup)
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// Indices shown along an axis of length `len`: all, or 3 at each end.
fn axis_items(len: usize, summarize: bool) -> (Vec<usize>, bool) {
    if summarize && len > 2 * EDGE_ITEMS {
        ((0..EDGE_ITEMS).chain(len - EDGE_ITEMS..len).collect(), true)
    } else {
        ((0..len).collect(), false)
    }
}

fn shown_elements(shape: &[usize], summarize: bool) -> Vec<usize> {
    let strides = strides(shape);
    let mut found = vec![0usize];
    for (d, &len) in shape.iter().enumerate() {
        let (items, _) = axis_items(len, summarize);
        let stride = strides[d];
        found = found.iter().flat_map(|base| items.iter().map(move |i| base + i * stride)).collect();
    }
    found.sort_unstable();
    found
}

/// numpy's line extension: wrap when the word would pass `width`.
fn extend_line(out: &mut String, line: &mut String, word: &str, width: usize, indent: &str) {
    if line.len() + word.len() > width && line.len() > indent.len() {
        out.push_str(line.trim_end());
        out.push('\n');
        *line = indent.to_string();
    }
    line.push_str(word);
}

#[allow(clippy::too_many_arguments)]
fn format_axis(
    shape: &[usize],
    strides: &[usize],
    axis: usize,
    base: usize,
    indent: &str,
    width: usize,
    summarize: bool,
    text: &dyn Fn(usize) -> String,
) -> String {
    let (items, summary) = axis_items(shape[axis], summarize);
    let next_indent = format!("{indent} ");
    let next_width = width - 1;
    let mut s = String::new();
    if axis == shape.len() - 1 {
        let element_width = width - 1;
        let mut line = indent.to_string();
        for (k, &i) in items.iter().enumerate() {
            if summary && k == EDGE_ITEMS {
                extend_line(&mut s, &mut line, "...", element_width, indent);
                line.push(' ');
            }
            extend_line(&mut s, &mut line, &text(base + i * strides[axis]), element_width, indent);
            if k + 1 < items.len() {
                line.push(' ');
            }
        }
        s.push_str(&line);
    } else {
        let separator = "\n".repeat(shape.len() - 1 - axis);
        for (k, &i) in items.iter().enumerate() {
            if summary && k == EDGE_ITEMS {
                s.push_str(indent);
                s.push_str("...");
                s.push_str(&separator);
            }
            s.push_str(indent);
            s.push_str(&format_axis(
                shape,
                strides,
                axis + 1,
                base + i * strides[axis],
                &next_indent,
                next_width,
                summarize,
                text,
            ));
            if k + 1 < items.len() {
                s.push_str(&separator);
            }
        }
    }
    format!("[{}]", &s[indent.len()..])
}

fn element_text(array: &HostArray, i: usize) -> String {
    let value = array.get(i);
    match array.element {
        ElementType::I1 => (if value != 0.0 { "True" } else { "False" }).to_string(),
        ElementType::F32 | ElementType::F16 | ElementType::BF16 => float_text(format!("{}", value as f32), value),
        ElementType::F64 => float_text(format!("{value}"), value),
        // ui64 values above i64::MAX: get_int gives their bits.
        ElementType::U64 => format!("{}", array.get_int(i) as u64),
        _ => format!("{}", array.get_int(i)),
    }
}

/// numpy's default float style: the shortest text that reads back as the
/// same value of the array's type, at most 8 fractional digits, and a
/// trailing `.` for whole numbers.
fn float_text(shortest: String, value: f64) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf".into() } else { "-inf".into() };
    }

    match shortest.find('.') {
        Some(dot) if shortest.len() - dot - 1 > 8 => {
            let rounded = format!("{value:.8}");
            rounded.trim_end_matches('0').to_string()
        }
        Some(_) => shortest,
        None => format!("{shortest}."),
    }
}

/// numpy aligns floats on the decimal point: the fractions are padded on
/// the right to the longest one.
fn align_decimal_points(texts: &mut [(usize, String)]) {
    let fraction = |t: &String| t.find('.').map_or(0, |dot| t.len() - dot - 1);
    let longest = texts.iter().map(|(_, t)| fraction(t)).max().unwrap_or(0);
    for (_, text) in texts.iter_mut() {
        if text.contains('.') {
            let pad = longest - fraction(text);
            text.push_str(&" ".repeat(pad));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(shape: &[usize], values: impl IntoIterator<Item = i64>) -> HostArray {
        let mut array = HostArray::zeros(ElementType::I32, shape).unwrap();
        for (i, v) in values.into_iter().enumerate() {
            array.set_int(i, v);
        }
        array
    }

    #[test]
    fn integers_print_like_numpy() {
        assert_eq!(format_numpy(&ints(&[2, 3], [0, 0, 1, 10, 10, 11])), "[[ 0  0  1]\n [10 10 11]]");
        assert_eq!(format_numpy(&ints(&[1, 2], [0, 0])), "[[0 0]]");
        assert_eq!(format_numpy(&ints(&[3], [9, 109, 19])), "[  9 109  19]");
        assert_eq!(format_numpy(&ints(&[2, 1, 2], [1, 2, 3, 4])), "[[[1 2]]\n\n [[3 4]]]");
    }

    #[test]
    fn unsigned_integers_print_their_unsigned_values() {
        // print(np.array([255, 0, 200], np.uint8)), and uint64's top values.
        let mut bytes = HostArray::zeros(ElementType::U8, &[3]).unwrap();
        for (i, v) in [-1, 0, -56].into_iter().enumerate() {
            bytes.set_int(i, v);
        }
        assert_eq!(format_numpy(&bytes), "[255   0 200]");
        let mut words = HostArray::zeros(ElementType::U64, &[2]).unwrap();
        words.set_int(0, -1);
        words.set_int(1, 1);
        assert_eq!(format_numpy(&words), "[18446744073709551615                    1]");
    }

    #[test]
    fn long_rows_wrap_at_75_columns() {
        // print(np.arange(40))
        assert_eq!(
            format_numpy(&ints(&[40], 0..40)),
            "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n \
             24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39]"
        );
    }

    #[test]
    fn large_arrays_are_summarized() {
        // print(np.arange(2000)) and print(np.arange(3000).reshape(1000, 3))
        assert_eq!(format_numpy(&ints(&[2000], 0..2000)), "[   0    1    2 ... 1997 1998 1999]");
        assert_eq!(
            format_numpy(&ints(&[1000, 3], 0..3000)),
            "[[   0    1    2]\n [   3    4    5]\n [   6    7    8]\n ...\n [2991 2992 2993]\n [2994 2995 2996]\n [2997 2998 2999]]"
        );
    }

    #[test]
    fn floats_print_like_numpy() {
        let mut array = HostArray::zeros(ElementType::F32, &[3]).unwrap();
        for (i, v) in [1.5, 2.0, 0.25].iter().enumerate() {
            array.set(i, *v);
        }
        assert_eq!(format_numpy(&array), "[1.5  2.   0.25]");
        array.set(0, 1.5547155);
        assert_eq!(format_numpy(&array), "[1.5547155 2.        0.25     ]");
    }
}
