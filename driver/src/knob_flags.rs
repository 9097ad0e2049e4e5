//! Command-line flags made from the knob table (`tessel_dialects::knobs`):
//! one per knob that has a flag, with the table's help, value name and
//! legal values, read back into `Settings`. A new knob gets its flag here
//! without a line of driver code.

use clap::{
    Arg, ArgAction, ArgMatches, Command,
    builder::{BoolishValueParser, PossibleValuesParser},
};
use tessel_dialects::knobs::{self, Cli, Kind, Knob, Settings, Value};

/// The clap id of a knob's flag.
fn id(knob: &Knob) -> &'static str {
    knob.attribute.trim_start_matches("tessel.")
}

/// Adds a flag for every knob `wanted` keeps that has one.
pub fn add(mut command: Command, wanted: impl Fn(&Knob) -> bool) -> Command {
    for knob in knobs::ALL.iter().copied().filter(|knob| wanted(knob)) {
        let Some(flag) = knob.flag else { continue };
        let arg = Arg::new(id(knob)).long(flag).help(knob.help);
        let arg = match knob.cli {
            Cli::Derived => continue,
            Cli::Switch => arg.action(ArgAction::SetTrue),
            Cli::OnOff => arg.value_name(knob.value_name).value_parser(BoolishValueParser::new()),
            Cli::Value => with_values(arg.value_name(knob.value_name), knob),
            Cli::SetsWith { of } => with_values(arg.value_name(knob.value_name), of).conflicts_with(id(of)),
        };
        command = command.arg(arg);
    }
    command
}

/// The parser of a flag taking `knob`'s values.
fn with_values(arg: Arg, knob: &Knob) -> Arg {
    match knob.kind {
        Kind::Integer { min, max } => arg.value_parser(clap::value_parser!(i64).range(min..=max)),
        Kind::OneOf(values) => arg.value_parser(PossibleValuesParser::new(values.iter().map(i64::to_string))),
        Kind::Choice(names) | Kind::Name(names) => arg.value_parser(PossibleValuesParser::new(names)),
        Kind::Tile { .. } => arg.value_parser(knobs::parse_tile),
        Kind::Flag | Kind::Unit => arg.action(ArgAction::SetTrue),
    }
}

/// The value given for `knob`'s values under the flag id `id`, if any.
fn given(matches: &ArgMatches, id: &str, knob: &Knob) -> Option<Value> {
    match knob.kind {
        Kind::Integer { .. } => matches.get_one::<i64>(id).map(|&value| Value::Integer(value)),
        Kind::OneOf(_) => {
            matches.get_one::<String>(id).map(|text| Value::Integer(text.parse().expect("a possible value")))
        }
        Kind::Choice(names) => matches
            .get_one::<String>(id)
            .map(|name| Value::Integer(names.iter().position(|known| known == name).expect("a possible value") as i64)),
        Kind::Name(names) => matches
            .get_one::<String>(id)
            .map(|name| Value::Name(names.iter().copied().find(|known| known == name).expect("a possible value"))),
        Kind::Tile { .. } => matches.get_one::<(i64, i64)>(id).map(|&(rows, columns)| Value::Pair(rows, columns)),
        Kind::Flag | Kind::Unit => None,
    }
}

/// The settings the flags `add` made (with the same `wanted`) give.
pub fn read(matches: &ArgMatches, wanted: impl Fn(&Knob) -> bool) -> Settings {
    let mut settings = Settings::default();
    for &knob in knobs::ALL.iter().filter(|knob| knob.flag.is_some() && wanted(knob)) {
        let id = id(knob);
        match knob.cli {
            Cli::Derived => {}
            Cli::Switch => {
                if matches.get_flag(id) {
                    settings.set(knob, if knob.kind == Kind::Unit { Value::Set } else { Value::Integer(1) });
                }
            }
            Cli::OnOff => {
                if let Some(&on) = matches.get_one::<bool>(id) {
                    settings.set_integer(knob, on as i64);
                }
            }
            Cli::Value => {
                if let Some(value) = given(matches, id, knob) {
                    settings.set(knob, value);
                }
            }
            Cli::SetsWith { of } => {
                if let Some(value) = given(matches, id, of) {
                    let of = knobs::by_attribute(of.attribute).expect("a knob of the table");
                    settings.set(of, value).set_integer(knob, 1);
                }
            }
        }
    }
    settings
}
