#!/usr/bin/env bash
# Compiles every example for the three chips, with and without double
# buffering, and prints per code object its kernels, register spills and
# private (scratch) segment bytes. Usage: every-example.sh TESSEL READELF TMP
set -euo pipefail
tessel=$1 readelf=$2 object=$3.example.hsaco
for chip in gfx90a gfx942 gfx1100; do
  for stages in 1 2; do
    for example in examples/*.mlir; do
      "$tessel" compile "$example" --target rocm --chip "$chip" --num-stages "$stages" -o "$object"
      notes=$("$readelf" --notes "$object")
      kernels=$(grep -c '^    .name:' <<<"$notes")
      spills=$(grep -E '_spill_count:' <<<"$notes" | awk '{ total += $2 } END { print total + 0 }')
      private=$(grep -E '\.private_segment_fixed_size:' <<<"$notes" | awk '{ total += $2 } END { print total + 0 }')
      echo "$chip stages=$stages $(basename "$example" .mlir): kernels=$kernels spills=$spills private=$private"
    done
  done
done
