"""Runs JAX's own Pallas test suite, unmodified, on the CPU: once as JAX
runs it (interpret mode, the baseline) and once with every pallas_call,
interpret=True ones included, compiled by Tessel. Writes a report of how
many of the tests interpret mode passes also pass through Tessel, per
file, and why the others fail.

    .venv/bin/python python/conformance/run.py --jax-repo PATH [--modes interpret,tessel]

The tests come from JAX's repository at the installed jax's tag
(`jax-v<version>`): `--jax-repo` names a clone or a bare git directory
holding that tag; without it the tag is cloned from GitHub.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import jax

FILES = [
    "pallas_test", "ops_test", "indexing_test", "pallas_vmap_test", "gpu_ops_test",
    "gpu_attention_test", "gpu_paged_attention_test", "tpu_pallas_test", "tpu_paged_attention_kernel_test",
    "pallas_shape_poly_test",
]
# TPU files whose tests skip on the CPU: their interpret switch
# (`PallasTest.INTERPRET`, passed as `interpret=`) is turned on and their
# TPU-device guards (`jtu.test_device_matches(["tpu"])`,
# `is_device_tpu_at_least`) are lifted, answering as a single-core TPU v6e;
# interpret mode then runs them in JAX's TPU interpreter
# (`force_tpu_interpret_mode`). The conftest does both; REPORT.md marks
# these files.
SWITCHED = [
    "tpu_splash_attention_kernel_test", "tpu_gmm_test", "tpu_pallas_random_test", "tpu_ragged_paged_attention_test",
    "tpu_pallas_async_test", "tpu_pallas_pipeline_test", "tpu_pallas_state_test", "tpu_ops_test",
]
HERE = Path(__file__).resolve().parent
# Modules of JAX's repository the tests import and its wheel lacks; the
# conftest loads them from the extracted tree.
HELPERS = ["jax/_src/pallas/pallas_test_util.py", "jax/_src/hypothesis_test_util.py"]


def extract(repo: str | None, tag: str, work: Path) -> Path:
    """`tests/pallas` of JAX at `tag`, under `work`."""
    target = work / "jax"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    if repo is None:
        subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", tag,
                        "https://github.com/jax-ml/jax", str(work / "clone")], check=True)
        repo = str(work / "clone")
    git_dir = ["--git-dir", repo] if (Path(repo) / "HEAD").exists() and not (Path(repo) / ".git").exists() \
        else ["-C", repo]
    # The tests import test helpers the jax wheel does not ship.
    archive = subprocess.run(["git", *git_dir, "archive", tag, "tests/pallas", *HELPERS], check=True,
                             capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    tests = target / "tests" / "pallas"
    shutil.copy(HERE / "conftest.py", tests / "conftest.py")
    return tests


def run_mode(mode: str, tests: Path, files: list[str], work: Path, timeout: int) -> dict:
    """{test id: (outcome, message)} of one mode; a file whose process dies
    counts its tests as crashed."""
    results = {}
    for name in files:
        xml = work / f"{mode}-{name}.xml"
        log = work / f"{mode}-{name}.log"
        xml.unlink(missing_ok=True)
        env = dict(os.environ, TESSEL_SUITE_MODE=mode, JAX_PLATFORMS="cpu",
                   TESSEL_SUITE_INTERPRET="1" if name in SWITCHED else "0",
                   TESSEL_SUITE_LIFT_GUARDS="1" if name in SWITCHED else "0")
        started = time.monotonic()
        with open(log, "w") as out:
            process = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}",
                 f"--timeout={timeout}", f"{name}.py"],
                cwd=tests, env=env, stdout=out, stderr=subprocess.STDOUT)
        seconds = time.monotonic() - started
        (work / f"{mode}-{name}.seconds").write_text(f"{seconds:.1f}\n")
        found = parse(xml) if xml.exists() else {}
        if process.returncode not in (0, 1) and not found:
            found = {f"{name}::<all>": ("failed", f"pytest exited with {process.returncode}")}
            # Recorded like a result so later reports see the crash.
            xml.write_text(f'<testsuite><testcase classname="{name}" name="&lt;all&gt;">'
                           f'<failure message="pytest exited with {process.returncode}"/></testcase></testsuite>')
        print(f"{mode:>9} {name:<26} {sum(o == 'passed' for o, _ in found.values()):>5} passed "
              f"of {len(found):>5} in {seconds:6.0f} s", flush=True)
        results.update(found)
    return results


def parse(xml: Path) -> dict:
    results = {}
    for case in ElementTree.parse(xml).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failed", (child.get("message") or child.text or "").strip()
            elif child.tag == "skipped":
                outcome, message = "skipped", child.get("message") or ""
        results[name] = (outcome, message)
    return results


def reason(message: str) -> str:
    """A failure message reduced to its cause, for grouping."""
    first = message.splitlines()[0] if message else "(no message)"
    for pattern, label in [
        (r"does not support the JAX primitive '([^']+)'", "unsupported primitive '{}'"),
        (r"Tessel cannot translate (.+)", "cannot translate: {}"),
        (r"Tessel does not support (.+)", "unsupported: {}"),
        (r"\d+:\d+: error: (.+)", "compile error: {}"),
    ]:
        found = re.search(pattern, first)
        if found:
            return label.format(re.sub(r"\d+", "N", found.group(1))[:90])
    kind = first.split(":")[0]
    return re.sub(r"\d+", "N", first[:90]) if kind in ("AssertionError", "Failed") else kind[:90]


def report(results: dict, files: list[str], path: Path, work: Path) -> None:
    interpret, tessel = results.get("interpret", {}), results.get("tessel", {})

    def seconds(mode: str, name: str) -> str:
        recorded = work / f"{mode}-{name}.seconds"
        return f"{float(recorded.read_text()):.0f} s" if recorded.exists() else "-"

    lines = [
        "# JAX's Pallas tests through Tessel",
        "",
        f"jax {jax.__version__}, tests from `tests/pallas/` at tag `jax-v{jax.__version__}`, run by",
        "`python/conformance/run.py` on the CPU. *Interpret* is JAX's own CPU interpreter;",
        "*Tessel* runs the same unmodified tests with every `pallas_call` (`interpret=True`",
        "included) compiled by Tessel. The ratio counts the tests interpret mode passes.",
        "",
        "Files marked * skip every test on the CPU: the conftest turns their interpret switch",
        "(`PallasTest.INTERPRET`) on and lifts their TPU-device guards (answering as a",
        "single-core TPU v6e), in both modes; interpret mode runs them in JAX's TPU",
        "interpreter (`force_tpu_interpret_mode`). The tests and expected values are JAX's.",
        "",
        "| file | interpret passes | Tessel passes (of those) | ratio | interpret time | Tessel time |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    total_base = total_both = 0
    for name in files:
        base = {t for t, (o, _) in interpret.items() if o == "passed" and t.split(".")[0] == name}
        both = {t for t in base if tessel.get(t, ("missing",))[0] == "passed"}
        total_base, total_both = total_base + len(base), total_both + len(both)
        ratio = f"{100 * len(both) / len(base):.1f}%" if base else "-"
        label = f"{name}*" if name in SWITCHED else name
        lines.append(f"| {label} | {len(base)} | {len(both)} | {ratio} | {seconds('interpret', name)} | "
                     f"{seconds('tessel', name)} |")
    ratio = f"{100 * total_both / total_base:.1f}%" if total_base else "-"
    lines.append(f"| **all** | **{total_base}** | **{total_both}** | **{ratio}** | | |")
    causes = collections.Counter(
        reason(tessel[t][1]) if t in tessel else "not run"
        for t, (o, _) in interpret.items() if o == "passed" and tessel.get(t, ("missing",))[0] != "passed")
    lines += ["", "Why the others fail under Tessel (tests per cause):", "", "| tests | cause |", "| ---: | --- |"]
    lines += [f"| {count} | {cause.replace('|', '/')} |" for cause, count in causes.most_common(40)]
    path.write_text("\n".join(lines) + "\n")
    print(f"\n{total_both} of {total_base} interpret-passing tests pass through Tessel ({ratio}); "
          f"report: {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jax-repo", help="a clone or bare git directory of JAX holding the tag")
    parser.add_argument("--work", default="/tmp/tessel-jax-suite", help="scratch directory")
    parser.add_argument("--modes", default="interpret,tessel")
    parser.add_argument("--files", default=",".join(FILES + SWITCHED))
    parser.add_argument("--timeout", type=int, default=900, help="seconds per test")
    parser.add_argument("--report", default=str(HERE / "REPORT.md"))
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "absl-py", "hypothesis", "pytest-timeout"],
                   check=True)
    files = args.files.split(",")
    tests = extract(args.jax_repo, f"jax-v{jax.__version__}", work)
    for mode in args.modes.split(","):
        run_mode(mode, tests, files, work, args.timeout)
    # A mode not run this time reports its last run's results (the
    # interpreter baseline changes only with jax).
    results = {mode: {} for mode in ("interpret", "tessel")}
    for mode, found in results.items():
        for name in files:
            xml = work / f"{mode}-{name}.xml"
            if xml.exists():
                found.update(parse(xml))
    if all(results.values()):
        report(results, files, Path(args.report), work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
