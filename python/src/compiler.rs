//! Compiling a module's text for the host CPU, in process, with its
//! diagnostics collected (not printed) so Python can raise them.

use indexmap::IndexMap;
use melior::{
    diagnostic::DiagnosticSeverity,
    ir::{BlockLike, Module, operation::OperationLike},
};
use std::sync::{Arc, Mutex};
use tessel_dialects::{knobs::Settings, source::SourceDiagnostics};
use tessel_lowering::cpu::{self, Padding};
use tessel_runtime::{ElementType, EntryPoint, Jit, OPENMP};

/// Why a module did not compile.
#[derive(Debug, thiserror::Error)]
pub enum CompileFailure {
    /// Located diagnostics (`file:line:col: error: ...`), in order.
    #[error("{}", .0.join("\n"))]
    Diagnostics(Vec<String>),
}

/// An argument of an entry: element type and static shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Argument {
    pub element: ElementType,
    pub shape: Vec<i64>,
}

/// A callable function of a compiled module.
#[derive(Clone, Debug)]
pub struct Entry {
    pub point: EntryPoint,
    pub arguments: Vec<Argument>,
}

/// A module compiled for the host: its engine and entries, by name.
pub struct Compiled {
    /// Owns the code `entries` point into.
    engine: Jit,
    pub entries: IndexMap<String, Entry>,
}

impl Compiled {
    /// A failed call's error with its fault site described (located).
    pub fn describe(&self, error: tessel_runtime::JitError) -> tessel_runtime::JitError {
        self.engine.describe(error)
    }

    /// Whether the module detects races (`tessel.detect_races`).
    pub fn detects_races(&self) -> bool {
        self.engine.detects_races()
    }

    /// What a race its call found was, in words.
    pub fn describe_race(&self, race: &tessel_runtime::race_detection::Race) -> String {
        self.engine.describe_race(race)
    }
}

// SAFETY: the engine is only read after construction (its entries were
// looked up then); compiled code keeps no state between calls but the
// out-of-bounds flag, which every call resets before reading.
unsafe impl Send for Compiled {}
// SAFETY: as for Send: `&Compiled` gives entries to call, nothing to mutate.
unsafe impl Sync for Compiled {}

/// Formats a diagnostic location (`loc("f.py":12:5)`, possibly inside a
/// call-site or named location) as `f.py:12:5`.
fn located(location: &str) -> Option<String> {
    let start = location.find('"')?;
    let rest = &location[start + 1..];
    let end = rest.find('"')?;
    let file = &rest[..end];
    let mut numbers = rest[end + 1..].splitn(3, ':').skip(1);
    let line: u32 = numbers.next()?.parse().ok()?;
    let column: String = numbers.next()?.chars().take_while(char::is_ascii_digit).collect();
    Some(format!("{file}:{line}:{column}"))
}

/// Compiles `text` (named `name` in diagnostics) with the `explicit` knobs,
/// else the schedule `tessel tune` cached for it, else the defaults.
pub fn compile(text: &str, name: &str, explicit: &Settings) -> Result<Compiled, CompileFailure> {
    tessel_lowering::register_everything();
    let context = tessel_dialects::create_context();
    let messages = Arc::new(Mutex::new(Vec::new()));
    let failure = |messages: &Arc<Mutex<Vec<String>>>| {
        let mut collected = messages.lock().expect("no panics while collecting").clone();
        if collected.is_empty() {
            collected.push(format!("{name}: error: compilation failed"));
        }
        CompileFailure::Diagnostics(collected)
    };
    // The parser's guards (and its source buffer for locations); the
    // handler attached after it sees every diagnostic first and keeps it.
    let source = SourceDiagnostics::new(&context, text, name, false);
    let sink = messages.clone();
    let handler = context.attach_diagnostic_handler(move |diagnostic| {
        let severity = match diagnostic.severity() {
            DiagnosticSeverity::Error => "error",
            DiagnosticSeverity::Warning => "warning",
            DiagnosticSeverity::Note => "note",
            DiagnosticSeverity::Remark => "remark",
        };
        let place = located(&diagnostic.location().to_string()).unwrap_or_else(|| name.to_string());
        let mut collected = sink.lock().expect("no panics while collecting");
        collected.push(format!("{place}: {severity}: {diagnostic}"));
        for index in 0..diagnostic.note_count() {
            // MLIR's dump of the failing op says nothing at the user's level.
            if let Ok(note) = diagnostic.note(index)
                && !note.to_string().starts_with("see current operation")
            {
                let place = located(&note.location().to_string()).unwrap_or_else(|| name.to_string());
                collected.push(format!("{place}: note: {note}"));
            }
        }
        true
    });
    let result = (|| {
        let Some(mut module) = source.parse() else { return Err(failure(&messages)) };
        let signatures = signatures(&module);
        let module_text = module.as_operation().to_string();
        let schedule = if explicit.is_empty() {
            match tessel_tuner::cached_schedule(&module_text, &tessel_tuner::cache::default_dir()) {
                Ok(Some(tuned)) => tuned.to_lowering(),
                _ => Settings::default(),
            }
        } else {
            explicit.clone()
        };
        schedule.apply(&context, &mut module);
        cpu::lower(&context, &mut module, Padding::Zero).map_err(|_| failure(&messages))?;
        // OpenMP only: the runner utilities would load a second LLVM.
        let engine = Jit::with_libraries(&module, 3, &[OPENMP])
            .map_err(|error| CompileFailure::Diagnostics(vec![format!("{name}: error: {error}")]))?;
        let mut entries = IndexMap::new();
        for (entry, arguments) in signatures {
            let point = engine
                .entry(&entry)
                .map_err(|error| CompileFailure::Diagnostics(vec![format!("{name}: error: {error}")]))?;
            entries.insert(entry, Entry { point, arguments });
        }
        Ok(Compiled { engine, entries })
    })();
    context.detach_diagnostic_handler(handler);
    drop(source);
    result
}

/// The module as MLIR prints it: the key of the tuning cache (the text
/// `tessel tune` and `compile` look schedules up by).
pub fn canonical_text(text: &str, name: &str) -> Result<String, CompileFailure> {
    tessel_lowering::register_everything();
    let context = tessel_dialects::create_context();
    let module = Module::parse(&context, text)
        .ok_or_else(|| CompileFailure::Diagnostics(vec![format!("{name}: error: the module does not parse")]))?;
    Ok(module.as_operation().to_string())
}

/// The public functions callable on arrays (every argument a memref of a
/// static shape and a supported element type) and their arguments; kernels
/// (the callees of `grid.call`) are left out.
fn signatures(module: &Module) -> Vec<(String, Vec<Argument>)> {
    let mut callees = Vec::new();
    let mut functions = Vec::new();
    let body = module.body();
    let mut op = body.first_operation();
    while let Some(function) = op {
        op = function.next_in_block();
        if function.name().as_string_ref().as_str() != Ok("func.func") || function.has_attribute("sym_visibility") {
            continue;
        }
        let Ok(name) = function.attribute("sym_name") else { continue };
        let name = name.to_string().trim_matches('"').to_string();
        let text = function.to_string();
        for line in text.lines().filter(|line| line.contains("grid.call @")) {
            if let Some(callee) = line.split("grid.call @").nth(1).and_then(|rest| rest.split_whitespace().next()) {
                callees.push(callee.to_string());
            }
        }
        let Some(arguments) = memref_arguments(&function) else { continue };
        functions.push((name, arguments));
    }
    functions.into_iter().filter(|(name, _)| !callees.contains(name)).collect()
}

fn memref_arguments<'c: 'a, 'a>(function: &impl OperationLike<'c, 'a>) -> Option<Vec<Argument>> {
    use melior::ir::{
        RegionLike, TypeLike, ValueLike,
        r#type::{DimSize, MemRefType, ShapedTypeLike},
    };
    let region = function.region(0).ok()?;
    let block = region.first_block()?;
    (0..block.argument_count())
        .map(|index| {
            let r#type = block.argument(index).ok()?.r#type();
            if !r#type.is_mem_ref() {
                return None;
            }
            let memref = MemRefType::try_from(r#type).ok()?;
            let element = ElementType::from_mlir(&memref.element().to_string())?;
            let shape = (0..memref.rank())
                .map(|d| match memref.dim_size(d) {
                    Ok(DimSize::Static(size)) => Some(size as i64),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?;
            Some(Argument { element, shape })
        })
        .collect()
}
