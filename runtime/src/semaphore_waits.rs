//! The functions a concurrent semaphore wait calls
//! (`tessel_dialects::WAIT_FUNCTIONS`): the cores of a core mesh run at
//! once and signal each other, so a wait looks at its count until another
//! core has signalled enough — but not forever. A kernel whose wait is
//! never satisfied (a core that never signals, a count that is short) is
//! reported, located, once the wait timeout passes, where JAX's TPU
//! interpreter waits forever.
//!
//! `TESSEL_WAIT_TIMEOUT` sets the timeout in seconds (default 10; read
//! once when each wait starts, so a caller can change it between calls).

use std::time::{Duration, Instant};

/// The default wait timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The wait timeout: `TESSEL_WAIT_TIMEOUT` (seconds) or the default.
pub fn timeout() -> Duration {
    std::env::var("TESSEL_WAIT_TIMEOUT")
        .ok()
        .and_then(|text| text.trim().parse::<f64>().ok())
        .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64)
}

/// The process' reference instant: deadlines are nanoseconds after it.
fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_nanos() -> i64 {
    i64::try_from(epoch().elapsed().as_nanos()).unwrap_or(i64::MAX)
}

thread_local! {
    /// When this thread's current wait started (a thread waits for one
    /// semaphore at a time): `wait_pause` sleeps only once the wait has
    /// lasted, without reading the environment on every spin.
    static WAIT_START: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

/// When a wait starting now gives up (the timeout is read here, once per
/// wait).
pub(crate) extern "C" fn wait_deadline() -> i64 {
    let start = now_nanos();
    WAIT_START.with(|cell| cell.set(start));
    start.saturating_add(i64::try_from(timeout().as_nanos()).unwrap_or(i64::MAX))
}

/// Lets the other cores run a little; false once `deadline` has passed.
pub(crate) extern "C" fn wait_pause(deadline: i64) -> bool {
    // Yield first (a signal is usually a few instructions away on another
    // thread); sleep briefly once the wait has lasted a millisecond, so a
    // long wait does not take a CPU from the cores it waits for.
    std::thread::yield_now();
    let now = now_nanos();
    if now >= deadline {
        return false;
    }
    if now - WAIT_START.with(std::cell::Cell::get) > 1_000_000 {
        std::thread::sleep(Duration::from_micros(50));
    }
    true
}
