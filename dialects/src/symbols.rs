//! Looking things up in modules.

use melior::ir::{BlockLike, OperationRef, RegionLike, attribute::StringAttribute, operation::OperationLike};

/// The top-level operation of `module` whose `sym_name` is `name`.
pub fn find_symbol<'c, 'a>(module: &impl OperationLike<'c, 'a>, name: &str) -> Option<OperationRef<'c, 'a>> {
    let block = module.region(0).ok()?.first_block()?;
    let mut op = block.first_operation();
    while let Some(current) = op {
        let symbol = current.attribute("sym_name").ok().and_then(|attribute| StringAttribute::try_from(attribute).ok());
        if symbol.is_some_and(|symbol| symbol.value() == name) {
            return Some(current);
        }
        op = current.next_in_block();
    }
    None
}
