#!/usr/bin/env bash
# Installs the Debian toolchain Tessel builds with (LLVM/MLIR 22, clang and
# lld 22, CMake, Ninja, the ROCm device libraries, Python's venv) and tests
# with (qemu-user and the arm64 C library, to run AArch64 objects).
# Idempotent: does nothing when everything is present; uses sudo when not root.
set -euo pipefail

packages=(
  llvm-22-dev libmlir-22-dev mlir-22-tools clang-22 lld-22 libpolly-22-dev
  libomp-22-dev libzstd-dev libz3-dev libxml2-dev cmake ninja-build rocm-device-libs
  libamdhip64-dev python3-venv
  qemu-user libc6-dev-arm64-cross libgcc-12-dev-arm64-cross
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} > 0)); then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null; then
  echo "setup: cargo not found; install a Rust toolchain (1.85 or newer) with rustup" >&2
  exit 1
fi
# CI checks formatting and lints before the tests.
for component in rustfmt clippy; do
  subcommand=${component/rustfmt/fmt}
  if ! cargo "$subcommand" --version >/dev/null 2>&1; then
    echo "setup: adding the Rust component $component" >&2
    rustup component add "$component"
  fi
done
