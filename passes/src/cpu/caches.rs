//! What cache blocking needs to know about a CPU: the sizes of its data
//! caches, and the k block (BLIS's k_c) a contraction gets from them.
//!
//! The host's sizes come from the operating system (Linux's
//! `/sys/devices/system/cpu/cpu0/cache`, what CPUID reports), a named CPU's
//! from a table of the families LLVM names (LLVM's own target info has no
//! cache sizes for x86: its `getCacheSize` answers 32 KiB and 256 KiB for
//! every x86 CPU).
//!
//! `tessel-tile`'s loop nest in a block is BLIS's inner one: for each
//! panel of `n_r` columns of B (packed, `k x n_r`), for each strip of
//! `m_r` rows of A, the register tile's k loop. Each strip reads the whole
//! B panel, so the panel should stay in the L2 (BLIS keeps it in the L1;
//! measured on Zen 4 and Zen 5, 64- and 128-deep panels that fit the L1
//! were slower or no faster than 256-deep ones: the L2 streams a packed
//! panel at the rate the tile reads it, one vector per `m_r` FMAs). The
//! block's A (`m x k`, BLIS's `m_c x k_c`) is read once per panel, so it
//! should stay in the core's share of the L3 (BLIS keeps it in the L2;
//! measured on Zen 4, a 2 MiB block of A re-read from the L3 four to eight
//! times ran as fast as 512 KiB blocks kept in the L2: one element of A
//! per `n_r` FMAs is little traffic for the L3, but would be a lot for
//! DRAM shared by every core). So k is split into blocks of `k_c` steps,
//! outermost (`tessel.k_chunk`), where the B panel would take more than
//! half the L2 or the block of A more than half the core's L3; otherwise k
//! stays whole ("Analytical Modeling Is Enough for High-Performance BLIS",
//! Low et al., 2016, gives each operand the ways of its cache the others
//! leave: roughly these halves). `m_c` and `n_c` are the Pallas block's.

/// Data cache sizes in bytes: L1 and L2 per core, and the core's share of
/// the L3 (its size over the cores sharing it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caches {
    pub l1: i64,
    pub l2: i64,
    pub l3: i64,
}

const KIB: i64 = 1024;
const MIB: i64 = 1024 * KIB;

/// Where neither the system nor the table says: a common x86 core's
/// (Skylake's client cores: 256 KiB of L2, 2 MiB of L3 per core).
pub const DEFAULT: Caches = Caches { l1: 32 * KIB, l2: 256 * KIB, l3: 2 * MIB };

impl Default for Caches {
    /// A CPU nothing is known of has [`DEFAULT`]'s caches.
    fn default() -> Self {
        DEFAULT
    }
}

/// Per-core L1d and L2, and the L3 per core of the CPU families LLVM names
/// (vendors' data sheets: AMD's 8-core complexes share 16 or 32 MiB,
/// Intel's server parts have 1.375-1.875 MiB per core; for hybrid x86 parts
/// the performance cores'; Apple's cores share their cluster's L2, 12-16
/// MiB for 4, and have no L3 of their own).
const NAMED: &[(&[&str], Caches)] = &[
    (&["znver1", "znver2"], Caches { l1: 32 * KIB, l2: 512 * KIB, l3: 2 * MIB }),
    (&["znver3"], Caches { l1: 32 * KIB, l2: 512 * KIB, l3: 4 * MIB }),
    (&["znver4"], Caches { l1: 32 * KIB, l2: MIB, l3: 4 * MIB }),
    (&["znver5"], Caches { l1: 48 * KIB, l2: MIB, l3: 4 * MIB }),
    (&["skylake-avx512", "cascadelake", "cooperlake", "x86-64-v4"], Caches { l1: 32 * KIB, l2: MIB, l3: 1408 * KIB }),
    (
        &["icelake-server", "icelake-client", "tigerlake", "rocketlake"],
        Caches { l1: 48 * KIB, l2: 1280 * KIB, l3: 1536 * KIB },
    ),
    (
        &["sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d", "diamondrapids"],
        Caches { l1: 48 * KIB, l2: 2 * MIB, l3: 1920 * KIB },
    ),
    (
        &["alderlake", "raptorlake", "meteorlake", "arrowlake", "arrowlake-s", "lunarlake"],
        Caches { l1: 48 * KIB, l2: 2 * MIB, l3: 3 * MIB },
    ),
    (
        &["neoverse-n1", "neoverse-v1", "neoverse-n2", "neoverse-v2", "neoverse-v3"],
        Caches { l1: 64 * KIB, l2: MIB, l3: 1536 * KIB },
    ),
    (&["apple-m1", "apple-m2", "apple-m3", "apple-m4"], Caches { l1: 128 * KIB, l2: 3 * MIB, l3: 3 * MIB }),
];

impl Caches {
    /// The caches of the CPU LLVM calls `cpu`, where the table knows it.
    pub fn named(cpu: &str) -> Option<Caches> {
        NAMED.iter().find(|(names, _)| names.contains(&cpu)).map(|&(_, caches)| caches)
    }

    /// The host's caches as the operating system reports them; else those
    /// of the host's CPU (LLVM's name for it) from the table; else
    /// `DEFAULT`.
    pub fn host(host_cpu: &str) -> Caches {
        Caches::from_sysfs(std::path::Path::new("/sys/devices/system/cpu/cpu0/cache"))
            .or_else(|| Caches::named(host_cpu))
            .unwrap_or(DEFAULT)
    }

    /// The data (or unified) caches of one CPU under Linux's sysfs layout:
    /// `index*/level`, `type`, `size` (`48K`) and `shared_cpu_list`
    /// (`0-7,64-71`: the L3's size is shared among them); `None` without
    /// an L1 and an L2. A missing L3 counts as the L2.
    fn from_sysfs(folder: &std::path::Path) -> Option<Caches> {
        let mut sizes = [0i64; 3];
        for entry in std::fs::read_dir(folder).ok()?.flatten() {
            let read = |name: &str| std::fs::read_to_string(entry.path().join(name)).ok();
            let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size")) else { continue };
            if kind.trim() == "Instruction" {
                continue;
            }
            let (Ok(level @ 1..=3), Some(bytes)) = (level.trim().parse::<usize>(), parse_size(size.trim())) else {
                continue;
            };
            let sharing = if level == 3 { read("shared_cpu_list").map_or(1, |list| cpus_in(&list)) } else { 1 };
            sizes[level - 1] = sizes[level - 1].max(bytes / sharing.max(1));
        }
        let [l1, l2, l3] = sizes;
        (l1 > 0 && l2 > 0).then_some(Caches { l1, l2, l3: l3.max(l2) })
    }

    /// The k block (BLIS's k_c, in k steps) of a contraction whose result
    /// block has `rows` rows, whose register tile is `tile_columns` wide
    /// (the B panel's width) and whose operands are `element_bytes` wide,
    /// over `depth` k steps: 0 (k whole) where the B panel (`depth x
    /// tile_columns`) takes at most half the L2 and the block of A (`rows x
    /// depth`) at most half the core's L3; else the largest power of two
    /// for which both do, at least 16 (the module docs). The passes shrink
    /// it to a divisor of `depth`.
    pub fn k_block(self, rows: i64, tile_columns: i64, element_bytes: i64, depth: i64) -> i64 {
        let bytes = element_bytes.max(1);
        let panel = (self.l2 / 2) / (tile_columns.max(1) * bytes);
        let block_of_a = (self.l3 / 2) / (rows.max(1) * bytes);
        let most = panel.min(block_of_a);
        if depth <= most {
            return 0;
        }
        let most = most.max(16);
        1 << (63 - most.leading_zeros())
    }
}

/// How many CPUs a `shared_cpu_list` (`0-7,64-71`, `3`) names.
fn cpus_in(list: &str) -> i64 {
    list.trim()
        .split(',')
        .filter(|part| !part.is_empty())
        .map(|part| match part.split_once('-') {
            Some((first, last)) => match (first.parse::<i64>(), last.parse::<i64>()) {
                (Ok(first), Ok(last)) if last >= first => last - first + 1,
                _ => 1,
            },
            None => 1,
        })
        .sum::<i64>()
        .max(1)
}

/// `32K`, `1024K`, `32M` or plain bytes.
fn parse_size(text: &str) -> Option<i64> {
    let (number, scale) = match text.as_bytes().last()? {
        b'K' | b'k' => (&text[..text.len() - 1], KIB),
        b'M' | b'm' => (&text[..text.len() - 1], MIB),
        b'G' | b'g' => (&text[..text.len() - 1], 1024 * MIB),
        _ => (text, 1),
    };
    number.parse::<i64>().ok().map(|n| n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_sysfs_writes_them() {
        assert_eq!(parse_size("32K"), Some(32 * KIB));
        assert_eq!(parse_size("1024K"), Some(MIB));
        assert_eq!(parse_size("32M"), Some(32 * MIB));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("big"), None);
        assert_eq!(cpus_in("0-7,64-71\n"), 16);
        assert_eq!(cpus_in("3"), 1);
        assert_eq!(cpus_in(""), 1);
        let folder = std::env::temp_dir().join(format!("tessel-caches-{}", std::process::id()));
        for (index, level, kind, size, shared) in [
            (0, 1, "Data", "48K", "0"),
            (1, 1, "Instruction", "32K", "0"),
            (2, 2, "Unified", "2048K", "0"),
            (3, 3, "Unified", "32M", "0-7"),
        ] {
            let entry = folder.join(format!("index{index}"));
            std::fs::create_dir_all(&entry).unwrap();
            for (name, text) in [
                ("level", level.to_string()),
                ("type", kind.into()),
                ("size", size.into()),
                ("shared_cpu_list", shared.into()),
            ] {
                std::fs::write(entry.join(name), format!("{text}\n")).unwrap();
            }
        }
        let read = Caches::from_sysfs(&folder);
        std::fs::remove_dir_all(&folder).unwrap();
        assert_eq!(read, Some(Caches { l1: 48 * KIB, l2: 2 * MIB, l3: 4 * MIB }));
        assert_eq!(Caches::from_sysfs(std::path::Path::new("/no/such/folder")), None);
    }

    #[test]
    fn every_host_has_caches() {
        let host = Caches::host("no-such-cpu");
        assert!(host.l1 > 0 && host.l2 >= host.l1 && host.l3 >= host.l2, "{host:?}");
        assert_eq!(Caches::named("znver4"), Some(Caches { l1: 32 * KIB, l2: MIB, l3: 4 * MIB }));
        assert_eq!(Caches::named("no-such-cpu"), None);
    }

    #[test]
    fn k_blocks_keep_the_b_panel_in_the_l2_and_a_in_the_l3() {
        let zen4 = Caches::named("znver4").unwrap();
        // The 2048 matmul's 256-row blocks, whole k (merged K grid steps):
        // 4 x 64 AVX-512 tiles' panels take 512 KiB, A's block 2 MiB; k
        // stays whole, as measured fastest on Zen 4 (k blocks of 512-1024
        // were 1-2% slower).
        assert_eq!(zen4.k_block(256, 64, 4, 2048), 0);
        assert_eq!(zen4.k_block(256, 32, 4, 2048), 0);
        assert_eq!(zen4.k_block(256, 64, 4, 256), 0);
        // 4096 deep: the AVX-512 panel (1 MiB) no longer fits half the L2,
        // nor A's block (4 MiB) half the core's L3.
        assert_eq!(zen4.k_block(256, 64, 4, 4096), 2048);
        // 1024-row blocks: A's block decides.
        assert_eq!(zen4.k_block(1024, 32, 4, 2048), 512);
        // Skylake's 256 KiB L2: 512-deep panels of 64 floats; never below 16.
        assert_eq!(DEFAULT.k_block(256, 64, 4, 2048), 512);
        assert_eq!(DEFAULT.k_block(65536, 64, 4, 2048), 16);
        // Bytes, not elements: 8-bit operands block four times as deep.
        assert_eq!(DEFAULT.k_block(256, 64, 1, 4096), 2048);
    }
}
