//! nbdkit plugin exporting a simulated drive in real time (`ssdlab serve`):
//!
//!   nbdkit target/release/libssdsim_nbd.so profile=P.toml [set=key=value ...] seed=42 \
//!          data=FILE stats=STATS.jsonl [interval=1.0]
//!
//! Each request is submitted to an `ssdsim::Session` at its arrival on the virtual clock,
//! which runs with the wall clock from the start; its data goes to the backing file (sparse:
//! unwritten blocks read as zeros; a trim punches a hole); the reply leaves when the
//! simulator says the drive completes it (data.rs: how the file is read and written). A reply that is ready only after its simulated
//! completion has passed is *late* (this process could not keep up): counted with its lag,
//! never hidden. Once an interval a sampler thread lets idle time reach the simulator and
//! appends the drive's counters and the interval's lag figures to the stats file (one JSON
//! object a line); unloading appends a final line with the whole session's figures.

mod data;

use data::Data;
use nbdkit::*;
use ssdsim::{Op, Session};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Config {
    profile: Option<String>,
    sets: Vec<(String, String)>,
    seed: u64,
    data: Option<String>,
    stats: Option<String>,
    interval_s: f64,
}

struct Served {
    session: Mutex<Session>,
    data: Data,
    size: u64,
    /// Virtual ns at `w0`: virtual time = v0 + wall time since w0.
    v0: u64,
    w0: Instant,
    lag: Mutex<(Lag, Lag)>, // (this interval, whole session)
    stats: Mutex<File>,
    interval: Duration,
}

/// Lag of replies behind their simulated completion (log2 buckets of microseconds).
#[derive(Clone, Default)]
struct Lag {
    requests: u64,
    late: u64,
    sum_us: f64,
    max_us: f64,
    late_sum_us: f64,
    late_max_us: f64,
    hist: [u64; 32],
}

impl Lag {
    fn add(&mut self, us: f64, late: bool) {
        self.requests += 1;
        self.sum_us += us;
        self.max_us = self.max_us.max(us);
        self.hist[(64 - (us as u64).leading_zeros() as usize).min(31)] += 1;
        if late {
            self.late += 1;
            self.late_sum_us += us;
            self.late_max_us = self.late_max_us.max(us);
        }
    }

    /// Upper bound of the bucket holding quantile `q` (us).
    fn quantile(&self, q: f64) -> f64 {
        let mut acc = 0;
        for (k, c) in self.hist.iter().enumerate() {
            acc += c;
            if acc > 0 && acc as f64 >= q * self.requests as f64 {
                return (1u64 << k) as f64;
            }
        }
        0.0
    }

    fn json(&self, prefix: &str) -> String {
        let n = self.requests.max(1) as f64;
        let late_n = self.late.max(1) as f64;
        format!(
            "\"{prefix}requests\":{},\"{prefix}late\":{},\"{prefix}lag_mean_us\":{},\"{prefix}lag_p99_us\":{},\
             \"{prefix}lag_max_us\":{},\"{prefix}late_lag_mean_us\":{},\"{prefix}late_lag_max_us\":{}",
            self.requests,
            self.late,
            num(self.sum_us / n),
            num(self.quantile(0.99)),
            num(self.max_us),
            num(self.late_sum_us / late_n),
            num(self.late_max_us)
        )
    }
}

/// A JSON number (NaN and infinities as null).
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".into()
    }
}

/// Bytes of request data the drive holds at once (reads and writes waiting for their
/// simulated completion). nbdkit reads a request whole before the drive sees it, and a
/// paced request keeps its buffer until its reply: without a budget, clients pipelining
/// large writes on many connections hold gigabytes. A request over the budget is answered
/// at once with ENOMEM (its buffer freed), never queued; ssdlab's own tests hold a few MiB.
const IN_FLIGHT_MAX: u64 = 256 << 20;
static IN_FLIGHT: AtomicU64 = AtomicU64::new(0);

/// A request's share of the budget, given back when it is answered.
struct Held(u64);

impl Held {
    fn take(n: u64) -> Result<Held> {
        let before = IN_FLIGHT.fetch_add(n, Ordering::SeqCst);
        if before > 0 && before + n > IN_FLIGHT_MAX {
            IN_FLIGHT.fetch_sub(n, Ordering::SeqCst);
            return Err(Error::new(libc::ENOMEM, "ssdlab: too much request data in flight; wait for replies"));
        }
        Ok(Held(n))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(self.0, Ordering::SeqCst);
    }
}

static CONFIG: Mutex<Option<Config>> = Mutex::new(None);
static SERVED: OnceLock<Served> = OnceLock::new();

fn err(msg: impl ToString) -> Error {
    Error::new(libc::EINVAL, msg.to_string())
}

fn served() -> Result<&'static Served> {
    SERVED.get().ok_or_else(|| err("ssdlab: the drive is not ready"))
}

thread_local! {
    /// nbdkit's worker threads get a 1 ns timer slack on first use (the default 50 us
    /// would pad every paced reply).
    static SLACK: () = unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    };
}

/// The last stretch of a wait spins (yielding) instead of sleeping: a sleep and its
/// wake-up cost tens of microseconds of scheduling on a busy machine (40, 100 and 150 us
/// measured: 100 is a middle; the spread between runs here is as large as the effect).
const SPIN: Duration = Duration::from_micros(SPIN_US);
const SPIN_US: u64 = 100;

fn wait_until(target: Instant) {
    let now = Instant::now();
    if target > now + SPIN {
        std::thread::sleep(target - now - SPIN);
    }
    while Instant::now() < target {
        std::thread::yield_now();
    }
}

impl Served {
    fn vnow(&self) -> u64 {
        self.v0 + self.w0.elapsed().as_nanos() as u64
    }

    fn submit(&self, op: Op, offset: u64, length: u64) -> Result<u64> {
        let mut s = self.session.lock().unwrap();
        let at = self.vnow();
        s.submit(op, offset, length, at).map_err(err)
    }

    /// Wait until the simulated completion `done` (virtual ns), then count the lag.
    fn complete(&self, done: u64) {
        SLACK.with(|_| ());
        let target = self.w0 + Duration::from_nanos(done.saturating_sub(self.v0));
        let now = Instant::now();
        let late = now >= target;
        if !late {
            wait_until(target);
        }
        let us = Instant::now().saturating_duration_since(target).as_secs_f64() * 1e6;
        let mut l = self.lag.lock().unwrap();
        l.0.add(us, late);
        l.1.add(us, late);
    }

    /// One stats line: the drive's counters now, the lag since the last line (`i_`
    /// prefix), and at the end the whole session's lag.
    fn sample(&self, last: bool) {
        let counters = {
            let mut s = self.session.lock().unwrap();
            if !last {
                let _ = s.advance(self.vnow());
            }
            s.counters()
        };
        let (interval, all) = {
            let mut l = self.lag.lock().unwrap();
            (std::mem::take(&mut l.0), l.1.clone())
        };
        // unix_s: lets a fio run on the export line its series up with these rows
        let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let mut line = format!("{{\"t_s\":{},\"unix_s\":{}", num(self.w0.elapsed().as_secs_f64()), num(unix));
        for (k, v) in counters {
            line += &format!(",\"{k}\":{}", num(v));
        }
        line += ",";
        line += &interval.json("i_");
        if last {
            line += ",\"final\":true,";
            line += &all.json("");
        }
        line += "}\n";
        let mut f = self.stats.lock().unwrap();
        let _ = f.write_all(line.as_bytes());
        let _ = f.flush();
    }
}

#[derive(Default)]
struct Drive {
    _h: u8,
}

impl Server for Drive {
    fn name() -> &'static str {
        "ssdlab"
    }

    fn description() -> Option<&'static str> {
        Some("ssdlab simulated drive, paced in real time")
    }

    fn config(key: &str, value: &str) -> Result<()> {
        let mut g = CONFIG.lock().unwrap();
        let c = g.get_or_insert_with(|| Config { interval_s: 1.0, seed: 42, ..Default::default() });
        match key {
            "profile" => c.profile = Some(value.into()),
            "set" => {
                let (k, v) = value.split_once('=').ok_or_else(|| err(format!("set={value}: expected key=value")))?;
                c.sets.push((k.trim().into(), v.trim().into()));
            }
            "seed" => c.seed = value.parse().map_err(|_| err(format!("seed={value}: not an integer")))?,
            "data" => c.data = Some(value.into()),
            "stats" => c.stats = Some(value.into()),
            "interval" => {
                c.interval_s = value.parse().ok().filter(|x: &f64| *x >= 0.01).ok_or_else(|| err(format!("interval={value}: seconds >= 0.01")))?
            }
            _ => return Err(err(format!("unknown parameter {key}: profile, set, seed, data, stats, interval"))),
        }
        Ok(())
    }

    fn config_complete() -> Result<()> {
        let g = CONFIG.lock().unwrap();
        let c = g.as_ref().ok_or_else(|| err("give profile=, data= and stats="))?;
        for (k, v) in [("profile", &c.profile), ("data", &c.data), ("stats", &c.stats)] {
            if v.is_none() {
                return Err(err(format!("{k}= missing")));
            }
        }
        Ok(())
    }

    fn thread_model() -> Result<ThreadModel> {
        Ok(ThreadModel::Parallel)
    }

    fn get_ready() -> Result<()> {
        let c = CONFIG.lock().unwrap().take().ok_or_else(|| err("not configured"))?;
        let path = c.profile.unwrap();
        let text = std::fs::read_to_string(&path).map_err(|e| err(format!("profile {path}: {e}")))?;
        let p = ssdsim::load_profile(&text, &c.sets).map_err(err)?;
        ssdsim::ftl::footprint::check(&p).map_err(err)?;
        let session = Session::new(ssdsim::Drive::new(p, c.seed));
        let size = session.user_bytes();
        let data_path = c.data.unwrap();
        let data = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&data_path)
            .map_err(|e| err(format!("data {data_path}: {e}")))?;
        if data.metadata()?.len() < size {
            data.set_len(size)?; // sparse: unwritten blocks read as zeros
        }
        let stats_path = c.stats.unwrap();
        let stats = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&stats_path)
            .map_err(|e| err(format!("stats {stats_path}: {e}")))?;
        let v0 = session.now();
        let s = Served {
            session: Mutex::new(session),
            data: Data::new(data, size),
            size,
            v0,
            w0: Instant::now(),
            lag: Mutex::new(Default::default()),
            stats: Mutex::new(stats),
            interval: Duration::from_secs_f64(c.interval_s),
        };
        SERVED.set(s).map_err(|_| err("get_ready called twice"))?;
        Ok(())
    }

    fn after_fork() -> Result<()> {
        std::thread::Builder::new()
            .name("ssdlab-sampler".into())
            .spawn(|| {
                let s = served().unwrap();
                let mut n = 1u32;
                loop {
                    let next = s.w0 + s.interval * n;
                    let now = Instant::now();
                    if next > now {
                        std::thread::sleep(next - now);
                    }
                    s.sample(false);
                    n += 1;
                }
            })
            .map_err(|e| err(format!("sampler thread: {e}")))?;
        Ok(())
    }

    fn unload() {
        if let Some(s) = SERVED.get() {
            s.sample(true);
        }
    }

    fn open(_readonly: bool) -> Result<Box<dyn Server>> {
        Ok(Box::<Drive>::default())
    }

    fn get_size(&self) -> Result<i64> {
        Ok(served()?.size as i64)
    }

    fn can_write(&self) -> Result<bool> {
        Ok(true)
    }

    fn can_flush(&self) -> Result<bool> {
        Ok(true)
    }

    fn can_trim(&self) -> Result<bool> {
        Ok(true)
    }

    fn can_fua(&self) -> Result<FuaFlags> {
        Ok(FuaFlags::Emulate) // a FUA write = the write, then a flush
    }

    fn can_multi_conn(&self) -> Result<bool> {
        Ok(true)
    }

    fn is_rotational(&self) -> Result<bool> {
        Ok(false)
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        let s = served()?;
        let _held = Held::take(buf.len() as u64)?;
        let done = s.submit(Op::Read, offset, buf.len() as u64)?;
        s.data.read_at(buf, offset)?;
        s.complete(done);
        Ok(())
    }

    fn write_at(&self, buf: &[u8], offset: u64, _flags: Flags) -> Result<()> {
        let s = served()?;
        let _held = Held::take(buf.len() as u64)?;
        let done = s.submit(Op::Write, offset, buf.len() as u64)?;
        s.data.write_at(buf, offset)?;
        s.complete(done);
        Ok(())
    }

    fn trim(&self, count: u32, offset: u64, _flags: Flags) -> Result<()> {
        let s = served()?;
        let done = s.submit(Op::Trim, offset, count as u64)?;
        // Trimmed blocks read as zeros where the filesystem can punch holes (otherwise the
        // old data stays, which NBD allows).
        s.data.punch(offset, count as u64);
        s.complete(done);
        Ok(())
    }

    fn can_zero(&self) -> Result<bool> {
        Ok(true)
    }

    /// Write zeroes. With MAY_TRIM (an NVMe Format, `blkdiscard -z`, a Write Zeroes with
    /// deallocate) the drive unmaps the range, as a trim does; otherwise it is a write of
    /// zeroes. Either way the range reads as zeroes afterwards.
    fn zero(&self, count: u32, offset: u64, flags: Flags) -> Result<()> {
        let s = served()?;
        let unmap = flags.contains(Flags::MAY_TRIM);
        let done = s.submit(if unmap { Op::Trim } else { Op::Write }, offset, count as u64)?;
        if !s.data.punch(offset, count as u64) {
            // in pieces: a zero request carries no data but may name 4 GiB
            let zeros = vec![0u8; (count as usize).min(1 << 20)];
            let mut at = 0u64;
            while at < count as u64 {
                let n = (count as u64 - at).min(zeros.len() as u64) as usize;
                s.data.write_at(&zeros[..n], offset + at)?;
                at += n as u64;
            }
        }
        s.complete(done);
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        let s = served()?;
        let done = s.submit(Op::Flush, 0, 0)?;
        s.complete(done);
        Ok(())
    }
}

plugin!(Drive { config, config_complete, thread_model, get_ready, after_fork, unload, write_at, can_write, can_flush, flush, can_trim, trim, can_zero, zero, can_fua, can_multi_conn, is_rotational });
