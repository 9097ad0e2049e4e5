//! The pages of `docs/reference/` whose source is the Rust code: passes
//! (the pass registry and each pass's module docs), pipelines (each
//! target's named stages), knobs (the knob table) and the dialects' op
//! reference (`mlir-tblgen -gen-dialect-doc` of the ODS). Each must equal
//! what the code generates now; `TESSEL_UPDATE_DOCS=1` rewrites them
//! (`scripts/generate-docs.sh`). `jax-primitives.md` is the Python
//! registry's, checked by `python/tests/test_registry.py`.

use std::path::Path;
use tessel_dialects::knobs;

const UPDATE: &str = "TESSEL_UPDATE_DOCS";

/// Makes a page's text.
type Generator = fn() -> Result<String, String>;

/// The pages this module generates, by file name.
const PAGES: [(&str, Generator); 5] = [
    ("passes.md", passes),
    ("pipelines.md", pipelines),
    ("knobs.md", knobs_page),
    ("dialect-grid.md", || dialect("grid", "GridOps.td")),
    ("dialect-block.md", || dialect("block", "BlockOps.td")),
];

/// Pages generated elsewhere.
const ELSEWHERE: [&str; 1] = ["jax-primitives.md"];

fn banner(source: &str) -> String {
    format!(
        "<!-- Generated from {source} by driver/tests/generated_docs.rs; do not edit: \
         scripts/generate-docs.sh rewrites it. -->\n\n"
    )
}

pub fn generated_docs(path: &Path, text: String) -> datatest_stable::Result<()> {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
    if ELSEWHERE.contains(&name) {
        return Ok(());
    }
    let Some((_, generate)) = PAGES.iter().find(|(page, _)| *page == name) else {
        return Err(format!(
            "{}: no generator makes this page (docs/reference holds generated pages only)",
            path.display()
        )
        .into());
    };
    // Every page must exist, not only those present.
    let directory = path.parent().ok_or("a page has a directory")?;
    if name == PAGES[0].0 {
        let missing: Vec<_> =
            PAGES.iter().map(|(page, _)| *page).filter(|page| !directory.join(page).is_file()).collect();
        if !missing.is_empty() && std::env::var_os(UPDATE).is_none() {
            return Err(format!("docs/reference lacks {missing:?}: run scripts/generate-docs.sh").into());
        }
        if std::env::var_os(UPDATE).is_some() {
            for (page, generate) in PAGES.iter().filter(|(page, _)| missing.contains(page)) {
                std::fs::write(directory.join(page), generate()?)?;
            }
        }
    }
    let expected = generate()?;
    if expected == text {
        return Ok(());
    }
    if std::env::var_os(UPDATE).is_some() {
        std::fs::write(path, expected)?;
        return Ok(());
    }
    Err(format!("{} is out of date with the code: run scripts/generate-docs.sh and review the diff", path.display())
        .into())
}

fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The leading `//!` (Rust) or `//` (C++) comment of a source file, as
/// markdown (C++ banners of `//===` dropped).
fn module_docs(relative: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(repo_root().join(relative)).map_err(|error| format!("{relative}: {error}"))?;
    let mut lines = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("//!").or_else(|| line.strip_prefix("//")) else { break };
        if rest.starts_with("===") {
            continue;
        }
        lines.push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
    }
    while lines.last().is_some_and(|line| line.is_empty()) {
        lines.pop();
    }
    while lines.first().is_some_and(|line| line.is_empty()) {
        lines.remove(0);
    }
    Ok(lines.join("\n"))
}

/// The group directory of a Rust pass (`passes/src/<group>/<file>.rs`).
fn group_of(argument: &str) -> Result<String, String> {
    let file = format!("{}.rs", argument.replace('-', "_"));
    let source = repo_root().join("passes/src");
    let entries = std::fs::read_dir(&source).map_err(|error| error.to_string())?;
    entries
        .filter_map(|entry| entry.ok())
        .find(|entry| entry.path().join(&file).is_file())
        .and_then(|entry| entry.file_name().to_str().map(str::to_string))
        .ok_or_else(|| format!("no passes/src/<group>/{file}"))
}

fn passes() -> Result<String, String> {
    let mut out = banner("tessel_passes::PASSES, CPP_PASSES and each pass's own documentation");
    out += "# Passes\n\nEvery Tessel pass, in pipeline order: its argument (`tessel-opt --ARGUMENT`, or in \
            `--pass-pipeline` strings), what it does, where it lives and its lit test, then the pass's own \
            documentation (its source file's module comment). The pipelines that use them are in \
            [pipelines.md](pipelines.md).\n\n";
    for pass in tessel_passes::PASSES {
        let group = group_of(pass.argument)?;
        let source = format!("passes/src/{group}/{}.rs", pass.argument.replace('-', "_"));
        out += &format!(
            "## `{}`\n\n{} — group `{group}`, on `{}`; [`{source}`](../../{source}), lit test \
             [`test/{group}/{}.mlir`](../../test/{group}/{}.mlir).\n\n{}\n\n",
            pass.argument,
            pass.description,
            pass.anchor,
            pass.argument,
            pass.argument,
            module_docs(&source)?
        );
    }
    for pass in tessel_passes::CPP_PASSES {
        out += &format!(
            "## `{}`\n\nWritten in C++ — group `{}`, on `{}`; [`{}`](../../{}), lit test \
             [`test/{}/{}.mlir`](../../test/{}/{}.mlir).\n\n{}\n\n",
            pass.argument,
            pass.group,
            pass.anchor,
            pass.source,
            pass.source,
            pass.group,
            pass.argument,
            pass.group,
            pass.argument,
            module_docs(pass.source)?
        );
    }
    if !tessel_passes::ALIASES.is_empty() {
        out += "## Deprecated names\n\n";
        for alias in tessel_passes::ALIASES {
            out += &format!("- `{}`: {} (now `{}`)\n", alias.argument, alias.description, alias.of.argument);
        }
        out += "\n";
    }
    Ok(out.trim_end().to_string() + "\n")
}

/// `text` split at its commas outside parentheses and braces.
fn top_level(text: &str) -> Vec<String> {
    let (mut parts, mut current, mut depth) = (Vec::new(), String::new(), 0i32);
    for ch in text.chars() {
        match ch {
            '(' | '{' => depth += 1,
            ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(ch);
    }
    parts.push(current);
    parts
}

/// The passes of one pipeline element, one each: a comma-separated list
/// (a shared constant), or `anchor(a,b)`, become `a`, `b` and
/// `anchor(a)`, `anchor(b)`.
fn single_passes(element: &str) -> Vec<String> {
    top_level(element)
        .into_iter()
        .flat_map(|pass| match (pass.find('('), pass.find('{')) {
            (Some(open), brace) if brace.is_none_or(|brace| open < brace) && pass.ends_with(')') => {
                let (anchor, inner) = (&pass[..open], &pass[open + 1..pass.len() - 1]);
                top_level(inner).into_iter().map(|inner| format!("{anchor}({inner})")).collect::<Vec<_>>()
            }
            _ => vec![pass],
        })
        .collect()
}

/// One pipeline's stages as a markdown table: each pass with the
/// registry's description for Tessel's own.
fn stage_table(stages: &[(&str, Vec<String>)]) -> String {
    let mut out = String::from("| stage | pass | what it does |\n| --- | --- | --- |\n");
    for (stage, elements) in stages {
        let passes: Vec<String> = elements.iter().flat_map(|element| single_passes(element)).collect();
        for (index, pass) in passes.iter().enumerate() {
            // `func.func(x{..})` and `x{..}` name the pass x.
            let inner = pass.rsplit('(').next().unwrap_or(pass).trim_end_matches(')');
            let argument = inner.split('{').next().unwrap_or(inner);
            let described = tessel_passes::PASSES
                .iter()
                .find(|definition| definition.argument == argument)
                .map(|definition| format!("[Tessel](passes.md#{argument}): {}", definition.description))
                .or_else(|| {
                    tessel_passes::CPP_PASSES
                        .iter()
                        .any(|cpp| cpp.argument == argument)
                        .then(|| format!("[Tessel, C++](passes.md#{argument})"))
                })
                .unwrap_or_else(|| "upstream MLIR".to_string());
            out += &format!(
                "| {} | `{}` | {} |\n",
                if index == 0 { format!("`{stage}`") } else { String::new() },
                pass.replace('|', "\\|"),
                described
            );
        }
    }
    out
}

fn pipelines() -> Result<String, String> {
    use tessel_lowering::{cpu, rocm};
    let owned = |stages: &[(&'static str, &'static [&'static str])]| -> Vec<(&'static str, Vec<String>)> {
        stages.iter().map(|(name, passes)| (*name, passes.iter().map(|p| p.to_string()).collect())).collect()
    };
    let mut out = banner("tessel_lowering::cpu::stages, rocm::stages and rocm::emulation_stages");
    out += "# Pipelines\n\nEach target's whole pipeline is one function of named stages in `lowering/`; stages \
            are shared by name. `tessel-opt --pass-pipeline='builtin.module(tessel-to-cpu)'` (or \
            `tessel-to-rocm`) runs a pipeline up to the LLVM (ROCDL) dialect. The CPU pipeline's \
            comments in `lowering/src/cpu.rs` say why each pass stands where it does.\n\n";
    out += "## CPU (`tessel-to-cpu`, `lowering::cpu::stages`)\n\n";
    out += &stage_table(&owned(&cpu::stages()));
    let options = rocm::RocmOptions::default();
    out += &format!(
        "\n## AMD GPU (`tessel-to-rocm`, `lowering::rocm::stages`)\n\nFor the default chip ({}) and code \
         object version; `--chip` and `--code-object` change the options of `rocdl-attach-target` and \
         `convert-gpu-to-rocdl`, `--emit` the format of `gpu-module-to-binary`. The toolkit is the folder \
         Tessel links from Debian's ROCm device libraries and `ld.lld`.\n\n",
        options.chip.name()
    );
    out += &stage_table(&rocm::stages(&options, "bin", Path::new("<toolkit>")));
    out += "\n## Emulated AMD GPU (`lowering::rocm::emulation_stages`)\n\n`tessel run --device rocm-emulated`: \
            the GPU kernel stages, then the launches as CPU loops (every access bounds-checked) and the CPU \
            pipeline's last stages.\n\n";
    out += &stage_table(&owned(&rocm::emulation_stages()));
    Ok(out)
}

fn knobs_page() -> Result<String, String> {
    let mut out = banner("tessel_dialects::knobs::ALL");
    out += "# Schedule knobs\n\nA knob is a module attribute a pass reads; `tessel run`/`compile` set it with its \
            flag, `tessel.jax.CompilerParams` and `tessel.compile` with its name, the tuner searches it. \
            Knobs change how a kernel runs, never what it computes (`group` may reassociate float block \
            reductions, whose order is unspecified).\n\n| flag | attribute | values | default | target | \
            what it sets |\n| --- | --- | --- | --- | --- | --- |\n";
    for knob in knobs::ALL {
        let up_to =
            |min: i64, max: i64| if max == i64::MAX { format!("{min} or more") } else { format!("{min} to {max}") };
        let values = match knob.kind {
            knobs::Kind::Integer { min, max } => up_to(min, max),
            knobs::Kind::OneOf(values) => values.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
            knobs::Kind::Flag => "0, 1".to_string(),
            knobs::Kind::Choice(names) | knobs::Kind::Name(names) => names.join(", "),
            knobs::Kind::Tile { max } => format!("ROWSxCOLUMNS, each {}", up_to(1, max)),
            knobs::Kind::Unit => "set or not".to_string(),
        };
        let flag = match (knob.flag, knob.cli) {
            (None, _) | (_, knobs::Cli::Derived) => "(derived)".to_string(),
            (Some(flag), knobs::Cli::Switch) => format!("`--{flag}`"),
            (Some(flag), knobs::Cli::OnOff) => format!("`--{flag} on\\|off`"),
            (Some(flag), _) => format!("`--{flag} {}`", knob.value_name),
        };
        let target = match knob.target {
            knobs::Target::Cpu => "CPU",
            knobs::Target::Gpu => "GPU",
            knobs::Target::Both => "both",
        };
        let flag = flag.replace('|', "\\|");
        out += &format!(
            "| {flag} | `{}` | {values} | {} | {target} | {} |\n",
            knob.attribute,
            knob.default,
            knob.help.replace('|', "\\|").replace('\n', " ")
        );
    }
    Ok(out)
}

/// `mlir-tblgen -gen-dialect-doc` of the dialect's ops file.
fn dialect(name: &str, file: &str) -> Result<String, String> {
    let td = repo_root().join("dialects/td");
    let output = std::process::Command::new(format!("{}/mlir-tblgen", crate::LLVM_BIN))
        .args(["-gen-dialect-doc", &format!("-dialect={name}"), "-I", "/usr/lib/llvm-22/include", "-I"])
        .arg(&td)
        .arg(td.join(file))
        .output()
        .map_err(|error| format!("mlir-tblgen: {error}"))?;
    if !output.status.success() {
        return Err(format!("mlir-tblgen failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    let text = String::from_utf8_lossy(&output.stdout)
        .replace("<!-- Autogenerated by mlir-tblgen; don't manually edit -->\n", "");
    Ok(banner(&format!("dialects/td/{file} with mlir-tblgen -gen-dialect-doc")) + text.trim_start())
}
