//! `tessel-opt`: parse, verify, run passes and print, with mlir-opt habits.
//!
//! Every registered pass (upstream or Tessel's) is a flag: `--canonicalize`,
//! `--convert-gpu-to-rocdl=chipset=gfx90a`. Exit codes: 0 success, 1
//! diagnostics (`file:line:col: error: ...`), 2 usage errors.

use clap::{CommandFactory, FromArgMatches, Parser};
use melior::{
    Context,
    ir::operation::{OperationLike, OperationPrintingFlags},
    pass::{PassIrPrintingOptions, PassManager},
    utility::parse_pass_pipeline,
};
use std::{io::Read, path::PathBuf, process::ExitCode};
use tessel_dialects::{create_context, ffi, source::SourceDiagnostics};

#[derive(Parser, Debug)]
#[command(
    name = "tessel-opt",
    about = "Parse, verify, transform and print Tessel IR",
    after_help = "Every registered pass is also a flag, e.g. --grid-verify-specs or \
                  --convert-gpu-to-rocdl=chipset=gfx90a; --list-passes shows them all."
)]
struct Options {
    /// Input file, `-` for stdin.
    #[arg(default_value = "-")]
    input: String,
    /// Output file (default stdout).
    #[arg(short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// A textual pass pipeline, e.g. `builtin.module(grid-verify-specs,cse)`.
    #[arg(long = "pass-pipeline", value_name = "PIPELINE")]
    pass_pipeline: Option<String>,
    /// Process each `// -----` separated chunk of the input on its own.
    #[arg(long = "split-input-file")]
    split_input_file: bool,
    /// Check diagnostics against `expected-*` comments instead of printing them.
    #[arg(long = "verify-diagnostics")]
    verify_diagnostics: bool,
    /// Print the IR after every pass (to stderr).
    #[arg(long = "mlir-print-ir-after-all")]
    print_ir_after_all: bool,
    /// Print locations with the IR.
    #[arg(long = "mlir-print-debuginfo")]
    print_debuginfo: bool,
    /// Print operations in generic form.
    #[arg(long = "mlir-print-op-generic")]
    print_generic: bool,
    /// Accept operations of unregistered dialects.
    #[arg(long = "allow-unregistered-dialect")]
    allow_unregistered_dialect: bool,
    /// List every registered pass and pipeline with its options, then exit.
    #[arg(long = "list-passes")]
    list_passes: bool,
    /// Run each of Tessel's own passes alone, each on a fresh parse of the
    /// input (of each chunk), printing `PASS: ok|failed` per pass: a
    /// robustness check (a pass meeting IR it does not handle must leave
    /// it alone or report it, never crash) in one process instead of one
    /// per pass. Exit 1 when any pass (or the parse) failed.
    #[arg(long = "each-pass", conflicts_with_all = ["pass_pipeline", "verify_diagnostics"])]
    each_pass: bool,
}

/// One `--<pass>[=options]` flag.
struct PassFlag {
    name: String,
    options: Option<String>,
}

const SPLIT_MARKER: &str = "// -----";

pub fn main(args: Vec<String>) -> ExitCode {
    tessel_lowering::register_everything();

    let (clap_args, pass_flags) = split_pass_flags(args);
    let options = match Options::command().try_get_matches_from(clap_args) {
        Ok(matches) => Options::from_arg_matches(&matches).expect("clap validated the matches"),
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    if options.list_passes {
        // SAFETY: takes no arguments; prints the process's pass registry.
        unsafe { ffi::tesselPrintRegisteredPasses() };
        return ExitCode::SUCCESS;
    }
    if options.each_pass && !pass_flags.is_empty() {
        eprintln!("tessel-opt: error: --each-pass runs every Tessel pass itself: give no pass flags");
        return ExitCode::from(2);
    }
    let pipeline = match (&options.pass_pipeline, pass_flags.is_empty()) {
        (Some(_), false) => {
            eprintln!("tessel-opt: error: use either --pass-pipeline or pass flags, not both");
            return ExitCode::from(2);
        }
        (Some(pipeline), true) => Some(pipeline.clone()),
        (None, false) => Some(pipeline_from_flags(&pass_flags)),
        (None, true) => None,
    };
    if let Some(pipeline) = &pipeline {
        // Checked once up front so that a bad pipeline is a usage error.
        let context = create_context();
        if let Err(message) = build_pass_manager(&context, pipeline, false) {
            eprintln!("tessel-opt: error: invalid pass pipeline '{pipeline}': {message}");
            return ExitCode::from(2);
        }
    }

    let (source, name) = match read_input(&options.input) {
        Ok(read) => read,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(1);
        }
    };
    let chunks = if options.split_input_file { split_chunks(&source) } else { vec![source] };

    let mut outputs = Vec::new();
    let mut failed = false;
    for chunk in &chunks {
        let (output, ok) = if options.each_pass {
            each_pass(chunk, &name)
        } else {
            process_chunk(&options, pipeline.as_deref(), chunk, &name)
        };
        failed |= !ok;
        outputs.extend(output);
    }
    let text = outputs.join(&format!("{SPLIT_MARKER}\n"));
    let written = match &options.output {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("cannot write '{}': {e}", path.display())),
        None => {
            crate::write_stdout(&text);
            Ok(())
        }
    };
    if let Err(message) = written {
        eprintln!("tessel-opt: error: {message}");
        return ExitCode::from(1);
    }
    if failed { ExitCode::from(1) } else { ExitCode::SUCCESS }
}

/// Separates `--<registered pass>[=opts]` flags from tessel-opt's own.
fn split_pass_flags(args: Vec<String>) -> (Vec<String>, Vec<PassFlag>) {
    let own: Vec<String> = Options::command()
        .get_arguments()
        .filter_map(|argument| argument.get_long().map(str::to_string))
        .chain(["help".to_string(), "version".to_string()])
        .collect();
    let mut clap_args = Vec::new();
    let mut pass_flags = Vec::new();
    for (position, arg) in args.into_iter().enumerate() {
        let flag = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-').filter(|rest| rest.len() > 1));
        if let (true, Some(flag)) = (position > 0, flag) {
            let (name, options) = match flag.split_once('=') {
                Some((name, options)) => (name, Some(options.to_string())),
                None => (flag, None),
            };
            if !own.iter().any(|own| own == name) && tessel_passes::is_registered(name) {
                pass_flags.push(PassFlag { name: name.to_string(), options });
                continue;
            }
        }
        clap_args.push(arg);
    }
    (clap_args, pass_flags)
}

fn pipeline_from_flags(flags: &[PassFlag]) -> String {
    let passes: Vec<String> = flags
        .iter()
        .map(|flag| match &flag.options {
            Some(options) => format!("{}{{{}}}", flag.name, options.trim_matches('"')),
            None => flag.name.clone(),
        })
        .collect();
    format!("builtin.module({})", passes.join(","))
}

fn build_pass_manager<'c>(
    context: &'c Context,
    pipeline: &str,
    print_after_all: bool,
) -> Result<PassManager<'c>, String> {
    // Implicit nesting, like mlir-opt: `--some-func-pass` nests under func.func.
    // SAFETY: the C++ side returns a new pass manager on `context`, owned
    // from here on by the melior `PassManager` (which destroys it).
    let manager = unsafe { PassManager::from_raw(ffi::tesselPassManagerCreateImplicitNesting(context.to_raw())) };
    parse_pass_pipeline(manager.as_operation_pass_manager(), pipeline).map_err(|error| error.to_string())?;
    if print_after_all {
        manager.enable_ir_printing(&PassIrPrintingOptions {
            before_all: false,
            after_all: true,
            module_scope: true,
            on_change: false,
            on_failure: false,
            flags: OperationPrintingFlags::new(),
            tree_printing_path: PathBuf::new(),
        });
    }
    Ok(manager)
}

fn read_input(input: &str) -> Result<(String, String), String> {
    let (bytes, name) = if input == "-" {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).map_err(|e| format!("tessel-opt: error: cannot read stdin: {e}"))?;
        (bytes, "<stdin>".to_string())
    } else {
        let bytes =
            std::fs::read(input).map_err(|e| format!("tessel-opt: error: could not open input file '{input}': {e}"))?;
        (bytes, input.to_string())
    };
    match String::from_utf8(bytes) {
        Ok(source) => Ok((source, name)),
        Err(error) => {
            // Located like any other diagnostic: the first invalid byte.
            let valid = &error.as_bytes()[..error.utf8_error().valid_up_to()];
            let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
            let column = 1 + valid.iter().rev().take_while(|&&b| b != b'\n').count();
            Err(format!("{name}:{line}:{column}: error: input is not valid UTF-8 text"))
        }
    }
}

/// Splits at `// -----` lines. Each chunk is prefixed with the newlines
/// that precede it, so its diagnostics carry the line numbers of the file.
fn split_chunks(source: &str) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut current = String::new();
    for (number, line) in source.split_inclusive('\n').enumerate() {
        if line.trim_end().starts_with(SPLIT_MARKER) {
            chunks.push(std::mem::take(&mut current));
            current = "\n".repeat(number + 1);
        } else {
            current.push_str(line);
        }
    }
    chunks.push(current);
    chunks
}

/// Parses, transforms and prints one chunk: (printed IR, success).
fn process_chunk(options: &Options, pipeline: Option<&str>, chunk: &str, name: &str) -> (Option<String>, bool) {
    let context = create_context();
    context.set_allow_unregistered_dialects(options.allow_unregistered_dialect);
    // MLIR prints IR between passes only without its thread pool.
    context.enable_multi_threading(!options.print_ir_after_all);
    let diagnostics = SourceDiagnostics::new(&context, chunk, name, options.verify_diagnostics);
    let result = (|| {
        let mut module = diagnostics.parse()?;
        if let Some(pipeline) = pipeline {
            let manager = build_pass_manager(&context, pipeline, options.print_ir_after_all).ok()?;
            manager.run(&mut module).ok()?;
        }
        let mut flags = OperationPrintingFlags::new();
        if options.print_debuginfo {
            flags = flags.enable_debug_info(true, false);
        }
        if options.print_generic {
            flags = flags.print_generic_operation_form();
        }
        module.as_operation().to_string_with_flags(flags).ok()
    })();
    if options.verify_diagnostics {
        // Expected diagnostics make a failed parse or pass a success.
        let ok = diagnostics.verify();
        return (result.filter(|_| ok).map(|text| text + "\n"), ok);
    }
    let ok = result.is_some();
    (result.map(|text| text + "\n"), ok)
}

/// Every Tessel pass's pipeline alone: Rust passes on the module, C++
/// passes nested where they run.
fn every_tessel_pass() -> Vec<(String, String)> {
    let rust = tessel_passes::PASSES
        .iter()
        .map(|pass| (pass.argument.to_string(), format!("builtin.module({})", pass.argument)));
    let cpp = tessel_passes::CPP_PASSES.iter().map(|pass| {
        let pipeline = match pass.anchor {
            "builtin.module" => format!("builtin.module({})", pass.argument),
            anchor => format!("builtin.module({anchor}({}))", pass.argument),
        };
        (pass.argument.to_string(), pipeline)
    });
    rust.chain(cpp).collect()
}

/// `--each-pass` on one chunk: (a `PASS: ok|failed` line per pass, all
/// passed). Each pass gets its own parse, as `tessel-opt --PASS` would.
fn each_pass(chunk: &str, name: &str) -> (Option<String>, bool) {
    let context = create_context();
    let mut report = String::new();
    let mut all = true;
    for (argument, pipeline) in every_tessel_pass() {
        let diagnostics = SourceDiagnostics::new(&context, chunk, name, false);
        let ok = diagnostics.parse().is_some_and(|mut module| {
            build_pass_manager(&context, &pipeline, false).is_ok_and(|manager| manager.run(&mut module).is_ok())
        });
        all &= ok;
        report += &format!("{argument}: {}\n", if ok { "ok" } else { "failed" });
    }
    (Some(report), all)
}
