//! The write runs on the built-in drives: whole-drive fills (QD1 and QD32, 128 KiB and
//! 1 MiB), a fill after random writes and one after a TRIM, on shrunk copies of a DRAM
//! TLC, a SATA MLC, a DRAM-less (HMB) TLC, a QLC with static and dynamic SLC cache and a
//! drive with the smallest write buffer, must give what writing slot by slot gives: every
//! phase's totals, series, segments and histogram, the counters and the tables
//! (`write_runs::same_both_ways`). Any shortcut in the sequential write path (how a run's
//! slots are placed, how long a run is) must keep this passing.

use crate::write_runs::same_both_ways;
use ssdsim::{PhaseKind, PhaseSpec};

/// The built-in profile `id` with blocks of 96 pages and 48 blocks a plane (the SLC
/// cache shrunk with it), its user capacity 70 % of its raw capacity; `extra` overrides after.
pub fn shrunk(id: &str, extra: &[(&str, &str)]) -> ssdsim::Profile {
    let path = format!("{}/../../python/ssdlab/profiles/{id}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("built-in profile");
    let full = ssdsim::load_profile(&text, &[]).expect("valid profile");
    let n = &full.nand;
    let dies = (n.channels * n.dies_per_channel) as f64;
    let raw = dies * n.planes as f64 * 48.0 * 96.0 * n.page_kib as f64 * 1024.0 / 1e9;
    let mut o: Vec<(String, String)> = vec![
        ("nand.pages_per_block".into(), "96".into()),
        ("nand.blocks_per_plane".into(), "48".into()),
        ("user_capacity_gb".into(), format!("{:.6}", 0.7 * raw)),
        ("slc.dynamic_max_gb".into(), format!("{:.6}", full.slc.dynamic_max_gb.min(0.05 * raw))),
        ("slc.static_gb".into(), format!("{:.6}", full.slc.static_gb.min(0.02 * raw))),
    ];
    o.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    ssdsim::load_profile(&text, &o).unwrap_or_else(|e| panic!("{id} shrunk: {e}"))
}

fn io(bs_kib: u64, qd: u32, random: bool) -> PhaseSpec {
    let mut s = PhaseSpec::new(PhaseKind::Io);
    s.block_size = bs_kib * 1024;
    s.queue_depth = qd;
    s.random = random;
    s.sample_interval_s = 0.05;
    s
}

/// Purge; whole-drive fills at 128 KiB QD32, 1 MiB QD1, 128 KiB QD1 and 1 MiB QD32 (the
/// last after random writes, the one before after a TRIM of the drive).
fn phases(user: u64) -> Vec<PhaseSpec> {
    let fill = |bs_kib: u64, qd: u32| {
        let mut s = io(bs_kib, qd, false);
        s.stop_bytes = Some(user - user % (bs_kib * 1024));
        s
    };
    let mut random = io(4, 32, true);
    random.stop_bytes = Some(user / 2);
    let mut trim = PhaseSpec::new(PhaseKind::Trim);
    trim.length = user - user % 4096;
    vec![
        PhaseSpec::new(PhaseKind::Purge),
        fill(128, 32),
        fill(1024, 1),
        random.clone(),
        fill(128, 32),
        trim,
        fill(128, 1),
        random,
        fill(1024, 32),
    ]
}

/// The comparison, and on a drive with its mapping table in DRAM (no mapping cache: runs
/// allowed) that the clean fill does place many of its slots as runs (at most half with 8 KiB pages).
fn check(id: &str, extra: &[(&str, &str)]) {
    let p = shrunk(id, extra);
    if p.mapping.kind == "dram" {
        let mut d = ssdsim::Drive::new(p.clone(), 7);
        for s in &phases(d.user_bytes())[..2] {
            d.run(s, &mut |_| true).unwrap();
        }
        let (runs, all) = (d.ftl.run_slots, d.ftl.counters.host_write_slots);
        assert!(runs > all / 5, "{id}: {runs} of {all} slots in runs");
    }
    if let Err(e) = same_both_ways(p, 7, phases) {
        panic!("{id} {extra:?}: {e}");
    }
}

#[test]
fn dram_tlc() {
    check("tlc-256", &[]);
}

#[test]
fn sata_mlc() {
    check("m4-256", &[]);
}

#[test]
fn dramless_hmb_tlc() {
    check("sn520-128", &[]);
}

#[test]
fn qlc_slc_cache() {
    check("qlc-pcie4-hmb-1000", &[]);
}

/// The smallest write buffer the drive allows (enlarged to a program unit a die and
/// stream): the buffer is full and writes wait for programs most of the time.
#[test]
fn small_write_buffer() {
    check("xg6-256", &[("host.write_buffer_kib", "16")]);
}
