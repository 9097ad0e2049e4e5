//! Per-target lowering pipelines (`tessel-to-cpu`, `tessel-to-rocm`) and
//! code emission. Empty until the CPU end-to-end work lands: the dialects,
//! `grid-verify-specs` and `tessel-opt` come first.
