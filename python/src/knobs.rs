//! Schedule knobs given as Python keyword arguments (`register_tile=(4,
//! 16)`, `num_threads=2`): the knobs of `tessel run`'s flags, named with
//! underscores.

use pyo3::{exceptions::PyValueError, prelude::*, types::PyDict};
use tessel_dialects::knobs::{self, Kind, Settings, Target, Value};

/// The knobs a CPU compile accepts, by flag.
fn cpu_knobs() -> impl Iterator<Item = (String, &'static knobs::Knob)> {
    knobs::ALL
        .iter()
        .copied()
        .filter(|knob| knob.target != Target::Gpu)
        .filter_map(|knob| Some((knob.flag?.replace('-', "_"), knob)))
}

pub fn names() -> Vec<String> {
    cpu_knobs().map(|(name, _)| name).collect()
}

fn value(knob: &'static knobs::Knob, name: &str, given: &Bound<'_, PyAny>) -> PyResult<Value> {
    let bad = |why: String| PyValueError::new_err(format!("knob {name}: {why}"));
    let value = match knob.kind {
        Kind::Integer { .. } | Kind::OneOf(_) | Kind::Flag => Value::Integer(given.extract::<i64>()?),
        Kind::Choice(choices) => match given.extract::<String>() {
            Ok(text) => Value::Integer(
                choices
                    .iter()
                    .position(|choice| *choice == text)
                    .ok_or_else(|| bad(format!("'{text}' is not one of {choices:?}")))? as i64,
            ),
            Err(_) => Value::Integer(given.extract::<i64>()?),
        },
        Kind::Tile { .. } => match given.extract::<String>() {
            Ok(text) => {
                let (rows, columns) = knobs::parse_tile(&text).map_err(bad)?;
                Value::Pair(rows, columns)
            }
            Err(_) => {
                let (rows, columns) = given.extract::<(i64, i64)>()?;
                Value::Pair(rows, columns)
            }
        },
        Kind::Name(choices) => {
            let text = given.extract::<String>()?;
            Value::Name(
                choices
                    .iter()
                    .copied()
                    .find(|choice| *choice == text)
                    .ok_or_else(|| bad(format!("'{text}' is not one of {choices:?}")))?,
            )
        }
        Kind::Unit => {
            if !given.is_truthy()? {
                return Err(bad("a switch: pass True or leave it out".into()));
            }
            Value::Set
        }
    };
    let legal = match value {
        Value::Integer(integer) => knob.allows(integer),
        Value::Pair(rows, columns) => knob.allows(rows) && knob.allows(columns),
        Value::Name(_) | Value::Set => true,
    };
    if !legal {
        return Err(bad(format!("{given} is out of range {:?}", knob.range())));
    }
    Ok(value)
}

/// The settings `given` (`{name: value}`) asks for.
pub fn settings(given: &Bound<'_, PyDict>) -> PyResult<Settings> {
    let mut settings = Settings::default();
    for (key, given) in given.iter() {
        let name: String = key.extract()?;
        let Some((_, knob)) = cpu_knobs().find(|(flag, _)| *flag == name) else {
            return Err(PyValueError::new_err(format!(
                "unknown schedule knob '{name}'; the knobs are {}",
                names().join(", ")
            )));
        };
        if given.is_none() {
            continue;
        }
        settings.set(knob, value(knob, &name, &given)?);
    }
    Ok(settings)
}
