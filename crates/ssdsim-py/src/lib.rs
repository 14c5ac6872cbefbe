//! `ssdlab._sim`: a thin PyO3 binding over the ssdsim crate. Profiles in as TOML text or
//! dicts, phases in as dicts, results out as numpy arrays and plain dicts. Every error is
//! a ValueError with one line; the GIL is released while simulating.

use numpy::IntoPyArray;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use ssdsim::util::stats::{Row, SERIES};
use ssdsim::{Drive as SimDrive, PhaseKind, PhaseResult, PhaseSpec};
use std::sync::Mutex;

mod fiojob;
mod session;
mod trace_csv;
use session::Session;

fn verr(msg: impl ToString) -> PyErr {
    PyValueError::new_err(msg.to_string())
}

/// Python value -> TOML value (dict profiles and typed overrides).
fn to_toml(v: &Bound<'_, PyAny>, path: &str) -> PyResult<toml::Value> {
    if let Ok(d) = v.downcast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, val) in d.iter() {
            let key: String = k
                .extract()
                .map_err(|_| verr(format!("{path}: keys must be strings")))?;
            let sub = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            t.insert(key, to_toml(&val, &sub)?);
        }
        return Ok(toml::Value::Table(t));
    }
    if let Ok(b) = v.extract::<bool>() {
        return Ok(toml::Value::Boolean(b));
    }
    if let Ok(i) = v.extract::<i64>() {
        return Ok(toml::Value::Integer(i));
    }
    if let Ok(f) = v.extract::<f64>() {
        return Ok(toml::Value::Float(f));
    }
    if let Ok(s) = v.extract::<String>() {
        return Ok(toml::Value::String(s));
    }
    if let Ok(l) = v.downcast::<PyList>() {
        let items: PyResult<Vec<_>> = l.iter().map(|x| to_toml(&x, path)).collect();
        return Ok(toml::Value::Array(items?));
    }
    Err(verr(format!(
        "{path}: unsupported value type {}",
        v.get_type().name()?
    )))
}

fn parse_overrides(o: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(o) = o else { return Ok(vec![]) };
    if o.is_none() {
        return Ok(vec![]);
    }
    if let Ok(d) = o.downcast::<PyDict>() {
        return d
            .iter()
            .map(|(k, v)| {
                let key = k.extract::<String>()?;
                // a str is the value's text, as in "key=value"; anything else is written as
                // TOML (Python's str(True) is "True", which TOML does not read as a boolean)
                let text = match v.extract::<String>() {
                    Ok(s) => s,
                    Err(_) => to_toml(&v, &key)?.to_string(),
                };
                Ok((key, text))
            })
            .collect();
    }
    let mut out = vec![];
    for item in o.try_iter()? {
        let s: String = item?.extract()?;
        let Some((k, v)) = s.split_once('=') else {
            return Err(verr(format!(
                "override '{s}': expected key=value, e.g. nand.channels=8"
            )));
        };
        out.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(out)
}

fn get<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => v.extract::<T>().map(Some).map_err(|_| {
            verr(format!(
                "phase.{key} = {}: wrong type",
                v.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        }),
        _ => Ok(None),
    }
}

fn parse_phase(d: &Bound<'_, PyDict>) -> PyResult<PhaseSpec> {
    let kind: String =
        get(d, "kind")?.ok_or_else(|| verr("phase.kind missing: one of purge, io, trim, idle"))?;
    let kind = match kind.as_str() {
        "purge" => PhaseKind::Purge,
        "io" => PhaseKind::Io,
        "trim" => PhaseKind::Trim,
        "idle" => PhaseKind::Idle,
        k => {
            return Err(verr(format!(
                "phase.kind = '{k}': must be purge, io, trim or idle"
            )))
        }
    };
    let mut s = PhaseSpec::new(kind);
    let nonneg = |k: &str, v: i64| -> PyResult<u64> {
        if v < 0 {
            Err(verr(format!("phase.{k} = {v}: must be >= 0")))
        } else {
            Ok(v as u64)
        }
    };
    if let Some(v) = get::<i64>(d, "read_pct")? {
        s.read_pct = nonneg("read_pct", v)? as u32;
    }
    if let Some(p) = get::<String>(d, "pattern")? {
        s.random = match p.as_str() {
            "seq" => false,
            "rand" => true,
            _ => return Err(verr(format!("phase.pattern = '{p}': must be seq or rand"))),
        };
    }
    if let Some(v) = get::<i64>(d, "block_size")? {
        s.block_size = nonneg("block_size", v)?;
    }
    if let Some(v) = get::<i64>(d, "queue_depth")? {
        s.queue_depth = nonneg("queue_depth", v)?.min(u32::MAX as u64) as u32;
    }
    if let Some(v) = get::<i64>(d, "jobs")? {
        s.jobs = nonneg("jobs", v)?.min(u32::MAX as u64) as u32;
    }
    if let Some(v) = get::<i64>(d, "offset")? {
        s.offset = nonneg("offset", v)?;
    }
    if let Some(v) = get::<i64>(d, "length")? {
        s.length = nonneg("length", v)?;
        if s.length == 0 {
            return Err(verr("phase.length = 0: must be > 0"));
        }
    }
    if let Some(v) = get::<i64>(d, "stop_bytes")? {
        s.stop_bytes = Some(nonneg("stop_bytes", v)?);
    }
    s.stop_seconds = get::<f64>(d, "stop_seconds")?;
    s.seconds = get::<f64>(d, "seconds")?;
    s.until_quiet = get::<bool>(d, "until_quiet")?.unwrap_or(false);
    if let Some(v) = get::<f64>(d, "sample_interval_s")? {
        s.sample_interval_s = v;
    }
    if let Some(v) = get::<i64>(d, "segment_bytes")? {
        s.segment_bytes = nonneg("segment_bytes", v)?;
    }
    Ok(s)
}

fn row_dict<'py>(py: Python<'py>, r: &Row) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in SERIES.iter().zip(r.iter()) {
        d.set_item(*k, *v)?;
    }
    Ok(d)
}

fn result_dict<'py>(py: Python<'py>, r: PhaseResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let series = PyDict::new(py);
    for (i, k) in SERIES.iter().enumerate() {
        let col: Vec<f64> = r.rows.iter().map(|row| row[i]).collect();
        series.set_item(*k, col.into_pyarray(py))?;
    }
    out.set_item("series", series)?;
    let seg = PyDict::new(py);
    for (i, k) in ["gb", "mbps", "t_s"].iter().enumerate() {
        let col: Vec<f64> = r.segments.iter().map(|s| s[i]).collect();
        seg.set_item(*k, col.into_pyarray(py))?;
    }
    out.set_item("segments", seg)?;
    let lat = hist_dict(py, &r.hist)?;
    out.set_item("latency", lat)?;
    let totals = PyDict::new(py);
    for (k, v) in &r.totals {
        totals.set_item(*k, *v)?;
    }
    out.set_item("totals", totals)?;
    out.set_item("interrupted", r.interrupted)?;
    Ok(out)
}

/// A profile (TOML text or dict) with overrides applied, validated and checked to fit.
fn load_profile(
    profile: &Bound<'_, PyAny>,
    overrides: Option<&Bound<'_, PyAny>>,
) -> PyResult<ssdsim::Profile> {
    let ov = parse_overrides(overrides)?;
    let p = if let Ok(text) = profile.downcast::<PyString>() {
        ssdsim::load_profile(&text.to_string(), &ov)
    } else {
        let mut v = to_toml(profile, "")?;
        let mut r = Ok(());
        for (k, val) in &ov {
            if r.is_ok() {
                r = ssdsim::profile::apply_override(&mut v, k, val);
            }
        }
        r.and_then(|_| ssdsim::profile_from_value(v))
    }
    .map_err(verr)?;
    ssdsim::ftl::footprint::check(&p).map_err(verr)?; // before the tables are allocated
    Ok(p)
}

/// A simulated drive. State persists across phases (history is the point).
#[pyclass(module = "ssdlab._sim")]
struct Drive {
    inner: Mutex<SimDrive>,
}

/// A drive's whole state at one moment (`Drive.snapshot`, `Drive.into_state`): tables,
/// timelines, counters, virtual time and phase count. `Drive.from_state` gives a drive that
/// runs on from it exactly as the drive it was taken from would have; the state itself
/// never changes, so one serves any number of drives, until one takes it (`take=True`,
/// without a copy: the state is then empty).
#[pyclass(module = "ssdlab._sim")]
struct DriveState {
    inner: Mutex<Option<SimDrive>>,
}

fn taken() -> PyErr {
    verr("this drive state was taken by Drive.from_state(state, take=True)")
}

#[pymethods]
impl DriveState {
    /// Bytes of memory the drive's tables take (what each drive loaded from it costs).
    fn table_bytes(&self) -> PyResult<u64> {
        let g = self.inner.lock().unwrap();
        Ok(ssdsim::ftl::footprint::table_bytes(&g.as_ref().ok_or_else(taken)?.profile))
    }
}

#[pymethods]
impl Drive {
    #[new]
    #[pyo3(signature = (profile, overrides=None, seed=42))]
    fn new(
        profile: &Bound<'_, PyAny>,
        overrides: Option<&Bound<'_, PyAny>>,
        seed: u64,
    ) -> PyResult<Self> {
        Ok(Drive {
            inner: Mutex::new(SimDrive::new(load_profile(profile, overrides)?, seed)),
        })
    }

    /// Check a profile text with overrides as `Drive(...)` would, without building the
    /// drive; returns the bytes its tables would take (sweeps check every grid point first).
    #[staticmethod]
    #[pyo3(signature = (profile, overrides=None))]
    fn check(profile: &str, overrides: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
        let ov = parse_overrides(overrides)?;
        let p = ssdsim::load_profile(profile, &ov).map_err(verr)?;
        ssdsim::ftl::footprint::check(&p).map_err(verr)?;
        Ok(ssdsim::ftl::footprint::table_bytes(&p))
    }

    /// `info()` of the drive a profile text with overrides describes, without building it
    /// (its tables take GBs for a TB drive): `ssdlab drives` lists every profile this way.
    #[staticmethod]
    #[pyo3(signature = (profile, overrides=None))]
    fn describe<'py>(
        py: Python<'py>,
        profile: &str,
        overrides: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let ov = parse_overrides(overrides)?;
        let p = ssdsim::load_profile(profile, &ov).map_err(verr)?;
        let geo = ssdsim::nand::Geometry::from_profile(&p);
        let user = (p.user_capacity_gb * 1e9) as u64 / ssdsim::nand::SLOT_BYTES * ssdsim::nand::SLOT_BYTES;
        profile_info(py, &p, &geo, user)
    }

    /// The drive's state now (a copy), to start other drives from (`from_state`).
    fn snapshot(&self, py: Python<'_>) -> DriveState {
        py.allow_threads(|| DriveState {
            inner: Mutex::new(Some(self.inner.lock().unwrap().clone())),
        })
    }

    /// The drive's state now, without a copy: this drive starts again as a new one (its
    /// profile and seed, nothing written).
    #[allow(clippy::wrong_self_convention)] // the Python name; the drive is behind a lock
    fn into_state(&self) -> DriveState {
        let mut d = self.inner.lock().unwrap();
        let fresh = SimDrive::new(d.profile.clone(), d.seed());
        DriveState {
            inner: Mutex::new(Some(std::mem::replace(&mut *d, fresh))),
        }
    }

    /// A drive in `state`: it runs on exactly as the drive the state was taken from. With
    /// `take`, the drive takes the state itself (no copy) and the state is left empty.
    #[staticmethod]
    #[pyo3(signature = (state, take=false))]
    fn from_state(py: Python<'_>, state: &DriveState, take: bool) -> PyResult<Drive> {
        let mut g = state.inner.lock().unwrap();
        let d = if take {
            g.take().ok_or_else(taken)?
        } else {
            let s = g.as_ref().ok_or_else(taken)?;
            py.allow_threads(|| s.clone())
        };
        Ok(Drive {
            inner: Mutex::new(d),
        })
    }

    /// The full resolved profile as a dict.
    fn profile<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let d = self.inner.lock().unwrap();
        let text = toml::to_string(&d.profile).map_err(verr)?;
        let tomllib = py.import("tomllib")?;
        tomllib.call_method1("loads", (text,))
    }

    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        info_dict(py, &self.inner.lock().unwrap())
    }

    /// Run one phase (a dict, see docs/sim-api.md). Streams rows to `on_sample`.
    #[pyo3(signature = (phase, on_sample=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        phase: &Bound<'py, PyDict>,
        on_sample: Option<PyObject>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let spec = parse_phase(phase)?;
        let mut err: Option<PyErr> = None;
        let res = {
            py.allow_threads(|| {
                let mut d = self.inner.lock().unwrap();
                let mut cb = |row: &Row| sample(row, &on_sample, &mut err);
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| d.run(&spec, &mut cb)))
            })
        };
        let res =
            match res {
                Ok(r) => r.map_err(verr)?,
                Err(_) => return Err(verr(
                    "simulator internal error (panic); please report with the profile and phase",
                )),
            };
        let interrupted = res.interrupted;
        let out = result_dict(py, res)?;
        raise_if_stopped(py, interrupted, err, &out)?;
        Ok(out)
    }

    /// Run a fio job file's jobs (dicts, python/ssdlab/fiojob/compile.py) from the drive's
    /// current time, all at once (waves one after another). Returns a phase result plus
    /// `jobs`: per job, per direction (read, write, trim) ios, bytes, latency, block sizes.
    /// `log_dir`: where the jobs' logs of an entry per I/O are written as the run goes.
    #[pyo3(signature = (jobs, sample_interval_s=1.0, segment_bytes=1_000_000_000, on_sample=None, log_dir=None))]
    fn run_fiojob<'py>(
        &self,
        py: Python<'py>,
        jobs: &Bound<'py, PyList>,
        sample_interval_s: f64,
        segment_bytes: u64,
        on_sample: Option<PyObject>,
        log_dir: Option<std::path::PathBuf>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let specs: Vec<ssdsim::fiojob::JobSpec> = jobs
            .iter()
            .map(|j| fiojob::fiojob_spec(j.downcast::<PyDict>()?))
            .collect::<PyResult<_>>()?;
        let mut err: Option<PyErr> = None;
        let res = py.allow_threads(|| {
            let mut d = self.inner.lock().unwrap();
            let mut cb = |row: &Row| sample(row, &on_sample, &mut err);
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                d.run_fiojob(&specs, sample_interval_s, segment_bytes, log_dir.as_deref(), &mut cb)
            }))
        });
        let res =
            match res {
                Ok(r) => r.map_err(verr)?,
                Err(_) => return Err(verr(
                    "simulator internal error (panic); please report with the profile and job file",
                )),
            };
        let interrupted = res.phase.interrupted;
        let out = result_dict(py, res.phase)?;
        let list = PyList::empty(py);
        for j in &res.jobs {
            list.append(fiojob::job_dict(py, j)?)?;
        }
        out.set_item("jobs", list)?;
        raise_if_stopped(py, interrupted, err, &out)?;
        Ok(out)
    }

    /// Replay a trace (numpy arrays: time_ns u64, op u8 0 read/1 write/2 trim/3 flush,
    /// offset and length u64 bytes) from the drive's current time: open loop when
    /// queue_depth is 0 (each I/O at its time), else closed loop at that depth. Returns
    /// a phase result plus `read_latency` and `write_latency` (see docs/sim-api.md).
    #[pyo3(signature = (time_ns, op, offset, length, queue_depth=0, sample_interval_s=1.0, segment_bytes=1_000_000_000, on_sample=None))]
    #[allow(clippy::too_many_arguments)]
    fn replay<'py>(
        &self,
        py: Python<'py>,
        time_ns: numpy::PyReadonlyArray1<'py, u64>,
        op: numpy::PyReadonlyArray1<'py, u8>,
        offset: numpy::PyReadonlyArray1<'py, u64>,
        length: numpy::PyReadonlyArray1<'py, u64>,
        queue_depth: u32,
        sample_interval_s: f64,
        segment_bytes: u64,
        on_sample: Option<PyObject>,
    ) -> PyResult<Bound<'py, PyDict>> {
        use ssdsim::engine::replay::{ReplaySpec, TraceIos};
        let (t, o, off, len) = (
            time_ns.as_slice()?,
            op.as_slice()?,
            offset.as_slice()?,
            length.as_slice()?,
        );
        let ios = TraceIos {
            time_ns: t,
            op: o,
            offset: off,
            length: len,
        };
        let spec = ReplaySpec {
            queue_depth,
            sample_interval_s,
            segment_bytes,
        };
        let mut err: Option<PyErr> = None;
        let res = py.allow_threads(|| {
            let mut d = self.inner.lock().unwrap();
            let mut cb = |row: &Row| sample(row, &on_sample, &mut err);
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                d.replay(&ios, &spec, &mut cb)
            }))
        });
        let res =
            match res {
                Ok(r) => r.map_err(verr)?,
                Err(_) => return Err(verr(
                    "simulator internal error (panic); please report with the profile and trace",
                )),
            };
        let interrupted = res.phase.interrupted;
        let (rh, wh) = (res.read_hist, res.write_hist);
        let out = result_dict(py, res.phase)?;
        out.set_item("read_latency", hist_dict(py, &rh)?)?;
        out.set_item("write_latency", hist_dict(py, &wh)?)?;
        raise_if_stopped(py, interrupted, err, &out)?;
        Ok(out)
    }
}

/// The phase was cut short, or its sample callback met an error (Ctrl-C, an exception of
/// `on_sample`): raise that error with the result as its `partial`. The error is raised even
/// when the phase ran to its end: one met at the phase's last row stops nothing, and a Ctrl-C
/// the handler already took must not be lost (the run would end as if never interrupted).
fn raise_if_stopped<'py>(
    py: Python<'py>,
    interrupted: bool,
    err: Option<PyErr>,
    out: &Bound<'py, PyDict>,
) -> PyResult<()> {
    if !interrupted && err.is_none() {
        return Ok(());
    }
    let e = err.unwrap_or_else(|| PyKeyboardInterrupt::new_err("interrupted"));
    e.value(py).setattr("partial", out)?;
    Err(e)
}

/// A sample row from a running phase or replay (GIL released): checks for Ctrl-C and
/// hands the row to `on_sample`; false (stop) on either's error, kept in `err`.
fn sample(row: &Row, on_sample: &Option<PyObject>, err: &mut Option<PyErr>) -> bool {
    Python::with_gil(|py| {
        if let Err(e) = py.check_signals() {
            *err = Some(e);
            return false;
        }
        if let Some(f) = on_sample {
            if let Err(e) = row_dict(py, row).and_then(|rd| f.call1(py, (rd,))) {
                *err = Some(e);
                return false;
            }
        }
        true
    })
}

/// A latency histogram as the `latency` dict of a result (percentiles, edges, counts).
/// The percentiles every latency dict gives: (key, quantile).
pub(crate) const PERCENTILES: [(&str, f64); 5] = [
    ("p50_us", 0.5),
    ("p90_us", 0.9),
    ("p99_us", 0.99),
    ("p99_9_us", 0.999),
    ("p99_99_us", 0.9999),
];

fn hist_dict<'py>(py: Python<'py>, h: &ssdsim::util::stats::Histogram) -> PyResult<Bound<'py, PyDict>> {
    let lat = PyDict::new(py);
    let us = |ns: f64| ns / 1e3;
    lat.set_item("ios", h.total)?;
    lat.set_item("min_us", if h.total > 0 { us(h.min as f64) } else { 0.0 })?;
    lat.set_item("mean_us", us(h.mean()))?;
    lat.set_item("max_us", us(h.max as f64))?;
    for (k, q) in PERCENTILES {
        lat.set_item(k, us(h.quantile(q)))?;
    }
    let buckets = h.buckets();
    let edges: Vec<f64> = buckets.iter().map(|b| us(b.0 as f64)).collect();
    let counts: Vec<u64> = buckets.iter().map(|b| b.1).collect();
    lat.set_item("edges_us", edges.into_pyarray(py))?;
    lat.set_item("counts", counts.into_pyarray(py))?;
    Ok(lat)
}

fn info_dict<'py>(py: Python<'py>, d: &SimDrive) -> PyResult<Bound<'py, PyDict>> {
    profile_info(py, &d.profile, &d.ftl.nand.geo, d.user_bytes())
}

/// What `info` says of a drive, from its profile and geometry alone.
fn profile_info<'py>(
    py: Python<'py>,
    p: &ssdsim::Profile,
    g: &ssdsim::nand::Geometry,
    user: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let raw = g.raw_bytes();
    let i = PyDict::new(py);
    i.set_item("id", &p.id)?;
    i.set_item("name", &p.name)?;
    i.set_item("user_bytes", user)?;
    i.set_item("raw_bytes", raw)?;
    i.set_item("spare_pct", (raw as f64 / user as f64 - 1.0) * 100.0)?;
    let iface = if p.host.interface == "sata" {
        "SATA 6Gb/s".to_string()
    } else {
        format!("PCIe {}.0 x{}", p.host.pcie_gen, p.host.lanes)
    };
    i.set_item("interface", iface)?;
    i.set_item("link_mbps", ssdsim::host::link_mbps(p))?;
    i.set_item("cell", p.nand.cell.to_uppercase())?;
    i.set_item("channels", g.channels)?;
    i.set_item("dies", g.dies)?;
    i.set_item("planes", g.planes)?;
    i.set_item("page_kib", p.nand.page_kib)?;
    i.set_item("block_mib", g.block_bytes() as f64 / 1048576.0)?;
    i.set_item("mapping", &p.mapping.kind)?;
    i.set_item("slc_static_bytes", (p.slc.static_gb * 1e9) as u64)?;
    i.set_item("slc_dynamic_max_bytes", (p.slc.dynamic_max_gb * 1e9) as u64)?;
    Ok(i)
}

#[pymodule]
fn _sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Drive>()?;
    m.add_class::<DriveState>()?;
    m.add_class::<Session>()?;
    m.add_function(wrap_pyfunction!(fiojob::fiojob_stream, m)?)?;
    m.add_function(wrap_pyfunction!(fiojob::fiojob_check, m)?)?;
    m.add_function(wrap_pyfunction!(trace_csv::plain_csv_arrays, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
