//! `tessel-opt`: mlir-opt for Tessel IR (all upstream passes + Tessel's).
fn main() -> std::process::ExitCode {
    tessel_driver::opt::main(std::env::args().collect())
}
