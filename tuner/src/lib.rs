//! BEAM search over kernel schedules with an on-disk cache. Empty until the
//! CPU performance work gives it schedules to search.
