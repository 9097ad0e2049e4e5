//! Arrays printed the way numpy's `print(array)` does (numpy's
//! `_formatArray`: 75-column lines, arrays over 1000 elements summarized
//! with `...` around 3 edge items), so outputs compare with the Pallas
//! documentation's examples as text.

use crate::{ElementType, HostArray};
use half::f16;

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
    // bfloat16 is ml_dtypes' type: numpy prints each element as its `str`,
    // unaligned.
    let own_style = array.element == ElementType::BF16;
    let scientific = array.element.is_float() && !own_style && is_scientific(shown.iter().map(|&i| array.get(i)));
    let mut texts: Vec<(usize, String)> = if scientific {
        scientific_texts(array, &shown)
    } else {
        shown.iter().map(|&i| (i, element_text(array, i))).collect()
    };
    if array.element.is_float() && !scientific && !own_style {
        align_decimal_points(&mut texts);
    }
    let width = if own_style { 0 } else { texts.iter().map(|(_, t)| t.len()).max().unwrap_or(0) };
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
        ElementType::BF16 => general_format(value),
        e if e.is_float() => float_text(shortest_text(e, value, false), value),
        // ui64 values above i64::MAX: get_int gives their bits.
        ElementType::U64 => format!("{}", array.get_int(i) as u64),
        _ => format!("{}", array.get_int(i)),
    }
}

/// C's `%g` (6 significant digits, trailing zeros dropped): how ml_dtypes
/// prints a bfloat16, and so how numpy and JAX print bfloat16 arrays.
fn general_format(value: f64) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let scientific = format!("{value:.5e}");
    let (mantissa, exponent) = scientific.split_once('e').expect("scientific text has an exponent");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    let trim = |text: &str| text.trim_end_matches('0').trim_end_matches('.').to_string();
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.unsigned_abs())
    } else {
        let decimals = (5 - exponent) as usize;
        trim(&format!("{value:.decimals$}"))
    }
}

/// The decimal with the fewest significant digits that reads back as the
/// f16 `value` (what numpy prints for half floats; f32's shortest
/// text would show digits the type does not hold).
fn shortest_half(value: f64) -> f64 {
    let reads_back = |decimal: f64| f16::from_f64(decimal).to_f64() == value;
    if !value.is_finite() {
        return value;
    }
    (0..9)
        .map(|digits| format!("{value:.digits$e}").parse::<f64>().unwrap_or(value))
        .find(|&d| reads_back(d))
        .unwrap_or(value)
}

/// The shortest text (positional, or scientific as Rust's `{:e}`) that
/// reads back as the same value of the float type `element` (f32, f16 or
/// f64; bfloat16 prints as ml_dtypes does, `general_format`).
fn shortest_text(element: ElementType, value: f64, scientific: bool) -> String {
    match (element, scientific) {
        (ElementType::F64, false) => format!("{value}"),
        (ElementType::F64, true) => format!("{value:e}"),
        (ElementType::F16, false) => format!("{}", shortest_half(value)),
        (ElementType::F16, true) => format!("{:e}", shortest_half(value)),
        (_, false) => format!("{}", value as f32),
        (_, true) => format!("{:e}", value as f32),
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

/// numpy prints a float array in scientific notation when its finite
/// nonzero magnitudes reach 1e8, go below 1e-4 or span more than 1e3
/// (`FloatingFormat.fillFormat`): fixed notation would show 1e-45 as 0.
fn is_scientific(values: impl Iterator<Item = f64>) -> bool {
    let magnitudes: Vec<f64> = values.filter(|v| v.is_finite() && *v != 0.0).map(f64::abs).collect();
    let (Some(min), Some(max)) =
        (magnitudes.iter().copied().reduce(f64::min), magnitudes.iter().copied().reduce(f64::max))
    else {
        return false;
    };
    max >= 1e8 || min < 1e-4 || max / min > 1e3
}

/// A float in scientific notation with `digits` fraction digits (of the
/// exact value of the array's type, rounded), as (signed integer digit,
/// fraction digits, exponent).
fn scientific_parts(array: &HostArray, i: usize, digits: usize) -> (String, String, i32) {
    let value = array.get(i);
    let text = match array.element {
        ElementType::F64 => format!("{value:.digits$e}"),
        _ => format!("{:.digits$e}", value as f32),
    };
    let (mantissa, exponent) = text.split_once('e').expect("scientific text has an exponent");
    let (integer, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    (integer.to_string(), fraction.to_string(), exponent.parse().expect("an integer exponent"))
}

/// Fraction digits of the shortest scientific text that reads back as the
/// same value of the array's type, at most 8 (numpy's precision).
fn shortest_fraction_digits(array: &HostArray, i: usize) -> usize {
    let value = array.get(i);
    let shortest = shortest_text(array.element, value, true);
    let mantissa = shortest.split_once('e').map_or(shortest.as_str(), |(mantissa, _)| mantissa);
    mantissa.split_once('.').map_or(0, |(_, fraction)| fraction.len()).min(8)
}

/// numpy's scientific notation for the `shown` elements: as many fraction
/// digits for all as the longest shortest text needs (further digits of
/// the exact values, as numpy's `min_digits` gives); exponents signed, of
/// at least two digits and as many as the longest; integer digits
/// right-aligned (the caller pads nan and inf to the common width).
fn scientific_texts(array: &HostArray, shown: &[usize]) -> Vec<(usize, String)> {
    let finite = |i: usize| array.get(i).is_finite();
    let precision =
        shown.iter().filter(|&&i| finite(i)).map(|&i| shortest_fraction_digits(array, i)).max().unwrap_or(0);
    let parts: Vec<Option<(String, String, i32)>> =
        shown.iter().map(|&i| finite(i).then(|| scientific_parts(array, i, precision))).collect();
    let exponent_digits =
        parts.iter().flatten().map(|(_, _, e)| e.unsigned_abs().to_string().len()).max().unwrap_or(0).max(2);
    let integer_width = parts.iter().flatten().map(|(integer, _, _)| integer.len()).max().unwrap_or(0);
    shown
        .iter()
        .zip(parts)
        .map(|(&i, part)| match part {
            Some((integer, fraction, exponent)) => {
                let sign = if exponent < 0 { '-' } else { '+' };
                let magnitude = exponent.unsigned_abs();
                (i, format!("{integer:>integer_width$}.{fraction}e{sign}{magnitude:0>exponent_digits$}"))
            }
            None => (i, element_text(array, i)),
        })
        .collect()
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

    #[test]
    fn half_floats_print_their_own_shortest_digits() {
        // print(np.array([0.29345703, -0.10913086, 2.0], np.float16)), and
        // ml_dtypes' bfloat16 (C's %g) of [0.29296875, 3.140625].
        assert_eq!(
            format_numpy(&floats(ElementType::F16, &[0.29345703, -0.10913086, 2.0])),
            "[ 0.2935  -0.10913  2.     ]"
        );
        let bf16s = |values: &[f64]| format_numpy(&floats(ElementType::BF16, values));
        assert_eq!(bf16s(&[0.29296875, 3.140625]), "[0.292969 3.14062]");
        // print(np.array([2, -0., 1e-7, 123456789, nan, -inf, 0.5], ml_dtypes.bfloat16))
        assert_eq!(
            bf16s(&[2.0, -0.0, 1.00117e-7, 1.23207680e8, f64::NAN, f64::NEG_INFINITY, 0.5]),
            "[2 -0 1.00117e-07 1.23208e+08 nan -inf 0.5]"
        );
    }

    fn floats(element: ElementType, values: &[f64]) -> HostArray {
        let mut array = HostArray::zeros(element, &[values.len()]).unwrap();
        for (i, v) in values.iter().enumerate() {
            array.set(i, *v);
        }
        array
    }

    #[test]
    fn tiny_huge_or_widely_spread_floats_print_in_scientific_notation_like_numpy() {
        let f32s = |values: &[f64]| format_numpy(&floats(ElementType::F32, values));
        // print(np.array([nan, -0., -inf, -0., -1.4e-45], np.float32))
        assert_eq!(
            f32s(&[f64::NAN, -0.0, f64::NEG_INFINITY, -0.0, -1.4e-45]),
            "[    nan -0.e+00    -inf -0.e+00 -1.e-45]"
        );
        // print(np.array([1e-5, 1.0], np.float32)), [1.5, 2e8], [0.001, 2.5]
        assert_eq!(f32s(&[1e-5, 1.0]), "[1.e-05 1.e+00]");
        assert_eq!(f32s(&[1.5, 2e8]), "[1.5e+00 2.0e+08]");
        assert_eq!(f32s(&[0.001, 2.5]), "[1.0e-03 2.5e+00]");
        // print(np.array([nan, -0., -inf, -5e-324])): three exponent digits.
        assert_eq!(
            format_numpy(&floats(ElementType::F64, &[f64::NAN, -0.0, f64::NEG_INFINITY, -5e-324])),
            "[     nan -0.e+000     -inf -5.e-324]"
        );
        // print(np.array([1/3, 1e-6], np.float32)), [-1.5e-5, 2, 100]
        assert_eq!(f32s(&[1.0 / 3.0, 1e-6]), "[3.3333334e-01 1.0000000e-06]");
        assert_eq!(f32s(&[-1.5e-5, 2.0, 100.0]), "[-1.5e-05  2.0e+00  1.0e+02]");
        // Shorter values show further digits of their exact value, as
        // numpy's min_digits does: print(np.array([0.4483136, 1e-4, 1.0836267], np.float32))
        assert_eq!(f32s(&[0.4483136, 1e-4, 1.0836267]), "[4.4831359e-01 9.9999997e-05 1.0836267e+00]");
        // f64 digits beyond 8 are rounded: print(np.array([1/3, 1e-6]))
        assert_eq!(format_numpy(&floats(ElementType::F64, &[1.0 / 3.0, 1e-6])), "[3.33333333e-01 1.00000000e-06]");
        // Within 1e-4..1e8 and a spread of 1e3: fixed notation.
        assert_eq!(f32s(&[0.001, 0.5]), "[0.001 0.5  ]");
    }
}
