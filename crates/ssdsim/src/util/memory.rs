//! Memory this process can still allocate: MemAvailable, and the room under its cgroup
//! and address-space limits (what ftl::footprint checks a new drive's tables against).

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `key:   123 kB` from a /proc file, in bytes.
fn kb_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line[key.len()..]
        .trim_start_matches(':')
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Room left under the cgroup v2 memory limits of this process and its ancestors.
fn cgroup_room() -> Option<(u64, String)> {
    let rel = read("/proc/self/cgroup")?
        .lines()
        .find_map(|l| l.strip_prefix("0::").map(str::to_string))?;
    let mut dir = std::path::PathBuf::from(format!("/sys/fs/cgroup{}", rel.trim_end_matches('/')));
    let mut best: Option<(u64, String)> = None;
    loop {
        let max = read(&format!("{}/memory.max", dir.display()))
            .and_then(|s| s.trim().parse::<u64>().ok());
        let cur = read(&format!("{}/memory.current", dir.display()))
            .and_then(|s| s.trim().parse::<u64>().ok());
        if let (Some(max), Some(cur)) = (max, cur) {
            let room = max.saturating_sub(cur);
            if best.as_ref().is_none_or(|b| room < b.0) {
                best = Some((room, format!("cgroup limit {}", dir.display())));
            }
        }
        if !dir.pop() || !dir.starts_with("/sys/fs/cgroup") || dir.as_os_str() == "/sys/fs/cgroup" {
            return best;
        }
    }
}

/// Room left under the address-space limit (`ulimit -v`).
fn rlimit_room() -> Option<(u64, String)> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we pass and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let used = kb_field(&read("/proc/self/status")?, "VmSize").unwrap_or(0);
    // rlim_t is u64 on Linux x86_64 but not everywhere.
    #[allow(clippy::unnecessary_cast)]
    let limit = r.rlim_cur as u64;
    Some((
        limit.saturating_sub(used),
        "the address-space limit (ulimit -v)".into(),
    ))
}

/// Bytes this process can still allocate, and which limit says so (None: unknown).
pub fn available() -> Option<(u64, String)> {
    let mut out = read("/proc/meminfo")
        .and_then(|m| kb_field(&m, "MemAvailable"))
        .map(|b| (b, "MemAvailable".to_string()));
    for cand in [cgroup_room(), rlimit_room()].into_iter().flatten() {
        if out.as_ref().is_none_or(|o| cand.0 < o.0) {
            out = Some(cand);
        }
    }
    out
}
