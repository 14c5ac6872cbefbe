//! `ssdlab._sim.Session`: a drive served one request at a time (the NBD export).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use ssdsim::Drive as SimDrive;
use std::sync::Mutex;

use crate::{info_dict, load_profile, verr};

/// A drive served one request at a time in open-ended virtual time (the NBD export).
#[pyclass(module = "ssdlab._sim")]
pub(crate) struct Session {
    inner: Mutex<ssdsim::Session>,
}

#[pymethods]
impl Session {
    #[new]
    #[pyo3(signature = (profile, overrides=None, seed=42))]
    fn new(
        profile: &Bound<'_, PyAny>,
        overrides: Option<&Bound<'_, PyAny>>,
        seed: u64,
    ) -> PyResult<Self> {
        let d = SimDrive::new(load_profile(profile, overrides)?, seed);
        Ok(Session {
            inner: Mutex::new(ssdsim::Session::new(d)),
        })
    }

    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        info_dict(py, &self.inner.lock().unwrap().drive)
    }

    /// Bytes a client may address (whole 4 KiB slots).
    #[getter]
    fn user_bytes(&self) -> u64 {
        self.inner.lock().unwrap().user_bytes()
    }

    /// Latest virtual time seen (ns).
    fn now(&self) -> u64 {
        self.inner.lock().unwrap().now()
    }

    /// One request arriving at `at_ns`; returns its completion (virtual ns). `op`: read,
    /// write, trim or flush (flush ignores offset and length).
    fn submit(&self, op: &str, offset: u64, length: u64, at_ns: u64) -> PyResult<u64> {
        let op = match op {
            "read" => ssdsim::Op::Read,
            "write" => ssdsim::Op::Write,
            "trim" => ssdsim::Op::Trim,
            "flush" => ssdsim::Op::Flush,
            o => {
                return Err(verr(format!(
                    "op '{o}': must be read, write, trim or flush"
                )))
            }
        };
        let mut s = self.inner.lock().unwrap();
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.submit(op, offset, length, at_ns)
        }))
        .map_err(|_| {
            verr("simulator internal error (panic); please report with the profile and requests")
        })?
        .map_err(verr)
    }

    /// Idle background work up to `t_ns` (no request).
    fn advance(&self, t_ns: u64) -> PyResult<()> {
        self.inner.lock().unwrap().advance(t_ns).map_err(verr)
    }

    /// The drive's counters now (see docs/sim-api.md).
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.inner.lock().unwrap().counters() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
}

