// The lit harness snapshots the very run FileCheck checked: a tool whose
// output changes from run to run (here a counter kept in a file; in
// tune.mlir a cache the first run fills) must show the same output in
// both. Were the tool run again for its snapshot, run 1's snapshot would
// say "run 2" (or FileCheck would see it) and this test would fail.
// RUN: rm -f %t.count
// RUN: bash -c 'echo x >> %t.count; echo "run $(wc -l < %t.count)"; echo "on stderr" >&2' | FileCheck %s --check-prefix=ONCE
// RUN: not bash -c 'echo x >> %t.count; echo "run $(wc -l < %t.count)"; exit 3' | FileCheck %s --check-prefix=TWICE
// ONCE: {{^run 1$}}
// TWICE: {{^run 2$}}
