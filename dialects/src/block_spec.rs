//! A Rust view of `#grid.block` BlockSpecs and their index maps.

use crate::ffi;
use melior::{
    Context,
    ir::{Attribute, AttributeLike},
};
use mlir_sys::{
    MlirAffineExpr, MlirAffineMap, mlirAffineAddExprGet, mlirAffineBinaryOpExprGetLHS, mlirAffineBinaryOpExprGetRHS,
    mlirAffineCeilDivExprGet, mlirAffineConstantExprGet, mlirAffineConstantExprGetValue, mlirAffineDimExprGet,
    mlirAffineDimExprGetPosition, mlirAffineExprIsAAdd, mlirAffineExprIsACeilDiv, mlirAffineExprIsAConstant,
    mlirAffineExprIsADim, mlirAffineExprIsAFloorDiv, mlirAffineExprIsAMod, mlirAffineExprIsAMul,
    mlirAffineFloorDivExprGet, mlirAffineMapGet, mlirAffineMapGetNumDims, mlirAffineMapGetNumResults,
    mlirAffineMapGetResult, mlirAffineModExprGet, mlirAffineMulExprGet,
};

/// One result of an index map: an affine expression of the grid indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexExpr {
    /// Grid index `d<n>`.
    Dim(usize),
    Constant(i64),
    Add(Box<IndexExpr>, Box<IndexExpr>),
    Mul(Box<IndexExpr>, Box<IndexExpr>),
    /// Floor modulo (result has the sign of the divisor), as in MLIR.
    Mod(Box<IndexExpr>, Box<IndexExpr>),
    FloorDiv(Box<IndexExpr>, Box<IndexExpr>),
    CeilDiv(Box<IndexExpr>, Box<IndexExpr>),
}

impl IndexExpr {
    /// Value at the grid point `indices`, or `None` on division by zero.
    pub fn eval(&self, indices: &[i64]) -> Option<i64> {
        Some(match self {
            IndexExpr::Dim(position) => indices[*position],
            IndexExpr::Constant(value) => *value,
            IndexExpr::Add(lhs, rhs) => lhs.eval(indices)?.checked_add(rhs.eval(indices)?)?,
            IndexExpr::Mul(lhs, rhs) => lhs.eval(indices)?.checked_mul(rhs.eval(indices)?)?,
            IndexExpr::Mod(lhs, rhs) => lhs.eval(indices)?.checked_rem_euclid(rhs.eval(indices)?)?,
            IndexExpr::FloorDiv(lhs, rhs) => floor_div(lhs.eval(indices)?, rhs.eval(indices)?)?,
            IndexExpr::CeilDiv(lhs, rhs) => {
                floor_div(lhs.eval(indices)?.checked_neg()?, rhs.eval(indices)?)?.checked_neg()?
            }
        })
    }

    /// Whether the expression changes with grid index `dim`.
    pub fn uses_dim(&self, dim: usize) -> bool {
        match self {
            IndexExpr::Dim(position) => *position == dim,
            IndexExpr::Constant(_) => false,
            IndexExpr::Add(lhs, rhs)
            | IndexExpr::Mul(lhs, rhs)
            | IndexExpr::Mod(lhs, rhs)
            | IndexExpr::FloorDiv(lhs, rhs)
            | IndexExpr::CeilDiv(lhs, rhs) => lhs.uses_dim(dim) || rhs.uses_dim(dim),
        }
    }

    /// Whether the expression is a sum of constant multiples of dims (its
    /// extremes over a box of grid points are at the box's corners).
    pub fn is_linear(&self) -> bool {
        match self {
            IndexExpr::Dim(_) | IndexExpr::Constant(_) => true,
            IndexExpr::Add(lhs, rhs) => lhs.is_linear() && rhs.is_linear(),
            IndexExpr::Mul(lhs, rhs) => {
                (lhs.is_linear() && matches!(**rhs, IndexExpr::Constant(_)))
                    || (rhs.is_linear() && matches!(**lhs, IndexExpr::Constant(_)))
            }
            _ => false,
        }
    }

    /// # Safety
    /// `expr` is a valid affine expression without symbols.
    unsafe fn from_raw(expr: MlirAffineExpr) -> Self {
        // SAFETY: the caller's contract; each accessor runs on the kind the
        // `IsA` check before it established, and operands of a binary
        // expression are valid expressions again.
        unsafe {
            let binary = |make: fn(Box<IndexExpr>, Box<IndexExpr>) -> IndexExpr| {
                make(
                    Box::new(Self::from_raw(mlirAffineBinaryOpExprGetLHS(expr))),
                    Box::new(Self::from_raw(mlirAffineBinaryOpExprGetRHS(expr))),
                )
            };
            if mlirAffineExprIsADim(expr) {
                IndexExpr::Dim(mlirAffineDimExprGetPosition(expr) as usize)
            } else if mlirAffineExprIsAConstant(expr) {
                IndexExpr::Constant(mlirAffineConstantExprGetValue(expr))
            } else if mlirAffineExprIsAAdd(expr) {
                binary(IndexExpr::Add)
            } else if mlirAffineExprIsAMul(expr) {
                binary(IndexExpr::Mul)
            } else if mlirAffineExprIsAMod(expr) {
                binary(IndexExpr::Mod)
            } else if mlirAffineExprIsAFloorDiv(expr) {
                binary(IndexExpr::FloorDiv)
            } else if mlirAffineExprIsACeilDiv(expr) {
                binary(IndexExpr::CeilDiv)
            } else {
                // Symbols are rejected by the BlockSpec verifier.
                unreachable!("index maps have no symbols")
            }
        }
    }

    /// # Safety
    /// None beyond a live `context` (borrowed here); unsafe only because it
    /// hands out a raw handle.
    unsafe fn to_raw(&self, context: &Context) -> MlirAffineExpr {
        // SAFETY: builders of uniqued affine expressions in a live context.
        unsafe {
            let ctx = context.to_raw();
            match self {
                IndexExpr::Dim(position) => mlirAffineDimExprGet(ctx, *position as isize),
                IndexExpr::Constant(value) => mlirAffineConstantExprGet(ctx, *value),
                IndexExpr::Add(l, r) => mlirAffineAddExprGet(l.to_raw(context), r.to_raw(context)),
                IndexExpr::Mul(l, r) => mlirAffineMulExprGet(l.to_raw(context), r.to_raw(context)),
                IndexExpr::Mod(l, r) => mlirAffineModExprGet(l.to_raw(context), r.to_raw(context)),
                IndexExpr::FloorDiv(l, r) => mlirAffineFloorDivExprGet(l.to_raw(context), r.to_raw(context)),
                IndexExpr::CeilDiv(l, r) => mlirAffineCeilDivExprGet(l.to_raw(context), r.to_raw(context)),
            }
        }
    }
}

/// Division rounding towards negative infinity; `None` for `b == 0` or overflow.
fn floor_div(a: i64, b: i64) -> Option<i64> {
    let (q, r) = (a.checked_div(b)?, a.checked_rem(b)?);
    Some(if r != 0 && ((r < 0) != (b < 0)) { q - 1 } else { q })
}

/// An index map `(grid indices) -> (block indices or element offsets)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexMap {
    pub num_dims: usize,
    pub results: Vec<IndexExpr>,
}

impl IndexMap {
    /// Block indices at a grid point, or `None` on division by zero/overflow.
    pub fn eval(&self, indices: &[i64]) -> Option<Vec<i64>> {
        self.results.iter().map(|result| result.eval(indices)).collect()
    }

    /// Whether some result changes with grid index `dim`.
    pub fn uses_dim(&self, dim: usize) -> bool {
        self.results.iter().any(|result| result.uses_dim(dim))
    }

    /// # Safety
    /// `map` must be a valid, non-null affine map without symbols.
    pub unsafe fn from_raw(map: MlirAffineMap) -> Self {
        // SAFETY: the caller's contract; result positions stay below the
        // map's result count.
        unsafe {
            IndexMap {
                num_dims: mlirAffineMapGetNumDims(map) as usize,
                results: (0..mlirAffineMapGetNumResults(map))
                    .map(|i| IndexExpr::from_raw(mlirAffineMapGetResult(map, i)))
                    .collect(),
            }
        }
    }

    fn to_raw(&self, context: &Context) -> MlirAffineMap {
        // SAFETY: builders of uniqued affine expressions and maps in a live
        // context; `results` outlives the call that reads it.
        unsafe {
            let mut results: Vec<_> = self.results.iter().map(|r| r.to_raw(context)).collect();
            mlirAffineMapGet(context.to_raw(), self.num_dims as isize, 0, results.len() as isize, results.as_mut_ptr())
        }
    }
}

/// Grids of up to this many programs have their blocks' bounds checked
/// program by program at compile time.
pub const MAX_ENUMERATED_PROGRAMS: i64 = 1 << 18;

/// A Pallas BlockSpec, as written in `#grid.block<...>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSpec {
    /// `block_shape=None`: the whole array is one block.
    pub full: bool,
    /// Block sizes; `None` is a squeezed dimension (Pallas' `None`).
    pub block_shape: Vec<Option<i64>>,
    /// `None`: all-zero block indices.
    pub index_map: Option<IndexMap>,
    /// The map gives element offsets rather than block indices.
    pub unblocked: bool,
    /// Virtual (lo, hi) padding per dimension, only when unblocked.
    pub padding: Vec<(i64, i64)>,
    /// Instead of a map: a `func.func` from the program ids and the call's
    /// scalar arrays to the block indices (`@name`, without the `@`).
    pub index_function: Option<String>,
}

/// Why an attribute is not a valid BlockSpec.
#[derive(Debug, thiserror::Error)]
pub enum BlockSpecError {
    #[error("attribute is not a #grid.block BlockSpec")]
    NotABlockSpec,
    #[error("invalid BlockSpec (see the context's diagnostics)")]
    Invalid,
}

impl BlockSpec {
    /// Reads a `#grid.block` attribute.
    pub fn from_attribute(attribute: Attribute) -> Result<Self, BlockSpecError> {
        let raw = attribute.to_raw();
        // SAFETY: `attribute` is live (melior's borrow); the accessors run
        // only once it is known to be a `#grid.block`, and the index map
        // they return is a symbol-free affine map (its verifier says so).
        unsafe {
            if !ffi::tesselAttributeIsABlockSpec(raw) {
                return Err(BlockSpecError::NotABlockSpec);
            }
            let squeezed = ffi::tesselBlockSpecSqueezed();
            let rank = ffi::tesselBlockSpecGetRank(raw);
            let map = ffi::tesselBlockSpecGetIndexMap(raw);
            let padding = ffi::tesselBlockSpecGetNumPadding(raw);
            let function = ffi::tesselBlockSpecGetIndexFunction(raw);
            let index_function = (function.length > 0).then(|| {
                let bytes = std::slice::from_raw_parts(function.data.cast::<u8>(), function.length);
                String::from_utf8_lossy(bytes).into_owned()
            });
            Ok(BlockSpec {
                index_function,
                full: ffi::tesselBlockSpecIsFull(raw),
                block_shape: (0..rank)
                    .map(|i| ffi::tesselBlockSpecGetBlockDim(raw, i))
                    .map(|size| (size != squeezed).then_some(size))
                    .collect(),
                index_map: (!map.ptr.is_null()).then(|| IndexMap::from_raw(map)),
                unblocked: ffi::tesselBlockSpecIsUnblocked(raw),
                padding: (0..padding / 2)
                    .map(|i| {
                        (ffi::tesselBlockSpecGetPadding(raw, 2 * i), ffi::tesselBlockSpecGetPadding(raw, 2 * i + 1))
                    })
                    .collect(),
            })
        }
    }

    /// Builds the `#grid.block` attribute.
    pub fn to_attribute<'c>(&self, context: &'c Context) -> Result<Attribute<'c>, BlockSpecError> {
        // SAFETY: returns a constant.
        let squeezed = unsafe { ffi::tesselBlockSpecSqueezed() };
        let shape: Vec<i64> = self.block_shape.iter().map(|size| size.unwrap_or(squeezed)).collect();
        let padding: Vec<i64> = self.padding.iter().flat_map(|&(lo, hi)| [lo, hi]).collect();
        let map = match &self.index_map {
            Some(map) => map.to_raw(context),
            None => MlirAffineMap { ptr: std::ptr::null() },
        };
        let function = self.index_function.as_deref().unwrap_or("");
        // SAFETY: a live context; the two slices and the name outlive the
        // call (the attribute copies them); a null map means "no index
        // map", an empty name "no index function".
        let raw = unsafe {
            ffi::tesselBlockSpecGet(
                context.to_raw(),
                self.full,
                shape.len() as isize,
                shape.as_ptr(),
                map,
                self.unblocked,
                padding.len() as isize,
                padding.as_ptr(),
                melior::StringRef::new(function).to_raw(),
            )
        };
        if raw.ptr.is_null() {
            return Err(BlockSpecError::Invalid);
        }
        // SAFETY: a non-null attribute of `context`.
        Ok(unsafe { Attribute::from_raw(raw) })
    }

    /// Block indices (blocked) or element offsets (unblocked) at a grid
    /// point; `None` for an index function (only running it can tell).
    pub fn indices_at(&self, grid_point: &[i64]) -> Option<Vec<i64>> {
        if self.index_function.is_some() {
            return None;
        }
        match &self.index_map {
            Some(map) => map.eval(grid_point),
            None => Some(vec![0; self.block_shape.len()]),
        }
    }

    /// Block size per array dimension (squeezed dimensions count as 1).
    pub fn block_sizes(&self) -> Vec<i64> {
        self.block_shape.iter().map(|size| size.unwrap_or(1)).collect()
    }

    /// Pallas' rule: at least one element of each block is in bounds. For
    /// blocked specs the block must start inside the array; for unblocked
    /// ones the offset must fall inside the (virtually padded) array.
    /// `operand` names the spec's operand in the error (`input #0`).
    pub fn check_in_bounds(&self, shape: &[i64], point: &[i64], operand: &str) -> Result<(), String> {
        if self.full {
            return Ok(());
        }
        let indices = self.indices_at(point).ok_or_else(|| {
            format!("BlockSpec of {operand}: index map divides by zero or overflows at grid point {point:?}")
        })?;
        self.check_indices(shape, point, &indices, operand)
    }

    /// `check_in_bounds` for the block `indices` a program's index map or
    /// function gave.
    pub fn check_indices(&self, shape: &[i64], point: &[i64], indices: &[i64], operand: &str) -> Result<(), String> {
        for (dim, ((&index, &size), &extent)) in indices.iter().zip(&self.block_sizes()).zip(shape).enumerate() {
            let (start, limit, what) = if self.unblocked {
                let padded = self.padding.get(dim).map_or(0, |(lo, hi)| lo + hi);
                (index, extent + padded, if padded > 0 { "padded array" } else { "array" })
            } else {
                (index.saturating_mul(size), extent, "array")
            };
            if start < 0 || start >= limit {
                // Worded as JAX's TPU interpreter words it, for those who
                // match its errors.
                return Err(format!(
                    "Out-of-bounds block index {indices:?} for {operand} at grid point {point:?}: the block \
                     starts at element {start} of dimension {dim}, outside the {what} of size {limit}; at least \
                     one element of each block must be in bounds"
                ));
            }
        }
        Ok(())
    }

    /// Whether `check_in_bounds` can be decided for a whole grid at compile
    /// time: grids of up to [`MAX_ENUMERATED_PROGRAMS`] programs are
    /// enumerated, larger ones checked at their corners when the map is
    /// linear (a linear map takes its extremes at the corners of a box).
    /// Otherwise (and always for index functions) compiled code checks
    /// every program at run time.
    pub fn bounds_provable(&self, grid: &[i64]) -> bool {
        // A dynamic size (negative) leaves the grid unknown.
        let points = grid.iter().try_fold(1i64, |product, &size| product.checked_mul(size.max(0)));
        self.full
            || (self.index_function.is_none()
                && grid.iter().all(|&size| size >= 0)
                && (points.is_some_and(|points| points <= MAX_ENUMERATED_PROGRAMS)
                    || self.index_map.as_ref().is_none_or(|map| map.results.iter().all(IndexExpr::is_linear))))
    }

    /// Whether the block changes with grid axis `dim` (an index function
    /// is not known to: semantics inference then keeps the axis in order).
    pub fn uses_grid_axis(&self, dim: usize) -> bool {
        self.index_map.as_ref().is_some_and(|map| map.uses_dim(dim))
    }
}
