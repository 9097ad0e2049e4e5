//! The on-disk cache of tuned schedules: one JSON file per kernel, named by
//! a hash of everything the best schedule depends on (the kernel's IR, the
//! target, the host CPU and its features, Tessel's version, the schedule
//! space). Entries are written to a temporary file and renamed into place,
//! so concurrent tuners never leave a torn entry (the last one wins, and
//! each wrote a complete, valid result); a corrupt entry is reported and
//! ignored.

use crate::space::CpuSchedule;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// What the cache keeps per kernel (and target).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry<S = CpuSchedule> {
    pub schedule: S,
    pub default_s: f64,
    pub best_s: f64,
    pub candidates: usize,
}

/// The result of a lookup.
#[derive(Debug)]
pub enum Lookup<S = CpuSchedule> {
    Hit(Entry<S>),
    Miss,
    /// The entry exists but cannot be read: why (a warning to show).
    Corrupt(String),
}

/// A cache folder.
pub struct Cache {
    dir: PathBuf,
}

/// `TESSEL_CACHE_DIR`, else `$XDG_CACHE_HOME/tessel`, else `~/.cache/tessel`.
pub fn default_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("TESSEL_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("tessel");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    home.join(".cache/tessel")
}

/// The key of `module_text` (the kernel module as MLIR prints it) on
/// `target` (`cpu`, `rocm-<chip>`), searched in `space`, for this host and
/// this Tessel.
pub fn key(module_text: &str, target: &str, space: &str) -> String {
    let (cpu, features) = tessel_lowering::emit::host_cpu();
    // Code for the CPU TESSEL_CPU names is another target.
    let jit_cpu = tessel_dialects::jit_cpu::requested().ok().flatten().unwrap_or_else(|| "host".to_string());
    let mut hash = Sha256::new();
    for part in [module_text, target, &cpu, &features, &jit_cpu, env!("CARGO_PKG_VERSION"), space] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
}

impl Cache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Cache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The entry under `key`, if there is one `valid` accepts.
    pub fn get<S: DeserializeOwned>(&self, key: &str, valid: impl Fn(&Entry<S>) -> bool) -> Lookup<S> {
        let path = self.path(key);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
            Err(error) => {
                return Lookup::Corrupt(format!("ignoring unreadable cache entry {}: {error}", path.display()));
            }
        };
        match serde_json::from_str::<Entry<S>>(&text) {
            Ok(entry) if valid(&entry) && entry.best_s.is_finite() => Lookup::Hit(entry),
            Ok(_) => {
                Lookup::Corrupt(format!("ignoring cache entry {}: its schedule is not in this space", path.display()))
            }
            Err(error) => Lookup::Corrupt(format!("ignoring corrupt cache entry {}: {error}", path.display())),
        }
    }

    /// Writes `entry` atomically (temporary file, then rename).
    pub fn put<S: Serialize>(&self, key: &str, entry: &Entry<S>) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let unique =
            format!(".{key}.{}.{:?}.tmp", std::process::id(), std::thread::current().id()).replace(['(', ')'], "");
        let temporary = self.dir.join(unique);
        std::fs::write(&temporary, serde_json::to_string_pretty(entry)?)?;
        std::fs::rename(&temporary, self.path(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::space::SPACE;

    fn legal(entry: &Entry) -> bool {
        entry.schedule.is_legal()
    }

    /// A legal entry per `variant` (its pipeline depth differs).
    fn entry(variant: i64) -> Entry {
        let mut schedule = CpuSchedule::host_default();
        schedule.num_stages = variant % 4 + 1;
        Entry { schedule, default_s: 2.0, best_s: 1.0, candidates: 7 }
    }

    #[test]
    fn round_trip_miss_and_corrupt_entries() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let key = key("module {}", "cpu", SPACE);
        assert!(matches!(cache.get(&key, legal), Lookup::Miss));
        cache.put(&key, &entry(2)).unwrap();
        assert!(matches!(cache.get(&key, legal), Lookup::Hit(found) if found == entry(2)));
        std::fs::write(dir.path().join(format!("{key}.json")), "{ not json").unwrap();
        assert!(matches!(cache.get(&key, legal), Lookup::Corrupt(why) if why.contains("corrupt")));
    }

    #[test]
    fn keys_depend_on_the_module_and_the_target() {
        assert_eq!(key("a", "cpu", SPACE), key("a", "cpu", SPACE));
        assert_ne!(key("a", "cpu", SPACE), key("b", "cpu", SPACE));
        assert_ne!(key("a", "cpu", SPACE), key("a", "rocm-gfx90a", SPACE));
        assert_ne!(key("a", "cpu", SPACE), key("a", "cpu", "another space"));
    }

    #[test]
    fn concurrent_writers_leave_a_valid_entry() {
        let dir = tempfile::tempdir().unwrap();
        let key = key("module {}", "cpu", SPACE);
        std::thread::scope(|scope| {
            for variant in 1..=8 {
                let (dir, key) = (dir.path(), &key);
                scope.spawn(move || {
                    let cache = Cache::new(dir);
                    for _ in 0..20 {
                        cache.put(key, &entry(variant)).unwrap();
                        assert!(matches!(cache.get(key, legal), Lookup::Hit(_)));
                    }
                });
            }
        });
        assert!(matches!(Cache::new(dir.path()).get(&key, legal), Lookup::Hit(_)));
        let leftovers =
            std::fs::read_dir(dir.path()).unwrap().filter(|e| e.as_ref().unwrap().path().extension().unwrap() == "tmp");
        assert_eq!(leftovers.count(), 0);
    }
}
