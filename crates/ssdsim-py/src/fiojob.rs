//! A fio job (compiled by ssdlab.fiojob) from Python dicts to the simulator's JobSpec.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{get, verr};

pub(crate) fn fiojob_spec(d: &Bound<'_, PyDict>) -> PyResult<ssdsim::fiojob::JobSpec> {
    use ssdsim::fiojob::{Dist, ExitWhat, JobSpec, SsMetric, SsRule};
    fn req<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, k: &str) -> PyResult<T> {
        get(d, k)?.ok_or_else(|| verr(format!("fio job: {k} missing")))
    }
    let bs: Vec<Vec<(u64, f64)>> = req(d, "bs")?;
    if bs.len() != 3 {
        return Err(verr("fio job: bs needs read, write and trim lists"));
    }
    let dist: String = req(d, "dist")?;
    let p: f64 = req(d, "dist_param")?;
    let dist = match dist.as_str() {
        "random" => Dist::Uniform,
        "zipf" => Dist::Zipf(p),
        "pareto" => Dist::Pareto(p),
        "normal" => Dist::Normal(p),
        "zoned" | "zoned_abs" => Dist::Zoned,
        "sequence" => Dist::Sequence,
        x => return Err(verr(format!("fio job: dist {x}: unknown"))),
    };
    let ss: String = req(d, "ss")?;
    let ss = if ss.is_empty() {
        None
    } else {
        let metric = match ss.as_str() {
            "iops" => SsMetric::Iops,
            "iops_slope" => SsMetric::IopsSlope,
            "bw" => SsMetric::Bw,
            "bw_slope" => SsMetric::BwSlope,
            "lat" => SsMetric::Lat,
            "lat_slope" => SsMetric::LatSlope,
            x => return Err(verr(format!("fio job: ss {x}: unknown"))),
        };
        Some(SsRule {
            metric,
            limit: req(d, "ss_limit")?,
            pct: req(d, "ss_pct")?,
            dur_ns: req(d, "ss_dur_ns")?,
            interval_ns: req(d, "ss_interval_ns")?,
            ramp_ns: req(d, "ss_ramp_ns")?,
        })
    };
    let arr3 = |k: &str| -> PyResult<[u64; 3]> {
        let v: Vec<u64> = req(d, k)?;
        v.try_into()
            .map_err(|_| verr(format!("fio job: {k} needs 3 values")))
    };
    Ok(JobSpec {
        name: req(d, "name")?,
        wave: req(d, "wave")?,
        group: req(d, "group")?,
        exitall: req(d, "exitall")?,
        exit_what: match req::<String>(d, "exit_what")?.as_str() {
            "group" => ExitWhat::Group,
            "stonewall" => ExitWhat::Stonewall,
            "all" => ExitWhat::All,
            x => return Err(verr(format!("fio job: exit_what {x}: unknown"))),
        },
        read: req(d, "read")?,
        write: req(d, "write")?,
        trim: req(d, "trim")?,
        random: req(d, "random")?,
        trimwrite: req(d, "trimwrite")?,
        rwmixread: req(d, "rwmixread")?,
        seq_skip: req(d, "seq_skip")?,
        bs: [bs[0].clone(), bs[1].clone(), bs[2].clone()],
        offset: req(d, "offset")?,
        size: req(d, "size")?,
        io_size: req(d, "io_size")?,
        number_ios: req(d, "number_ios")?,
        iodepth: req(d, "iodepth")?,
        time_based: req(d, "time_based")?,
        runtime_ns: req(d, "runtime_ns")?,
        ramp_ns: req(d, "ramp_ns")?,
        startdelay_ns: req(d, "startdelay_ns")?,
        rate_bps: arr3("rate_bps")?,
        rate_iops: arr3("rate_iops")?,
        rate_poisson: req(d, "rate_poisson")?,
        thinktime_ns: req(d, "thinktime_ns")?,
        thinktime_blocks: req(d, "thinktime_blocks")?,
        dist,
        zones: req(d, "zones")?,
        sequence: req(d, "sequence")?,
        sequence_stride: req(d, "sequence_stride")?,
        seed: req(d, "seed")?,
        randommap: req(d, "randommap")?,
        ba: req(d, "ba")?,
        zone_size: req(d, "zone_size")?,
        zone_skip: req(d, "zone_skip")?,
        ss,
        ss_group: req(d, "ss_group")?,
        lat_target_ns: req(d, "lat_target_ns")?,
        lat_window_ns: req(d, "lat_window_ns")?,
        lat_pct: req(d, "lat_pct")?,
        lat_run: req(d, "lat_run")?,
        log_ns: req(d, "log_ns")?,
        // jobs compiled before write_mode existed carry none: plain writes
        write_mode: match get::<Vec<u32>>(d, "write_mode")? {
            None => [100, 0, 0, 0],
            Some(v) => v
                .try_into()
                .map_err(|_| verr("fio job: write_mode needs 4 shares"))?,
        },
        flow: get(d, "flow")?.unwrap_or(0),
        flow_id: get(d, "flow_id")?.unwrap_or(0),
        flow_sleep_ns: get(d, "flow_sleep_ns")?.unwrap_or(0),
        zbd: match get::<u64>(d, "zbd_zone_size")?.unwrap_or(0) {
            0 => None,
            zone_size => Some(ssdsim::fiojob::zbd::ZbdJob {
                zone_size,
                zone_cap: get(d, "zbd_zone_cap")?.unwrap_or(zone_size),
                max_open: get(d, "zbd_max_open")?.unwrap_or(0),
                job_max_open: get(d, "zbd_job_max_open")?.unwrap_or(0),
                read_beyond_wp: get(d, "zbd_read_beyond_wp")?.unwrap_or(false),
                reset_threshold: get(d, "zbd_reset_threshold")?.unwrap_or(0.0),
                reset_frequency: get(d, "zbd_reset_frequency")?.unwrap_or(0.0),
                verify: get(d, "zbd_verify")?.unwrap_or(false),
            }),
        },
        iodepth_low: get(d, "iodepth_low")?.unwrap_or(0),
        complete_min: get(d, "iodepth_batch_complete_min")?.unwrap_or(1),
        complete_max: get(d, "iodepth_batch_complete_max")?.unwrap_or(0),
        rate_min_bps: get::<Vec<u64>>(d, "rate_min_bps")?
            .unwrap_or(vec![0; 3])
            .try_into()
            .map_err(|_| verr("fio job: rate_min_bps needs 3 values"))?,
        rate_min_iops: get::<Vec<u64>>(d, "rate_min_iops")?
            .unwrap_or(vec![0; 3])
            .try_into()
            .map_err(|_| verr("fio job: rate_min_iops needs 3 values"))?,
        rate_cycle_ns: get(d, "rate_cycle_ns")?.unwrap_or(0),
    })
}

/// The first `n` I/Os of a job's stream, as the simulator would issue them: (direction
/// 0 read / 1 write / 2 trim, offset bytes, length bytes) per I/O.
#[pyfunction]
pub(crate) fn fiojob_stream(
    job: &Bound<'_, PyDict>,
    n: usize,
) -> PyResult<(Vec<u8>, Vec<u64>, Vec<u64>)> {
    let spec = fiojob_spec(job)?;
    let mut s = ssdsim::fiojob::stream::Stream::new(&spec);
    let (mut dirs, mut offs, mut lens) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for _ in 0..n {
        let r = s.next_io();
        dirs.push(r.dir as u8);
        offs.push(r.offset);
        lens.push(r.len);
    }
    Ok((dirs, offs, lens))
}
