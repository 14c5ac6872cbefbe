//! fio's logs with an entry per I/O (`log_avg_msec=0`, fio's default: stat.c's
//! add_log_sample without averaging, written as iolog.c's flush_samples writes them): every
//! counted completion writes one line to each per-I/O log of its job, `time_ms, value, ddir,
//! bs, [offset, ]prio`. The value: bw the I/O's own rate (bytes x 10^6 / its completion
//! latency in ns, as fio's add_bw_sample), iops 1, lat and clat its latency in ns, slat 0
//! (the simulated host spends no time submitting). The prio column is 0 (no priority class
//! set), `0x0000` with `log_prio`.
//!
//! A job can do hundreds of millions of I/Os, so the lines go to their files as the run goes:
//! each file's lines are kept in a small buffer (a share of `BUFFER_BUDGET` over the run's
//! files) that is appended to the file when full, the file opened only for that (no file
//! stays open: a run of thousands of jobs needs no more descriptors than one). The files are
//! created, new, before the run (never over a file, never through a link).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{JobOut, JobSpec};

/// The log kinds, as the job spec numbers them.
pub const BW: u8 = 0;
pub const IOPS: u8 = 1;
pub const LAT: u8 = 2;
pub const CLAT: u8 = 3;
pub const SLAT: u8 = 4;

/// Bytes of line buffers a run keeps at most over all its per-I/O log files.
pub const BUFFER_BUDGET: usize = 16 << 20;
const MIN_BUFFER: usize = 1 << 10;
const MAX_BUFFER: usize = 256 << 10;

/// A job's per-I/O logs as its spec gives them.
#[derive(Clone, Debug, Default)]
pub struct UnitLogSpec {
    /// (kind, file name, the directions it logs: bit d for direction d).
    pub files: Vec<(u8, String, u8)>,
    /// fio's log_offset (an offset column) and log_prio (the priority in hex).
    pub offset: bool,
    pub prio: bool,
    /// Metadata bytes per 4096-byte block (extended LBA): fio's sizes and offsets count them.
    pub md_bytes: u64,
    /// (kind, ms): a bandwidth or IOPS log fio samples per I/O but averages over `ms`
    /// (log_compression with a log_avg_msec: fio's per_unit_log holds for it).
    pub averaged: Vec<(u8, u64)>,
}

impl UnitLogSpec {
    pub fn has(&self, kind: u8) -> bool {
        self.files.iter().any(|f| f.0 == kind)
    }

    /// The window (ms) of a log of `kind` averaged from per-I/O samples; 0: none.
    pub fn averaged_ms(&self, kind: u8) -> u64 {
        self.averaged
            .iter()
            .find(|a| a.0 == kind)
            .map_or(0, |a| a.1)
    }
}

#[derive(Clone, Debug)]
struct UnitFile {
    kind: u8,
    dirs: u8,
    path: PathBuf,
    buf: Vec<u8>,
}

/// One job's per-I/O log files, being written.
#[derive(Clone, Debug)]
pub struct UnitLog {
    files: Vec<UnitFile>,
    offset: bool,
    prio: bool,
    md_bytes: u64,
    cap: usize,
    /// The first write that failed (the logs stop there).
    pub error: Option<String>,
}

fn open(path: &Path, new: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    if new {
        o.write(true).create_new(true).mode(0o644);
    } else {
        o.append(true);
    }
    o.open(path)
}

impl UnitLog {
    /// Create the job's files in `dir` (each new), each with a line buffer of `cap` bytes.
    pub fn create(spec: &UnitLogSpec, dir: &Path, cap: usize) -> Result<UnitLog, String> {
        let mut files = vec![];
        for (kind, name, dirs) in &spec.files {
            if name.contains('/') || name.is_empty() || name == "." || name == ".." {
                return Err(format!("log file name {name:?}: not a file name"));
            }
            let path = dir.join(name);
            open(&path, true).map_err(|e| format!("{}: {e}", path.display()))?;
            files.push(UnitFile {
                kind: *kind,
                dirs: *dirs,
                path,
                buf: Vec::with_capacity(cap),
            });
        }
        Ok(UnitLog {
            files,
            offset: spec.offset,
            prio: spec.prio,
            md_bytes: spec.md_bytes,
            cap,
            error: None,
        })
    }

    /// Each file's buffer: `BUFFER_BUDGET` shared by the run's `files` files.
    pub fn buffer_bytes(files: usize) -> usize {
        (BUFFER_BUDGET / files.max(1)).clamp(MIN_BUFFER, MAX_BUFFER)
    }

    /// An I/O of `len` bytes at `offset` in direction `d` completed `ms` after the job's
    /// epoch, `lat` ns after it was issued.
    pub fn io(&mut self, ms: u64, d: usize, offset: u64, len: u64, lat: u64) {
        if self.error.is_some() {
            return;
        }
        // extended LBA: fio's bs and offsets count each block's metadata
        let scale = |v: u64| v + v / 4096 * self.md_bytes;
        let (bs, off) = (scale(len), scale(offset));
        for i in 0..self.files.len() {
            let f = &mut self.files[i];
            if f.dirs & (1 << d) == 0 {
                continue;
            }
            let v = match f.kind {
                BW => (bs * 1_000_000).checked_div(lat).unwrap_or(0),
                IOPS => 1,
                SLAT => 0,
                _ => lat,
            };
            let _ = write!(f.buf, "{ms}, {v}, {d}, {bs}, ");
            if self.offset {
                let _ = write!(f.buf, "{off}, ");
            }
            let _ = if self.prio {
                f.buf.write_all(b"0x0000\n")
            } else {
                f.buf.write_all(b"0\n")
            };
            if f.buf.len() + 128 > self.cap {
                self.flush_file(i);
            }
        }
    }

    fn flush_file(&mut self, i: usize) {
        let f = &mut self.files[i];
        if f.buf.is_empty() || self.error.is_some() {
            return;
        }
        let r = open(&f.path, false).and_then(|mut h| h.write_all(&f.buf));
        f.buf.clear();
        if let Err(e) = r {
            self.error = Some(format!("{}: {e}", f.path.display()));
        }
    }

    /// Every line buffered, to its file.
    pub fn flush(&mut self) {
        for i in 0..self.files.len() {
            self.flush_file(i);
        }
    }
}

/// The run's per-I/O log files, created in `dir` before it starts (each job's `unit_log`).
pub fn create_all(specs: &[JobSpec], dir: &Path, outs: &mut [JobOut]) -> Result<(), String> {
    let n: usize = specs.iter().map(|s| s.unit_log.files.len()).sum();
    let cap = UnitLog::buffer_bytes(n);
    for (s, o) in specs.iter().zip(outs.iter_mut()) {
        if !s.unit_log.files.is_empty() {
            o.unit_log = Some(UnitLog::create(&s.unit_log, dir, cap)?);
        }
    }
    Ok(())
}

/// The run's per-I/O log lines still buffered, to their files; the first write that failed.
pub fn finish_all(outs: &mut [JobOut]) -> Result<(), String> {
    for o in outs.iter_mut() {
        if let Some(u) = o.unit_log.as_mut() {
            u.flush();
            if let Some(e) = u.error.take() {
                return Err(format!("writing the log {e}"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(offset: bool) -> UnitLogSpec {
        UnitLogSpec {
            files: vec![
                (BW, "a_bw.1.log".into(), 0b011),
                (IOPS, "a_iops.1.log".into(), 0b111),
                (SLAT, "a_slat.1.log".into(), 0b010),
            ],
            offset,
            prio: false,
            md_bytes: 0,
            averaged: vec![],
        }
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ssdsim-unit-log-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        d
    }

    #[test]
    fn a_line_per_io_in_fios_columns() {
        let d = tmp("cols");
        let mut u = UnitLog::create(&spec(true), &d, 4096).unwrap();
        u.io(7, 0, 8192, 4096, 100_000);
        u.io(9, 1, 0, 8192, 50_000);
        u.flush();
        let bw = std::fs::read_to_string(d.join("a_bw.1.log")).unwrap();
        assert_eq!(bw, "7, 40960, 0, 4096, 8192, 0\n9, 163840, 1, 8192, 0, 0\n");
        let slat = std::fs::read_to_string(d.join("a_slat.1.log")).unwrap();
        assert_eq!(slat, "9, 0, 1, 8192, 0, 0\n"); // its directions only
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn memory_stays_bounded_and_every_line_reaches_the_file() {
        let d = tmp("bound");
        let mut u = UnitLog::create(&spec(false), &d, 1024).unwrap();
        for i in 0..100_000u64 {
            u.io(i / 1000, 0, 0, 4096, 1000);
            assert!(u.files.iter().all(|f| f.buf.len() <= 1024));
        }
        u.flush();
        let iops = std::fs::read_to_string(d.join("a_iops.1.log")).unwrap();
        assert_eq!(iops.lines().count(), 100_000);
        assert!(iops.ends_with("99, 1, 0, 4096, 0\n"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn never_over_a_file() {
        let d = tmp("new");
        std::fs::write(d.join("a_bw.1.log"), "x").unwrap();
        assert!(UnitLog::create(&spec(false), &d, 4096).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
