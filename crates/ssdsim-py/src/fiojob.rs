//! A fio job (compiled by ssdlab.fiojob) from Python dicts to the simulator's JobSpec.

use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use ssdsim::fiojob::report::{IoStat, Plat};
use ssdsim::fiojob::JobOut;

use crate::{get, verr};

/// The job's logs of an entry per I/O: `unit_logs` [(kind, file name, directions)],
/// `log_offset`, `log_prio`, `md_bytes`, and `unit_avg` [(kind, ms)]: the logs averaged from
/// per-I/O samples (none when absent: jobs compiled before them).
fn unit_log_spec(d: &Bound<'_, PyDict>) -> PyResult<ssdsim::fiojob::unit_log::UnitLogSpec> {
    Ok(ssdsim::fiojob::unit_log::UnitLogSpec {
        files: get(d, "unit_logs")?.unwrap_or_default(),
        offset: get(d, "log_offset")?.unwrap_or(false),
        prio: get(d, "log_prio")?.unwrap_or(false),
        md_bytes: get(d, "md_bytes")?.unwrap_or(0),
        averaged: get(d, "unit_avg")?.unwrap_or_default(),
    })
}

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
        seq_identical: get(d, "seq_identical")?.unwrap_or(false),
        perc_rand: match get::<Vec<u32>>(d, "perc_rand")? {
            None => [100; 3],
            Some(v) => v
                .try_into()
                .map_err(|_| verr("fio job: perc_rand needs read, write and trim"))?,
        },
        bs: [bs[0].clone(), bs[1].clone(), bs[2].clone()],
        bs_range: match get::<Vec<(u64, u64)>>(d, "bs_range")? {
            None => [(0, 0); 3],
            Some(v) => v
                .try_into()
                .map_err(|_| verr("fio job: bs_range needs read, write and trim"))?,
        },
        loops: get(d, "loops")?.unwrap_or(1),
        randrepeat: get(d, "randrepeat")?.unwrap_or(true),
        bw_ns: get(d, "bw_ns")?.unwrap_or(500_000_000),
        iops_ns: get(d, "iops_ns")?.unwrap_or(500_000_000),
        keep_log: get(d, "keep_log")?.unwrap_or(false),
        hist_ms: get(d, "hist_ms")?.unwrap_or(0),
        verify: match get::<Vec<u64>>(d, "verify")? {
            None => None,
            Some(v) if v.len() == 4 => Some(ssdsim::fiojob::verify::Verify {
                after: v[0] != 0,
                backlog: v[1],
                batch: v[2],
                only: v[3] != 0,
            }),
            Some(_) => return Err(verr("fio job: verify needs [after, backlog, batch, only]")),
        },
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
        unit_log: unit_log_spec(d)?,
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
        calls: ssdsim::fiojob::sync_ops::Calls {
            trim: issue(d, "trim_issue")?,
            sync: issue(d, "sync_issue")?,
            sync_blocks: get(d, "sync_blocks")?.unwrap_or(0),
            range_blocks: get(d, "range_blocks")?.unwrap_or(0),
            range_flush: get(d, "range_flush")?.unwrap_or(false),
            end_sync: get(d, "end_sync")?.unwrap_or(false),
            close_sync: get(d, "close_sync")?.unwrap_or(false),
            override_sync: get(d, "override_sync")?.unwrap_or(false),
            close_fails: get(d, "close_fails")?.unwrap_or(false),
            null_batch: get(d, "null_batch")?.unwrap_or(0),
            sync_io: get(d, "sync_io")?.unwrap_or(false),
            commit_hook: get(d, "commit_hook")?.unwrap_or(false),
            external: get(d, "external")?.unwrap_or(false),
        },
    })
}

/// How the job's engine issues a trim or a sync (`key`): queued (the default), in_call,
/// in_call_taking, drained.
fn issue(d: &Bound<'_, PyDict>, key: &str) -> PyResult<ssdsim::fiojob::sync_ops::Issue> {
    match get::<String>(d, key)? {
        None => Ok(Default::default()),
        Some(x) => ssdsim::fiojob::sync_ops::Issue::parse(&x)
            .ok_or_else(|| verr(format!("fio job: {key} {x}: unknown"))),
    }
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
    let mut empty = 0;
    while dirs.len() < n && empty < 2 {
        match s.next_io() {
            Some(r) => {
                empty = 0;
                dirs.push(r.dir as u8);
                offs.push(r.offset);
                lens.push(r.len);
            }
            None => {
                empty += 1; // the pass is over: the next one, as fio's next loop
                s.new_pass(spec.randrepeat);
            }
        }
    }
    Ok((dirs, offs, lens))
}

/// The job's checks (JobSpec::check) for a drive of `user_bytes`: the error, or None.
#[pyfunction]
pub(crate) fn fiojob_check(job: &Bound<'_, PyDict>, user_bytes: u64) -> PyResult<Option<String>> {
    Ok(fiojob_spec(job)?.check(user_bytes).err())
}

fn stat_dict<'py>(py: Python<'py>, s: &IoStat) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("min", s.min)?;
    d.set_item("max", s.max)?;
    d.set_item("samples", s.samples)?;
    d.set_item("mean", s.mean)?;
    d.set_item("s", s.s)?;
    Ok(d)
}

fn plat_dict<'py>(py: Python<'py>, h: &Plat) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let n = h.n as f64;
    d.set_item("ios", h.n)?;
    d.set_item("min_ns", if h.n > 0 { h.min } else { 0 })?;
    d.set_item("max_ns", h.max)?;
    d.set_item("mean_ns", h.mean())?;
    let var = if h.n > 1 {
        ((h.sumsq - n * h.mean() * h.mean()) / (n - 1.0)).max(0.0)
    } else {
        0.0
    };
    d.set_item("stddev_ns", var.sqrt())?;
    // the same in us, with fio's percentiles, as the drive's latency dicts give them
    d.set_item("min_us", if h.n > 0 { h.min as f64 / 1e3 } else { 0.0 })?;
    d.set_item("mean_us", h.mean() / 1e3)?;
    d.set_item("max_us", h.max as f64 / 1e3)?;
    for (k, q) in crate::PERCENTILES {
        d.set_item(k, h.quantile(q) as f64 / 1e3)?;
    }
    let nz = h.nonzero();
    let idx: Vec<u32> = nz.iter().map(|x| x.0).collect();
    let counts: Vec<u64> = nz.iter().map(|x| x.1).collect();
    d.set_item("bins", idx.into_pyarray(py))?;
    d.set_item("counts", counts.into_pyarray(py))?;
    Ok(d)
}

/// A job's figures for Python (ssdlab.fioformat.json_write reads them).
pub(crate) fn job_dict<'py>(py: Python<'py>, j: &JobOut) -> PyResult<Bound<'py, PyDict>> {
    let jd = PyDict::new(py);
    for (i, name) in ["read", "write", "trim"].iter().enumerate() {
        let d = &j.dirs[i];
        let dd = PyDict::new(py);
        dd.set_item("ios", d.ios)?;
        dd.set_item("bytes", d.bytes)?;
        dd.set_item("unwritten_ios", d.unwritten)?;
        dd.set_item("runtime_ns", d.runtime_ns)?;
        let mut bs = d.bs_counts.clone();
        bs.sort();
        dd.set_item("bs", bs)?;
        dd.set_item("lat", plat_dict(py, &d.lat)?)?;
        dd.set_item("bw_stat", stat_dict(py, &j.bw_stat[i])?)?;
        dd.set_item("iops_stat", stat_dict(py, &j.iops_stat[i])?)?;
        jd.set_item(*name, dd)?;
    }
    jd.set_item("start_s", j.start_ns as f64 / 1e9)?;
    jd.set_item("end_s", j.end_ns as f64 / 1e9)?;
    jd.set_item("ss_attained", j.ss_attained)?;
    jd.set_item("issued", j.issued)?;
    jd.set_item("zone_resets", j.zone_resets)?;
    if j.close_failed {
        jd.set_item("close_failed", true)?;
    }
    if let Some((dir, rate, iops)) = j.rate_min_failed {
        jd.set_item("rate_min_failed", (dir, rate, iops))?;
    }
    jd.set_item("lat_buckets", j.lat_buckets.to_vec())?;
    jd.set_item("sync", plat_dict(py, &j.sync)?)?;
    jd.set_item("sync_ranges", j.sync_ranges)?;
    let dp = PyDict::new(py);
    dp.set_item("level", j.depths.level.to_vec())?;
    dp.set_item("submit", j.depths.submit.to_vec())?;
    dp.set_item("complete", j.depths.complete.to_vec())?;
    jd.set_item("depths", dp)?;
    let col = |f: &dyn Fn(&ssdsim::fiojob::logs::LogEntry) -> u64| -> Vec<u64> { j.log.iter().map(f).collect() };
    let log = PyDict::new(py);
    log.set_item("t_ms", col(&|x| x.0).into_pyarray(py))?;
    log.set_item("dir", col(&|x| x.1 as u64).into_pyarray(py))?;
    log.set_item("kind", col(&|x| x.2 as u64).into_pyarray(py))?;
    log.set_item("value", col(&|x| x.3).into_pyarray(py))?;
    jd.set_item("log", log)?;
    let hist = PyList::empty(py);
    for (t, d, bs, bins) in &j.hist_log {
        let idx: Vec<u32> = bins.iter().map(|b| b.0 as u32).collect();
        let n: Vec<u64> = bins.iter().map(|b| b.1 as u64).collect();
        hist.append((*t, *d, *bs, idx, n))?;
    }
    jd.set_item("hist_log", hist)?;
    jd.set_item("log_truncated", j.log_truncated)?;
    Ok(jd)
}
