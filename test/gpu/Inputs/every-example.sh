#!/usr/bin/env bash
# Compiles every example for the three chips, with and without double
# buffering (and on CDNA with matrix cores off: f32 contractions on FMA
# register tiles), and prints per code object its kernels, register
# spills and private (scratch) segment bytes. Usage: every-example.sh
# TESSEL READELF TMP
set -euo pipefail
tessel=$1 readelf=$2 object=$3.example.hsaco
# report LABEL EXAMPLE FLAGS...: compiles and prints one line.
report() {
  local label=$1 example=$2
  shift 2
  "$tessel" compile "$example" --target rocm "$@" -o "$object"
  notes=$("$readelf" --notes "$object")
  kernels=$(grep -c '^    .name:' <<<"$notes")
  spills=$(grep -E '_spill_count:' <<<"$notes" | awk '{ total += $2 } END { print total + 0 }')
  private=$(grep -E '\.private_segment_fixed_size:' <<<"$notes" | awk '{ total += $2 } END { print total + 0 }')
  echo "$label $(basename "$example" .mlir): kernels=$kernels spills=$spills private=$private"
}
for chip in gfx90a gfx942 gfx1100; do
  for stages in 1 2; do
    for example in examples/*.mlir; do
      report "$chip stages=$stages" "$example" --chip "$chip" --num-stages "$stages"
      if [ "$chip" != gfx1100 ]; then
        report "$chip stages=$stages matrix-cores=off" "$example" --chip "$chip" --num-stages "$stages" --matrix-cores off
      fi
    done
  done
done
