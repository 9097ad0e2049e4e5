//! Passes the dialect plugin's path (from tessel-dialects' build) to the
//! tests, which hand it to upstream mlir-opt.
fn main() {
    if let Ok(plugin) = std::env::var("DEP_TESSEL_DIALECTS_PLUGIN") {
        println!("cargo:rustc-env=TESSEL_PLUGIN_PATH={plugin}");
    }
}
