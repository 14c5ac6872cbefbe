//! Profile values that would break the simulation are refused with one line: non-finite
//! or huge floats (virtual time would saturate or explode), and profiles whose tables
//! need more memory than the machine has (refused before anything is allocated).

use ssdsim::profile;

const TLC: &str = include_str!("../../../python/ssdlab/profiles/tlc-256.toml");

fn load(key: &str, value: &str) -> Result<profile::Profile, String> {
    ssdsim::load_profile(TLC, &[(key.to_string(), value.to_string())]).map_err(|e| e.0)
}

#[test]
fn non_finite_and_huge_floats_are_refused() {
    for key in [
        "host.command_overhead_us",
        "host.host_latency_us",
        "nand.erase_us",
        "nand.channel_mbps",
        "nand.native.prog_us",
        "nand.native.read_us",
        "nand.slc.prog_us",
        "nand.slc.read_us",
        "slc.dynamic_max_gb",
        "slc.reclaim_gb",
        "slc.reclaim_interval_gb",
        "mapping.hmb_access_us",
        "mapping.cache_mib",
        "power.program_uj",
        "user_capacity_gb",
    ] {
        for value in ["inf", "nan", "1e300", "-inf", "-1"] {
            let e = load(key, value).expect_err(&format!("{key}={value} accepted"));
            assert!(
                e.starts_with(&format!("{key} = ")) && e.contains("must be"),
                "{key}={value}: {e}"
            );
            assert!(e.len() < 200 && !e.contains('\n'), "{e}");
        }
    }
    // the bounds themselves are allowed
    assert!(load("host.command_overhead_us", "1e7").is_ok());
    assert!(load("nand.native.prog_us", "1e7").is_ok());
    // a time that rounds to 0 ns would make the operation free
    for key in [
        "nand.native.prog_us",
        "nand.erase_us",
        "host.command_overhead_us",
    ] {
        assert!(load(key, "1e-300").unwrap_err().contains("[0.001, 1e7]"));
        assert!(load(key, "0.001").is_ok());
    }
}

#[test]
fn a_value_with_more_toml_after_it_is_not_silently_cut() {
    let e = load("nand.channels", "4\n[evil]\nx=1").unwrap_err();
    assert!(e.contains("nand.channels"), "{e}");
}

#[test]
fn table_estimate_is_about_8_bytes_per_4k_of_raw_nand() {
    let p = load("user_capacity_gb", "256").unwrap();
    let g = ssdsim::nand::Geometry::from_profile(&p);
    let per_slot = ssdsim::ftl::footprint::table_bytes(&p) as f64 / g.total_slots() as f64;
    assert!((7.0..9.0).contains(&per_slot), "{per_slot} B per 4 KiB");
}

#[test]
fn a_profile_larger_than_memory_is_refused_before_allocating() {
    let p = load("user_capacity_gb", "256").unwrap();
    let need = ssdsim::ftl::footprint::table_bytes(&p);
    let e = ssdsim::ftl::footprint::check_against(&p, need - 1, "a test limit")
        .unwrap_err()
        .0;
    assert!(
        e.contains("needs about 0.") && e.contains("GB is available (a test limit)"),
        "{e}"
    );
    assert!(ssdsim::ftl::footprint::check_against(&p, need, "a test limit").is_ok());
    // this machine has what a 256 GB drive needs, and says how much it has
    let (have, what) = ssdsim::util::memory::available().expect("MemAvailable is readable on Linux");
    assert!(have > need, "{have} B available ({what})");
    assert!(ssdsim::ftl::footprint::check(&p).is_ok());
}
