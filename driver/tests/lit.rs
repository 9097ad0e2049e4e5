//! The lit-style test harness: every `test/**/*.mlir` runs its `// RUN:`
//! lines through `bash -o pipefail` with real FileCheck, and the full output
//! of each RUN line's tool (the part before the first `|`) is snapshotted
//! with insta, recorded in the same run FileCheck checks (`Capture`). A second suite feeds every test file, truncated and mutated,
//! to `tessel-opt` and requires a clean exit (0 or 1), never a crash. A
//! third reruns every end-to-end test's `tessel run` lines on the ROCm
//! pipeline's kernels, emulated (`--device rocm-emulated`), against the
//! same CHECK lines.
//!
//! Output that depends on the host (symbol sizes and offsets of an object,
//! the last digits of a reassociated float sum) is kept out of snapshots
//! by `// SNAPSHOT-FILTER: REGEX => REPLACEMENT` lines in the test file,
//! applied to each of its snapshots; FileCheck still checks its structure.
//!
//! Substitutions: `%s` (the file, relative to the repository root, which is
//! the working directory), `%t` (a per-file temporary path), `tessel-opt`,
//! `tessel`,
//! `FileCheck`, `mlir-opt`, `not`, `llvm-readelf`, `llvm-objdump` (LLVM
//! 22's), `%plugin` (the dialect plugin).

mod accuracy;
mod differential;
mod generated_docs;
mod interpreter_coverage;

use std::{
    path::{Path, PathBuf},
    process::Command,
};

pub(crate) const LLVM_BIN: &str = "/usr/lib/llvm-22/bin";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn tessel_opt() -> &'static str {
    env!("CARGO_BIN_EXE_tessel-opt")
}

/// The RUN commands of a test file, with `\` continuations joined.
fn run_lines(source: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut pending: Option<String> = None;
    for line in source.lines() {
        let Some(rest) = line.trim_start().strip_prefix("// RUN:") else {
            continue;
        };
        let rest = rest.trim();
        let text = match pending.take() {
            Some(previous) => format!("{previous} {rest}"),
            None => rest.to_string(),
        };
        match text.strip_suffix('\\') {
            Some(continued) => pending = Some(continued.trim_end().to_string()),
            None => commands.push(text),
        }
    }
    commands
}

/// Replaces lit's substitutions and tool names with real paths.
fn substitute(command: &str, relative: &str, temp: &Path) -> String {
    let tools = [
        ("tessel-opt", tessel_opt().to_string()),
        ("tessel", env!("CARGO_BIN_EXE_tessel").to_string()),
        ("FileCheck", format!("{LLVM_BIN}/FileCheck")),
        ("mlir-opt", format!("{LLVM_BIN}/mlir-opt")),
        ("not", format!("{LLVM_BIN}/not")),
        ("llvm-readelf", format!("{LLVM_BIN}/llvm-readelf")),
        ("llvm-objdump", format!("{LLVM_BIN}/llvm-objdump")),
    ];
    let mut words: Vec<String> = Vec::new();
    for word in command.split(' ') {
        let word = word
            .replace("%plugin", tessel_dialects_plugin())
            .replace("%s", relative)
            .replace("%t", &temp.display().to_string());
        let replaced = tools.iter().find(|(name, _)| *name == word).map(|(_, path)| path.clone());
        words.push(replaced.unwrap_or(word));
    }
    words.join(" ")
}

fn tessel_dialects_plugin() -> &'static str {
    // Built next to the static dialect library by dialects/build.rs.
    env!("TESSEL_PLUGIN_PATH")
}

/// A tuning cache no test writes: schedules a user tuned on this machine
/// (in ~/.cache/tessel) must not change what tests print. Tests of the
/// cache set their own `TESSEL_CACHE_DIR`.
fn empty_cache_dir() -> PathBuf {
    std::env::temp_dir().join("tessel-lit-empty-cache")
}

fn bash(command: &str) -> std::process::Output {
    Command::new("bash")
        .args(["-o", "pipefail", "-c", command])
        .env("TESSEL_CACHE_DIR", empty_cache_dir())
        .current_dir(repo_root())
        .output()
        .expect("bash runs")
}

/// The file's `// SNAPSHOT-FILTER: REGEX => REPLACEMENT` lines.
fn snapshot_filters(source: &str) -> Result<Vec<(String, String)>, String> {
    source
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("// SNAPSHOT-FILTER:"))
        .map(|filter| match filter.split_once(" => ") {
            // " => " takes one space each side; further spaces belong to
            // the replacement (a filter may replace padding too).
            Some((regex, replacement)) => Ok((regex.trim().to_string(), replacement.to_string())),
            None => Err(format!("SNAPSHOT-FILTER needs 'REGEX => REPLACEMENT': {filter}")),
        })
        .collect()
}

/// A failed RUN line's report.
fn failure(what: &str, command: &str, output: &std::process::Output) -> String {
    format!(
        "{what} failed ({}):\n{command}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn snapshot_name(relative: &str, index: usize) -> String {
    let stem = relative.trim_start_matches("test/").trim_end_matches(".mlir").replace('/', "__");
    format!("{stem}__run{index}")
}

/// Where a RUN line's tool (the part before its first `|`, or the whole
/// line) leaves what it printed and its exit status, as it runs inside
/// that very line.
struct Capture {
    stdout: PathBuf,
    stderr: PathBuf,
    status: PathBuf,
}

impl Capture {
    fn new(temp: &Path, index: usize) -> Capture {
        let file = |what: &str| PathBuf::from(format!("{}.run{index}.{what}", temp.display()));
        Capture { stdout: file("stdout"), stderr: file("stderr"), status: file("status") }
    }

    /// `command` with its tool wrapped in a subshell that records the
    /// tool's stdout, stderr and status, then passes them on unchanged: the
    /// rest of the pipeline reads the same bytes, and `${PIPESTATUS[0]}`
    /// is the tool's status. A leading `not` (LLVM's: success when the
    /// tool fails without crashing) is applied to the recorded status, so
    /// the snapshot shows the tool's own exit code, as before.
    fn wrap(&self, command: &str) -> String {
        let (tool, rest) = match command.split_once(" | ") {
            Some((tool, rest)) => (tool, Some(rest)),
            None => (command, None),
        };
        let (tool, negated) = match tool.strip_prefix("not ") {
            Some(tool) => (tool, true),
            None => (tool, false),
        };
        let exit = if negated {
            // bash reports a crash as 128 + the signal; `not` fails on it.
            "if [ $s -ne 0 ] && [ $s -lt 128 ]; then exit 0; else exit 1; fi"
        } else {
            "exit $s"
        };
        let wrapped = format!(
            "( {{ {tool} ; }} > {out} 2> {err}; s=$?; echo $s > {status}; cat {err} >&2; cat {out}; {exit} )",
            out = self.stdout.display(),
            err = self.stderr.display(),
            status = self.status.display(),
        );
        match rest {
            Some(rest) => format!("{wrapped} | {rest}"),
            None => wrapped,
        }
    }

    /// The recorded exit code (`signal` for a crash), stdout and stderr.
    fn read(&self) -> std::io::Result<(String, String, String)> {
        let read = |path: &Path| std::fs::read(path).map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        let status = read(&self.status)?;
        let code = match status.trim().parse::<i32>() {
            Ok(code) if code < 128 => code.to_string(),
            _ => "signal".to_string(),
        };
        let printed = (code, read(&self.stdout)?, read(&self.stderr)?);
        for path in [&self.stdout, &self.stderr, &self.status] {
            std::fs::remove_file(path)?;
        }
        Ok(printed)
    }
}

fn lit(path: &Path, source: String) -> datatest_stable::Result<()> {
    let root = repo_root();
    let absolute = std::fs::canonicalize(path)?;
    let relative = absolute.strip_prefix(&root)?.display().to_string();
    let commands = run_lines(&source);
    if commands.is_empty() {
        return Err(format!("{relative}: no RUN lines").into());
    }
    let filters = snapshot_filters(&source).map_err(|error| format!("{relative}: {error}"))?;
    let temp_dir = std::env::temp_dir().join("tessel-lit");
    std::fs::create_dir_all(&temp_dir)?;
    let temp = temp_dir.join(relative.replace('/', "_"));
    for (index, command) in commands.iter().enumerate() {
        let capture = Capture::new(&temp, index);
        let full = substitute(&capture.wrap(command), &relative, &temp);
        let output = bash(&full);
        if !output.status.success() {
            return Err(failure(&format!("{relative}: RUN line {index}"), &full, &output).into());
        }
        // Snapshot what the tool printed in the run FileCheck just checked
        // (stdout, then stderr): running it again for the snapshot would
        // record a different run (a cache the first run filled, say).
        let (code, stdout, stderr) = capture.read()?;
        let printed = format!(
            "exit: {code}\n--- stdout ---\n{}--- stderr ---\n{}",
            stdout.replace(&temp_dir.display().to_string(), "<tmp>"),
            stderr.replace(&root.display().to_string(), "<root>")
        );
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(root.join("test/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        // What tuning measures and picks depends on the machine's speed.
        settings.add_filter(r#""(default_s|best_s)": [-+.e0-9]+"#, "\"$1\": <seconds>");
        settings.add_filter(r#""candidates": [0-9]+"#, "\"candidates\": <count>");
        settings.add_filter(r#""best": \{[^}]*\}"#, "\"best\": <schedule>");
        settings.add_filter(r"tuned schedule from the cache: .*", "tuned schedule from the cache: <schedule>");
        // Cache keys hash the host CPU's name and features.
        settings.add_filter(r"[0-9a-f]{64}\.json", "<key>.json");
        for (regex, replacement) in &filters {
            settings.add_filter(regex, replacement.as_str());
        }
        settings.bind(|| insta::assert_snapshot!(snapshot_name(&relative, index), printed));
    }
    Ok(())
}

/// A tiny deterministic generator, so failures reproduce.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % bound.max(1)
    }
}

/// Truncations and byte-level mutations of a valid or invalid input must
/// never crash tessel-opt: exit 0 or 1 only.
fn mutations_never_crash(path: &Path, source: String) -> datatest_stable::Result<()> {
    let bytes = source.as_bytes();
    let mut random = Lcg(bytes.len() as u64 ^ 0x7e55e1);
    let junk: &[&[u8]] =
        &[b"}", b"{", b">", b"<", b"[", b"]", b"%", b"@", b"(", b",", b"-1", b"0", b"squeezed", b"#grid.block<", b"x"];
    let mut cases: Vec<Vec<u8>> = Vec::new();
    for k in 1..=6 {
        cases.push(bytes[..bytes.len() * k / 7].to_vec());
    }
    for _ in 0..10 {
        let mut mutated = bytes.to_vec();
        for _ in 0..1 + random.next(3) {
            let at = random.next(mutated.len());
            match random.next(3) {
                0 => {
                    let len = 1 + random.next(8);
                    mutated.drain(at..(at + len).min(mutated.len()));
                }
                1 => {
                    let piece = junk[random.next(junk.len())];
                    mutated.splice(at..at, piece.iter().copied());
                }
                _ => {
                    if at < mutated.len() {
                        mutated[at] = junk[random.next(junk.len())][0];
                    }
                }
            }
        }
        cases.push(mutated);
    }
    for (index, case) in cases.iter().enumerate() {
        let temp = std::env::temp_dir()
            .join(format!("tessel-mutation-{}-{index}.mlir", path.file_stem().unwrap().to_string_lossy()));
        std::fs::write(&temp, case)?;
        for extra in [&[][..], &["--grid-verify-specs"][..]] {
            let status = Command::new(tessel_opt()).arg(&temp).args(extra).output()?.status;
            if !matches!(status.code(), Some(0 | 1)) {
                return Err(format!("tessel-opt {} {extra:?} ended with {status}", temp.display()).into());
            }
        }
        std::fs::remove_file(&temp)?;
    }
    Ok(())
}

/// Every Tessel pass alone on every test input and example — IR from any stage of
/// either pipeline, valid or not — must never crash tessel-opt: exit 0, or
/// 1 with a diagnostic, as mlir-opt users expect of any pass on any input
/// (tessel-tile panicked on a contraction on buffers). One process runs
/// them all (`--each-pass`, each pass on its own parse); when it crashes,
/// each pass runs in a process of its own to name the one that did.
fn every_pass_never_crashes(path: &Path, _source: String) -> datatest_stable::Result<()> {
    let output = Command::new(tessel_opt()).arg(path).args(["--split-input-file", "--each-pass"]).output()?;
    if matches!(output.status.code(), Some(0 | 1)) {
        // Every pass ran: one report line per pass and chunk.
        let report = String::from_utf8_lossy(&output.stdout);
        let expected = tessel_passes::PASSES.len() + tessel_passes::CPP_PASSES.len();
        let lines = report.lines().filter(|line| line.ends_with(": ok") || line.ends_with(": failed")).count();
        if lines == 0 || lines % expected != 0 {
            return Err(
                format!("tessel-opt {} --each-pass reported {lines} pass runs:\n{report}", path.display()).into()
            );
        }
        return Ok(());
    }
    let rust_passes = tessel_passes::PASSES.iter().map(|pass| format!("--{}", pass.argument));
    // The C++ passes on `gpu.module`s nest there, as in the pipelines.
    let cpp_passes = tessel_passes::CPP_PASSES.iter().map(|pass| match pass.anchor {
        "builtin.module" => format!("--{}", pass.argument),
        anchor => format!("--pass-pipeline=builtin.module({anchor}({}))", pass.argument),
    });
    for pass in rust_passes.chain(cpp_passes) {
        let output = Command::new(tessel_opt()).arg(path).arg("--split-input-file").arg(&pass).output()?;
        if !matches!(output.status.code(), Some(0 | 1)) {
            return Err(format!(
                "tessel-opt {} --split-input-file {pass} ended with {}:\n{}",
                path.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).chars().take(2000).collect::<String>()
            )
            .into());
        }
    }
    Err(format!(
        "tessel-opt {} --split-input-file --each-pass ended with {}, yet no pass alone crashes:\n{}",
        path.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr).chars().take(2000).collect::<String>()
    )
    .into())
}

/// The end-to-end RUN lines that run compiled code (not the interpreter,
/// not a device of their own), on `device`: same CHECK lines, so the GPU
/// kernels must print exactly what the CPU's do. `Ok(false)`: the device
/// is not there (`skip` recognizes its error).
fn on_device(path: &Path, source: &str, device: &str, skip: &[&str]) -> datatest_stable::Result<bool> {
    let root = repo_root();
    let relative = std::fs::canonicalize(path)?.strip_prefix(&root)?.display().to_string();
    let temp = std::env::temp_dir().join(format!("tessel-lit-{device}")).join(relative.replace('/', "_"));
    std::fs::create_dir_all(temp.parent().unwrap())?;
    let runs = run_lines(source).into_iter().filter(|command| {
        command.contains("tessel run ") && !command.contains("--interpret") && !command.contains("--device")
    });
    for command in runs {
        let on_device = command.replace("tessel run ", &format!("tessel run --device {device} "));
        let full = substitute(&on_device, &relative, &temp);
        let output = bash(&full);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if skip.iter().any(|reason| stderr.contains(reason)) {
            return Ok(false);
        }
        if !output.status.success() {
            return Err(failure(&format!("{relative} on {device}"), &full, &output).into());
        }
    }
    Ok(true)
}

fn emulated_gpu(path: &Path, source: String) -> datatest_stable::Result<()> {
    on_device(path, &source, "rocm-emulated", &[]).map(|_| ())
}

/// The same on a real AMD GPU through HIP; skipped, with a message, where
/// there is none (or the `hip` feature is off).
fn hip_gpu(path: &Path, source: String) -> datatest_stable::Result<()> {
    let reasons = ["no AMD GPU available", "built without the `hip` feature"];
    if !on_device(path, &source, "hip", &reasons)? {
        eprintln!("hip_gpu::{}: skipped: no AMD GPU here (or built without --features hip)", path.display());
    }
    Ok(())
}

/// What the HIP launcher would run for test/gpu/tessel-to-rocm.mlir (the
/// launcher itself needs a GPU; its inputs are checked here).
fn host_program(path: &Path, _source: String) -> datatest_stable::Result<()> {
    use tessel_runtime::hip::{HostStep, HostValue, Launch, LaunchArg};
    tessel_lowering::register_everything();
    let context = tessel_dialects::create_context();
    let text = std::fs::read_to_string(path)?;
    let options = tessel_lowering::rocm::RocmOptions::default();
    let launches_of = |text: &str, entry: &str| -> datatest_stable::Result<_> {
        let mut module = melior::ir::Module::parse(&context, text).ok_or("the test file parses")?;
        let (object, program) = tessel_lowering::rocm::compile_for_launch(&context, &mut module, &options, entry)
            .map_err(|error| error.to_string())?;
        if !object.starts_with(b"\x7fELF") {
            return Err("the code object is not an ELF file".into());
        }
        Ok(program)
    };
    let constant = |sizes: [i64; 3]| sizes.map(HostValue::Constant);
    let launches = |entry: &str| launches_of(&text, entry);
    let matmul = launches("matmul")?;
    let expected = Launch {
        kernel: "matmul_kernel".into(),
        grid: constant([8, 1, 1]),
        workgroup: [256, 1, 1],
        // Outlining orders a kernel's arguments by first use: the buffer
        // views tessel-buffer-resources makes at the kernel's start, in
        // the function's argument order.
        args: vec![LaunchArg::Array(0), LaunchArg::Array(1), LaunchArg::Array(2)],
    };
    if matmul.launches() != [&expected] || !matmul.scratch().is_empty() {
        return Err(format!("@matmul's host program: {matmul:?}").into());
    }
    let scale = launches("scale")?;
    let expected = Launch {
        kernel: "scale_kernel".into(),
        grid: constant([8, 1, 1]),
        workgroup: [256, 1, 1],
        args: vec![LaunchArg::Array(0), LaunchArg::Array(1)],
    };
    if scale.launches() != [&expected] {
        return Err(format!("@scale's host program: {scale:?}").into());
    }
    // An output revisited along an outer axis: the ordered axis is a host
    // loop, unrolled into three launches of the two programs, each passing
    // its step.
    let outer_text = std::fs::read_to_string(repo_root().join("test/e2e/outer-axis-revisits.mlir"))?;
    let outer = launches_of(&outer_text, "main")?;
    let steps: Vec<Vec<LaunchArg>> = outer.launches().iter().map(|launch| launch.args.clone()).collect();
    let expected_steps: Vec<Vec<LaunchArg>> = (0..3)
        .map(|k| vec![LaunchArg::Array(0), LaunchArg::Array(1), LaunchArg::Index(HostValue::Constant(k))])
        .collect();
    if steps != expected_steps || outer.launches().iter().any(|launch| launch.grid != constant([2, 1, 1])) {
        return Err(format!("@main's host program (outer-axis-revisits.mlir): {outer:?}").into());
    }
    // A 256x256 f32 dot read twice (256 KiB, over LDS; not recomputed):
    // global scratch, a slice per program (4 of them), passed to the
    // kernel.
    let large_text = std::fs::read_to_string(repo_root().join("test/gpu/large-intermediate.mlir"))?;
    let large = launches_of(&large_text, "centered")?;
    let args = large.launches().first().map(|launch| launch.args.clone()).unwrap_or_default();
    let arrays = (0..3).all(|index| args.contains(&LaunchArg::Array(index)));
    if large.scratch() != [Some(262144 * 4)] || args.len() != 4 || !arrays || !args.contains(&LaunchArg::Scratch(0)) {
        return Err(format!("@centered's host program (large-intermediate.mlir): {large:?}").into());
    }
    // matmul_bias_relu's 256x256 partial sums accumulate in its output
    // block (k merged, the epilogue applied in place): no scratch.
    let fused_text = std::fs::read_to_string(repo_root().join("examples/matmul_bias_relu_2048.mlir"))?;
    let fused = launches_of(&fused_text, "matmul_bias_relu_2048")?;
    let args = fused.launches().first().map(|launch| launch.args.clone()).unwrap_or_default();
    let arrays = (0..4).all(|index| args.contains(&LaunchArg::Array(index)));
    if !fused.scratch().is_empty() || args.len() != 4 || !arrays {
        return Err(format!("@matmul_bias_relu_2048's host program: {fused:?}").into());
    }
    // Grids sized by values (dynamic-grids.mlir): the count is read from
    // argument #0 on the device, clamped at 0 and multiplied into the
    // launch's workgroups; an ordered axis of that length stays a loop.
    let dynamic_text = std::fs::read_to_string(repo_root().join("test/e2e/dynamic-grids.mlir"))?;
    let rows = launches_of(&dynamic_text, "rows")?;
    let reads_count = matches!(rows.steps.first(), Some(HostStep::Load { array: 0, bytes: 4, .. }));
    let launch = rows.launches().first().map(|launch| launch.grid);
    if !reads_count || !matches!(launch, Some([HostValue::Register(_), HostValue::Constant(1), HostValue::Constant(1)]))
    {
        return Err(format!("@rows's host program (dynamic-grids.mlir): {rows:?}").into());
    }
    // An inner ordered axis of dynamic length loops in the kernel, which
    // gets the length; an outer one is a host loop around the launches.
    let sums = launches_of(&dynamic_text, "sums")?;
    let passed = sums
        .launches()
        .first()
        .is_some_and(|launch| launch.args.iter().any(|arg| matches!(arg, LaunchArg::Index(HostValue::Register(_)))));
    let outer = launches_of(&dynamic_text, "outer")?;
    let looped = outer.steps.iter().any(|step| {
        matches!(step, HostStep::Loop { upper: HostValue::Register(_), body, .. }
            if matches!(body.as_slice(), [HostStep::Launch(_)]))
    });
    if !passed || !looped {
        return Err(format!("dynamic-grids.mlir's host programs: {sums:?}, {outer:?}").into());
    }
    Ok(())
}

datatest_stable::harness! {
    { test = lit, root = "../test", pattern = r"\.mlir$" },
    { test = emulated_gpu, root = "../test/e2e", pattern = r"\.mlir$" },
    { test = hip_gpu, root = "../test/e2e", pattern = r"\.mlir$" },
    { test = host_program, root = "../test/gpu", pattern = r"tessel-to-rocm\.mlir$" },
    { test = mutations_never_crash, root = "../test", pattern = r"\.mlir$" },
    { test = every_pass_never_crashes, root = "../test", pattern = r"\.mlir$" },
    { test = every_pass_never_crashes, root = "../examples", pattern = r"\.mlir$" },
    { test = differential::differential, root = "../test/differential", pattern = r"\.toml$" },
    { test = accuracy::accuracy, root = "../test/accuracy", pattern = r"\.toml$" },
    { test = interpreter_coverage::interpreter_covers_kernels, root = "../test", pattern = r"\.mlir$" },
    { test = interpreter_coverage::interpreter_covers_kernels, root = "../examples", pattern = r"\.mlir$" },
    { test = generated_docs::generated_docs, root = "../docs/reference", pattern = r"\.md$" },
}
