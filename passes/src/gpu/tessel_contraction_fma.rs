//! `tessel-contraction-fma`: the multiply-add of a float contraction
//! (`linalg.generic` marked `tessel.contraction` by block-to-linalg) as one
//! `math.fma`.
//!
//! block.dot's float meaning is one fused multiply-add per k step, in k
//! order. The CPU path gets it from `tessel-vectorize`'s FMA outer
//! products; paths that lower contractions to plain loops (the GPU's) run
//! this pass first, so that every target computes the same bits.

use crate::support::handles::{parent_of, raw_op, value_type};
use crate::support::ir::defining_op;
use crate::{
    PassDefinition, PassError, block::block_to_linalg::CONTRACTION, support::ir::print_type, support::template,
};
use melior::ir::OperationRef;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-contraction-fma",
    name: "TesselContractionFma",
    description: "Fuse the multiply-add of float contractions into math.fma",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    template::rewrite_each(
        module,
        |name| name == "arith.addf",
        |raw, _| {
            let add = raw_op(raw);
            let parent = raw_op(parent_of(raw));
            if parent.name() != "linalg.generic" || !parent.has(CONTRACTION) {
                return Ok(None);
            }
            let (sum, product) = (add.operands()[0], add.operands()[1]);
            let Some(multiply) = defining_op(product).map(raw_op) else { return Ok(None) };
            if multiply.name() != "arith.mulf" {
                return Ok(None);
            }
            let element = print_type(value_type(sum));
            let text = format!(
                "func.func @template(%x: {element}, %y: {element}, %sum: {element}) -> {element} {{\n\
             %s = math.fma %x, %y, %sum : {element}\nreturn %s : {element}\n}}"
            );
            let operands = multiply.operands();
            Ok(Some((text, vec![operands[0], operands[1], sum])))
        },
    )
}
