//! The memory budget of a run: `--max-memory SIZE`, or by default a share of what the
//! machine lets this process have (its physical memory, or its control group's limit
//! when that is lower).
//!
//! The budget bounds the heap bytes of the relations (`exec::Database::set_memory_budget`),
//! which are most of what an evaluation holds. The default is
//! [`DEFAULT_BUDGET_PERCENT`] of the memory: the rest is room for what the budget does
//! not count (the parsed program and its input text, output buffers, the sets the
//! threads of a split join stage into, a vector's old and new storage while it moves,
//! the grouped copy that the answers of a relation with a flat tuple set are read from)
//! and for the other processes of the machine, so that a runaway program stops with
//! E0017 before the machine starts to swap, or the kernel ends the process.

/// The share of the machine's memory that is the default budget, in percent.
pub const DEFAULT_BUDGET_PERCENT: usize = 80;

/// What `--max-memory` was given: a number of bytes, or `none` (no budget).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxMemory {
    Bytes(usize),
    Unlimited,
}

/// Parses a `--max-memory` value: `none`, or a positive number of bytes with an
/// optional unit `K`, `M`, `G` or `T`, in any case, optionally followed by `B` or `iB`
/// (`512M`, `4G`, `2GiB`, `1.5g`, `65536`). Every unit is a power of 1024: `1GB` is
/// `1GiB`.
pub fn parse_max_memory(text: &str) -> Result<MaxMemory, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") {
        return Ok(MaxMemory::Unlimited);
    }
    let lower = text.to_ascii_lowercase();
    let digits = lower.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(lower.len());
    let (number, unit) = lower.split_at(digits);
    let shift = match unit.trim_start() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("`{text}` has an unknown unit: use K, M, G or T (powers of 1024), or `none`")),
    };
    let value: f64 = number.parse().map_err(|_| format!("`{text}` is not a size such as 512M, 4G or 2GiB"))?;
    let bytes = value * (1u64 << shift) as f64;
    if bytes < 1.0 {
        return Err("the memory budget must be at least one byte (or `none`)".into());
    }
    if bytes > usize::MAX as f64 {
        return Err(format!("`{text}` is more than this machine can address"));
    }
    Ok(MaxMemory::Bytes(bytes as usize))
}

/// The memory budget of a run: `given` (`--max-memory`), else
/// [`DEFAULT_BUDGET_PERCENT`] of [`machine_memory`], else (nothing could be read) none.
pub fn budget(given: Option<MaxMemory>) -> Option<usize> {
    match given {
        Some(MaxMemory::Bytes(bytes)) => Some(bytes),
        Some(MaxMemory::Unlimited) => None,
        None => machine_memory().map(|bytes| bytes / 100 * DEFAULT_BUDGET_PERCENT),
    }
}

/// The memory this process may use: the physical memory (`MemTotal` of
/// `/proc/meminfo`), or the memory limit of its control group (v2 `memory.max`, v1
/// `memory.limit_in_bytes`, of its group and the groups above it) when that is lower.
/// `None` where neither can be read.
pub fn machine_memory() -> Option<usize> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let physical = read("/proc/meminfo").as_deref().and_then(mem_total);
    let groups = read("/proc/self/cgroup").unwrap_or_default();
    let limits =
        cgroup_limit_files(&groups).into_iter().filter_map(|path| read(&path).as_deref().and_then(cgroup_limit));
    physical.into_iter().chain(limits).min()
}

/// The `MemTotal` of a `/proc/meminfo` text, in bytes.
fn mem_total(meminfo: &str) -> Option<usize> {
    let line = meminfo.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    let kib: usize = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// A control group's memory limit file's text in bytes: `None` for `max` (v2) or a
/// value so large it is no limit (v1 writes about `i64::MAX`, rounded to a page).
fn cgroup_limit(text: &str) -> Option<usize> {
    let bytes: u64 = text.trim().parse().ok()?;
    (bytes < 1 << 60).then(|| usize::try_from(bytes).unwrap_or(usize::MAX))
}

/// The memory limit files of the control groups of a `/proc/self/cgroup` text: for v2
/// (`0::/path`) `memory.max` of the group and of each group above it, for v1
/// (`N:…memory…:/path`) `memory.limit_in_bytes` likewise, and the root's of both
/// layouts (a container's own group, when it sees only that).
fn cgroup_limit_files(groups: &str) -> Vec<String> {
    let mut files = vec!["/sys/fs/cgroup/memory.max".to_string(), "/sys/fs/cgroup/memory/memory.limit_in_bytes".into()];
    for line in groups.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let (root, file) = match controllers {
            "" => ("/sys/fs/cgroup", "memory.max"),
            c if c.split(',').any(|c| c == "memory") => ("/sys/fs/cgroup/memory", "memory.limit_in_bytes"),
            _ => continue,
        };
        let mut dir = path.trim_end_matches('/');
        while !dir.is_empty() {
            files.push(format!("{root}{dir}/{file}"));
            dir = &dir[..dir.rfind('/').unwrap_or(0)];
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_units_in_powers_of_1024_and_none() {
        assert_eq!(parse_max_memory("512M"), Ok(MaxMemory::Bytes(512 << 20)));
        assert_eq!(parse_max_memory("4G"), Ok(MaxMemory::Bytes(4 << 30)));
        assert_eq!(parse_max_memory("2GiB"), Ok(MaxMemory::Bytes(2 << 30)));
        assert_eq!(parse_max_memory("2gb"), Ok(MaxMemory::Bytes(2 << 30)));
        assert_eq!(parse_max_memory("1.5k"), Ok(MaxMemory::Bytes(1536)));
        assert_eq!(parse_max_memory("65536"), Ok(MaxMemory::Bytes(65536)));
        assert_eq!(parse_max_memory("64 KiB"), Ok(MaxMemory::Bytes(64 << 10)));
        assert_eq!(parse_max_memory("None"), Ok(MaxMemory::Unlimited));
        for bad in ["", "0", "0.1", "-1G", "4X", "G", "1.2.3M", "1e3", "99999999999T"] {
            assert!(parse_max_memory(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_machine_memory_is_read_from_meminfo_and_cgroup_limits() {
        let meminfo = "MemTotal:       16318852 kB\nMemFree:         1234 kB\n";
        assert_eq!(mem_total(meminfo), Some(16318852 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
        assert_eq!(cgroup_limit("max\n"), None);
        assert_eq!(cgroup_limit("9223372036854771712\n"), None);
        assert_eq!(cgroup_limit("2147483648\n"), Some(2 << 30));
        let files = cgroup_limit_files("0::/user.slice/session-1.scope\n");
        assert!(files.contains(&"/sys/fs/cgroup/user.slice/session-1.scope/memory.max".to_string()));
        assert!(files.contains(&"/sys/fs/cgroup/user.slice/memory.max".to_string()));
        let files = cgroup_limit_files("4:cpu,cpuacct:/a\n3:memory:/docker/abc\n");
        assert!(files.contains(&"/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes".to_string()));
        assert!(!files.iter().any(|f| f.contains("/a/")));
        // On this machine: something is read, and the default budget is its share.
        if let Some(memory) = machine_memory() {
            assert_eq!(budget(None), Some(memory / 100 * DEFAULT_BUDGET_PERCENT));
        }
        assert_eq!(budget(Some(MaxMemory::Unlimited)), None);
        assert_eq!(budget(Some(MaxMemory::Bytes(42))), Some(42));
    }
}
