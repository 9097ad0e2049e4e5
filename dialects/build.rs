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
    let out = cmake::Config::new(&root)
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
