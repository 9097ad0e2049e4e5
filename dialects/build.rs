//! Builds the C++ half of the dialects (ODS -> C++ -> static library + the
//! mlir-opt plugin) with CMake, and tells rustc how to link it.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    for watched in ["CMakeLists.txt", "dialects/td", "dialects/cpp", "dialects/include"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }

    let prefix = std::env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into());
    // One CMake build per profile directory (`target/debug`, ...), not per
    // build-script run: `cargo clippy`, `cargo test` and builds with other
    // feature sets (the `hip` feature, the Python module) each run this
    // script in an OUT_DIR of their own, and each rebuilt the C++ from
    // scratch (a minute apiece); Ninja now finds it up to date. Cargo's
    // lock on the target directory keeps two builds from sharing it at once.
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let shared = out_dir.ancestors().nth(3).map(|profile| profile.join("tessel-dialects-cmake")).unwrap_or(out_dir);
    let out = cmake::Config::new(&root)
        .out_dir(&shared)
        .generator("Ninja")
        .profile("Release")
        .define("MLIR_DIR", format!("{prefix}/lib/cmake/mlir"))
        .build_target("all")
        .build();
    let lib_dir = out.join("build");

    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=static=TesselDialects");
    let plugin = lib_dir.join("libTesselPlugin.so");
    // For tests and tools that hand the plugin to upstream mlir-opt.
    println!("cargo:rustc-env=TESSEL_PLUGIN_PATH={}", plugin.display());
    println!("cargo:plugin={}", plugin.display());
    // melior's `dialect!` reads the same .td files to generate typed builders.
    println!("cargo:rustc-env=TESSEL_TD_DIR={}", manifest.join("td").display());
}
