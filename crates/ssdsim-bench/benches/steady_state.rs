//! Steady-state benchmark: a full 256 GB TLC drive (tlc-256, 7.37 % spare) in GC steady
//! state, timed on 4 KiB QD32 random writes. Prints simulated writes per wall-second.
//! A criterion group measures the same loop on a smaller drive for regression tracking.

use criterion::{criterion_group, Criterion};
use ssdsim::{Drive, PhaseKind, PhaseSpec};
use std::time::Instant;

pub fn profile_text(id: &str) -> String {
    let path = format!(
        "{}/../../python/ssdlab/profiles/{id}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn phase(kind: PhaseKind) -> PhaseSpec {
    PhaseSpec::new(kind)
}

fn rand_write(seconds: f64) -> PhaseSpec {
    let mut s = phase(PhaseKind::Io);
    s.random = true;
    s.block_size = 4096;
    s.queue_depth = 32;
    s.stop_seconds = Some(seconds);
    s
}

/// Purge, fill, then random writes until the drive has been overwritten `turns` times.
pub fn steady_drive(text: &str, overrides: &[(String, String)], turns: f64) -> Drive {
    let p = ssdsim::load_profile(text, overrides).unwrap();
    let mut d = Drive::new(p, 42);
    let user = d.user_bytes();
    d.run(&phase(PhaseKind::Purge), &mut |_| true).unwrap();
    let mut fill = phase(PhaseKind::Io);
    fill.stop_bytes = Some(user - user % (128 << 10));
    d.run(&fill, &mut |_| true).unwrap();
    let mut rw = rand_write(1e7);
    rw.stop_bytes = Some((user as f64 * turns) as u64);
    d.run(&rw, &mut |_| true).unwrap();
    d
}

fn headline() {
    let text = profile_text("tlc-256");
    let t = Instant::now();
    let mut d = steady_drive(&text, &[], 1.5);
    println!(
        "preconditioning (purge, fill, 1.5x random overwrite): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let r = d.run(&rand_write(300.0), &mut |_| true).unwrap();
    let wall = t.elapsed().as_secs_f64();
    let get = |k: &str| r.totals.iter().find(|(n, _)| *n == k).unwrap().1;
    println!(
        "steady state tlc-256: {:.0} writes in {:.2} s wall = {:.2} M simulated 4 KiB writes/s (drive at {:.0} IOPS, WAF {:.2})",
        get("ios"),
        wall,
        get("ios") / wall / 1e6,
        get("iops"),
        get("waf")
    );
}

fn bench(c: &mut Criterion) {
    let text = profile_text("tlc-256");
    let ov = vec![
        ("user_capacity_gb".to_string(), "16".to_string()),
        ("nand.blocks_per_plane".to_string(), "86".to_string()),
    ];
    let mut d = steady_drive(&text, &ov, 1.5);
    c.bench_function("steady_rand_write_16GB_0.05s", |b| {
        b.iter(|| d.run(&rand_write(0.05), &mut |_| true).unwrap())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}

fn main() {
    headline();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
