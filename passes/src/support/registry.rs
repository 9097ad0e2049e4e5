//! By-name registration of Rust passes in MLIR's global pass registry.

use melior::{
    StringRef,
    ir::{OperationRef, r#type::TypeId},
    pass::{ExternalPass, Pass, create_external},
};
use std::{ffi::c_void, sync::Once};
use tessel_dialects::ffi;

/// A pass written in Rust. `run` signals failure through the `ExternalPass`.
pub struct PassDefinition {
    /// Command-line name: `--<argument>` and pipeline strings.
    pub argument: &'static str,
    /// CamelCase name shown by `--mlir-print-ir-after-all`.
    pub name: &'static str,
    pub description: &'static str,
    /// Operation the pass is anchored on.
    pub anchor: &'static str,
    pub run: fn(OperationRef<'static, '_>, ExternalPass<'_>),
}

/// A fresh instance of `definition`, for adding to a pass manager directly.
pub fn create_pass(definition: &'static PassDefinition) -> Pass {
    let run = definition.run;
    create_external(
        move |operation: OperationRef<'static, '_>, pass: ExternalPass<'_>| run(operation, pass),
        // The definition's address is unique and lives forever: a TypeID.
        TypeId::create(definition),
        definition.name,
        definition.argument,
        definition.description,
        definition.anchor,
        &[],
    )
}

unsafe extern "C" fn factory(user_data: *mut c_void) -> mlir_sys::MlirPass {
    let definition = unsafe { &*(user_data as *const PassDefinition) };
    // Ownership of the pass moves to the C++ registry's unique_ptr.
    create_pass(definition).to_raw()
}

/// Registers every Tessel pass (idempotent; upstream passes are registered
/// separately with `melior::utility::register_all_passes`).
pub fn register_passes() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for definition in crate::PASSES {
            let user_data = *definition as *const PassDefinition as *mut c_void;
            unsafe { ffi::tesselRegisterPass(factory, user_data) };
        }
    });
}

/// Whether `argument` names a registered pass or pass pipeline.
pub fn is_registered(argument: &str) -> bool {
    unsafe { ffi::tesselIsRegisteredPass(StringRef::new(argument).to_raw()) }
}
