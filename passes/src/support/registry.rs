//! By-name registration of Rust passes in MLIR's global pass registry.

use crate::emit_error;
use melior::{
    StringRef,
    ir::{Location, OperationRef, r#type::TypeId},
    pass::{ExternalPass, Pass, create_external},
};
use std::{ffi::c_void, sync::Once};
use tessel_dialects::ffi;

/// Why a pass failed.
#[derive(Debug)]
pub enum PassError {
    /// A message at a location: the registry emits it as an error prefixed
    /// with the pass's argument (`tessel-tile: ...`) and fails the pass.
    At(Location<'static>, String),
    /// The pass emitted its own diagnostics (verifier-style messages about
    /// the input that stand on their own); the registry only fails it.
    Reported,
}

impl PassError {
    pub fn at(location: Location<'static>, message: impl Into<String>) -> Self {
        PassError::At(location, message.into())
    }
}

/// A pass written in Rust.
pub struct PassDefinition {
    /// Command-line name: `--<argument>` and pipeline strings.
    pub argument: &'static str,
    /// CamelCase name shown by `--mlir-print-ir-after-all`.
    pub name: &'static str,
    pub description: &'static str,
    /// Operation the pass is anchored on.
    pub anchor: &'static str,
    pub run: fn(OperationRef<'static, '_>) -> Result<(), PassError>,
}

/// Another argument for a pass (a renamed pass's old name, kept for a
/// release); its diagnostics carry the pass's own argument.
pub struct PassAlias {
    pub argument: &'static str,
    pub description: &'static str,
    pub of: &'static PassDefinition,
}

/// A fresh instance of `definition`, for adding to a pass manager directly.
pub fn create_pass(definition: &'static PassDefinition) -> Pass {
    // The definition's address is unique and lives forever: a TypeID.
    external(definition, definition.argument, definition.description, TypeId::create(definition))
}

/// The pass `definition` under `argument`; failures are reported here, once,
/// with the definition's own argument as their prefix.
fn external(
    definition: &'static PassDefinition,
    argument: &'static str,
    description: &'static str,
    type_id: TypeId,
) -> Pass {
    let run = definition.run;
    let prefix = definition.argument;
    create_external(
        move |operation: OperationRef<'static, '_>, pass: ExternalPass<'_>| {
            if let Err(error) = run(operation) {
                if let PassError::At(location, message) = error {
                    emit_error(location, &format!("{prefix}: {message}"));
                }
                pass.signal_failure();
            }
        },
        type_id,
        definition.name,
        argument,
        description,
        definition.anchor,
        &[],
    )
}

unsafe extern "C" fn factory(user_data: *mut c_void) -> mlir_sys::MlirPass {
    // SAFETY: `register_passes` passes the address of a `'static`
    // `PassDefinition` as the user data.
    let definition = unsafe { &*(user_data as *const PassDefinition) };
    // Ownership of the pass moves to the C++ registry's unique_ptr.
    create_pass(definition).to_raw()
}

unsafe extern "C" fn alias_factory(user_data: *mut c_void) -> mlir_sys::MlirPass {
    // SAFETY: `register_passes` passes the address of a `'static`
    // `PassAlias` as the user data.
    let alias: &'static PassAlias = unsafe { &*(user_data as *const PassAlias) };
    external(alias.of, alias.argument, alias.description, TypeId::create(alias)).to_raw()
}

/// Registers every Tessel pass (idempotent; upstream passes are registered
/// separately with `melior::utility::register_all_passes`).
pub fn register_passes() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for definition in crate::PASSES {
            let user_data = *definition as *const PassDefinition as *mut c_void;
            // SAFETY: the factory reads the user data as the `'static`
            // definition it is; the registry keeps both for the process.
            unsafe { ffi::tesselRegisterPass(factory, user_data) };
        }
        for alias in crate::ALIASES {
            let user_data = *alias as *const PassAlias as *mut c_void;
            // SAFETY: as above, with `alias_factory` and a `'static` alias.
            unsafe { ffi::tesselRegisterPass(alias_factory, user_data) };
        }
        // SAFETY: registers C++ passes with the process-wide registry; no
        // arguments, called once.
        unsafe { ffi::tesselRegisterCppPasses() };
    });
}

/// Whether `argument` names a registered pass or pass pipeline.
pub fn is_registered(argument: &str) -> bool {
    // SAFETY: the string outlives the call; the registry is only read.
    unsafe { ffi::tesselIsRegisteredPass(StringRef::new(argument).to_raw()) }
}
