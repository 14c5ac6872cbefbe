//! The plain CSV trace format read at native speed (python/ssdlab/traces/plain_csv.py owns
//! the format): the lines of the common, well-formed case become four arrays. Anything
//! else (a field the Python parser would read differently or refuse, a limit reached,
//! non-ASCII text) answers None, and the Python parser reads the file and says what is
//! wrong, so every trace gets exactly the result and the error it always got.

use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::buffer::PyBuffer;

const READ: u8 = 0;
const WRITE: u8 = 1;
const TRIM: u8 = 2;
const FLUSH: u8 = 3;

/// What the Python parser checks, from traces/limits.py.
pub struct Limits {
    pub max_line: usize,
    pub max_ios: usize,
    pub max_span_ns: i64,
}

pub struct Columns {
    pub time: usize,
    pub op: usize,
    pub offset: usize,
    pub length: usize,
    /// ns per time unit, bytes per offset and length unit.
    pub time_ns: f64,
    pub offset_unit: u64,
    pub length_unit: u64,
}

/// Parsed I/Os: time (ns on the trace's clock, from the first line), op, offset, length,
/// and the file's line (1-based) each came from: an error found after sorting names it.
#[derive(Default)]
pub struct Parsed {
    pub t: Vec<i64>,
    pub op: Vec<u8>,
    pub off: Vec<i64>,
    pub len: Vec<i64>,
    pub line: Vec<i64>,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c')
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let Some((&f, rest)) = s.split_first() {
        if !is_space(f) {
            break;
        }
        s = rest;
    }
    while let Some((&l, rest)) = s.split_last() {
        if !is_space(l) {
            break;
        }
        s = rest;
    }
    s
}

/// Digits only (what `int()` reads the same way in every case).
fn whole(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u64;
    }
    Some(v)
}

/// What `exact_ns` makes of a time field.
enum Time {
    Ns(i64),
    Other, // not digits and a fraction: read as a float
    Defer, // too long, or 2^63 ns and later: the Python parser's to read (or refuse)
}

/// Digits with an optional fraction, in ns exactly, rounded half to even (what
/// plain_csv.exact_ns gives: a float holds ns since the epoch only to 256 ns).
fn exact_ns(s: &[u8], unit: u64) -> Time {
    let (w, f) = match s.iter().position(|&b| b == b'.') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &s[..0]),
    };
    if (w.is_empty() && f.is_empty()) || !w.iter().chain(f).all(u8::is_ascii_digit) {
        return Time::Other;
    }
    if w.len() > 19 || f.len() > 18 {
        return Time::Defer;
    }
    let digits = |d: &[u8]| d.iter().fold(0u128, |v, &c| v * 10 + (c - b'0') as u128);
    let den = 10u128.pow(f.len() as u32);
    let (mut q, r) = ((digits(f) * unit as u128) / den, (digits(f) * unit as u128) % den);
    q += digits(w) * unit as u128;
    if 2 * r > den || (2 * r == den && q % 2 == 1) {
        q += 1;
    }
    if q > i64::MAX as u128 {
        return Time::Defer;
    }
    Time::Ns(q as i64)
}

/// A plain decimal number, optionally with a fraction and an exponent (what `float()`
/// reads the same way as Rust does: no sign, spaces, underscores, inf or nan).
fn decimal(s: &[u8]) -> Option<f64> {
    if let Some(v) = whole(s) {
        // digits only: the conversion rounds as the decimal parse does (to nearest, ties to
        // even), without its cost
        return Some(v as f64);
    }
    let mut i = 0;
    let digits = |i: &mut usize| {
        let from = *i;
        while *i < s.len() && s[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - from
    };
    let mut n = digits(&mut i);
    if i < s.len() && s[i] == b'.' {
        i += 1;
        n += digits(&mut i);
    }
    if n == 0 {
        return None;
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        i += 1;
        if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return None;
        }
    }
    if i != s.len() {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

fn op_code(s: &[u8]) -> Option<u8> {
    let s = trim(s);
    let mut low = [0u8; 8];
    if s.len() > low.len() {
        return None;
    }
    for (d, c) in low.iter_mut().zip(s) {
        *d = c.to_ascii_lowercase();
    }
    match &low[..s.len()] {
        b"read" | b"r" => Some(READ),
        b"write" | b"w" => Some(WRITE),
        b"trim" | b"t" | b"discard" => Some(TRIM),
        b"flush" | b"f" => Some(FLUSH),
        _ => None,
    }
}

/// How many bytes of `text` are newlines, eight at a time (a byte is one where the
/// word XOR newlines has a zero byte; the carry-free test below finds exactly those).
fn count_newlines(text: &[u8]) -> usize {
    const NL: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let words = text.chunks_exact(8);
    let tail = words.remainder().iter().filter(|&&b| b == b'\n').count();
    words.fold(tail, |n, w| {
        let x = u64::from_le_bytes(w.try_into().unwrap()) ^ NL;
        n + (!(((x & LOW7) + LOW7) | x | LOW7)).count_ones() as usize
    })
}

/// Text of at least this many bytes is parsed in two halves at once (on two cores).
const PARALLEL_BYTES: usize = 4 << 20;

/// The I/O lines of `text` after its header (the first non-blank line), or None where the
/// Python parser must read the file.
pub fn parse(text: &[u8], c: &Columns, lim: &Limits) -> Option<Parsed> {
    if !text.is_ascii() {
        return None;
    }
    // the header: skip to the line after it (blank lines before it count against the
    // line-length limit too)
    let mut pos = 0;
    let mut header_lines = 0;
    loop {
        if pos > text.len() {
            return Some(Parsed::default()); // no header, no I/O
        }
        let end = text[pos..].iter().position(|&b| b == b'\n').map_or(text.len(), |i| pos + i);
        if end - pos > lim.max_line {
            return None;
        }
        let blank = trim(&text[pos..end]).is_empty();
        pos = end + 1;
        header_lines += 1;
        if !blank {
            break;
        }
    }
    let body = &text[pos.min(text.len())..];
    // two halves split at a newline: their lines are the body's lines
    let cut = (body.len() >= PARALLEL_BYTES)
        .then(|| body[body.len() / 2..].iter().position(|&b| b == b'\n').map(|i| body.len() / 2 + i))
        .flatten();
    let (a, b) = match cut {
        Some(k) => std::thread::scope(|s| {
            let second = s.spawn(|| lines(&body[k + 1..], header_lines + count_newlines(&body[..=k]), c, lim));
            (lines(&body[..k], header_lines, c, lim), second.join().ok().flatten())
        }),
        None => (lines(body, header_lines, c, lim), Some(Lines::default())),
    };
    let (mut a, b) = (a?, b?);
    // the limits over the whole trace: what the line-by-line reading refused on the way
    if a.io.op.len() + b.io.op.len() > lim.max_ios {
        return None;
    }
    let (lo, hi) = match (a.io.op.is_empty(), b.io.op.is_empty()) {
        (false, false) => (a.lo.min(b.lo), a.hi.max(b.hi)),
        (false, true) => (a.lo, a.hi),
        (true, _) => (b.lo, b.hi),
    };
    if hi - lo > lim.max_span_ns {
        return None;
    }
    let first = a.io.t.first().or(b.io.t.first()).copied().unwrap_or(0);
    let out = &mut a.io;
    out.t.extend_from_slice(&b.io.t);
    out.op.extend_from_slice(&b.io.op);
    out.off.extend_from_slice(&b.io.off);
    out.len.extend_from_slice(&b.io.len);
    out.line.extend_from_slice(&b.io.line);
    if first != 0 {
        out.t.iter_mut().for_each(|t| *t -= first); // times from the first I/O's
    }
    Some(a.io)
}

/// I/O lines parsed, times as written (ns), and the earliest and latest of them.
#[derive(Default)]
struct Lines {
    io: Parsed,
    lo: i64,
    hi: i64,
}

/// The I/O lines of `text` (no header; `before`: the file's lines before it), or None where
/// the Python parser must read them.
fn lines(text: &[u8], before: usize, c: &Columns, lim: &Limits) -> Option<Lines> {
    let need = c.time.max(c.op).max(c.offset).max(c.length) + 1;
    // one I/O a line at most (of 8 bytes at least: 4 fields, a newline), so the arrays are
    // not grown, and copied, while parsing
    let newlines = count_newlines(text);
    let cap = (newlines + 1).min(text.len() / 8 + 1).min(lim.max_ios);
    let mut out = Parsed {
        t: Vec::with_capacity(cap),
        op: Vec::with_capacity(cap),
        off: Vec::with_capacity(cap),
        len: Vec::with_capacity(cap),
        line: Vec::with_capacity(cap),
    };
    let (mut lo, mut hi) = (0i64, 0i64);
    let mut fields: Vec<&[u8]> = Vec::with_capacity(8);
    for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
        if raw.len() > lim.max_line {
            return None;
        }
        let line = trim(raw);
        if line.is_empty() {
            continue;
        }
        // the fields up to the last one read (what follows it is not looked at)
        fields.clear();
        let mut rest = line;
        while fields.len() < need {
            match rest.iter().position(|&b| b == b',') {
                Some(i) => {
                    fields.push(&rest[..i]);
                    rest = &rest[i + 1..];
                }
                None => {
                    fields.push(rest);
                    break;
                }
            }
        }
        if fields.len() < need || out.op.len() >= lim.max_ios {
            return None;
        }
        let op = op_code(fields[c.op])?;
        let ns = match exact_ns(fields[c.time], c.time_ns as u64) {
            Time::Ns(ns) => ns,
            Time::Defer => return None,
            Time::Other => {
                let x = decimal(fields[c.time])? * c.time_ns;
                // 2^63 ns and later are past an i64
                if x >= 9.223_372_036_854_776e18 {
                    return None;
                }
                x.round_ties_even() as i64
            }
        };
        let (ov, lv) = (whole(fields[c.offset])?, whole(fields[c.length])?);
        if op != FLUSH && lv == 0 {
            return None;
        }
        let (off, len) = if op == FLUSH {
            (0, 0)
        } else {
            let off = ov as u128 * c.offset_unit as u128;
            let len = lv as u128 * c.length_unit as u128;
            if off + len > i64::MAX as u128 {
                return None;
            }
            (off as i64, len as i64)
        };
        if out.op.is_empty() {
            (lo, hi) = (ns, ns);
        } else {
            (lo, hi) = (lo.min(ns), hi.max(ns));
            if hi - lo > lim.max_span_ns {
                return None;
            }
        }
        out.t.push(ns);
        out.op.push(op);
        out.off.push(off);
        out.len.push(len);
        out.line.push((before + i + 1) as i64);
    }
    Some(Lines { io: out, lo, hi })
}

/// `plain_csv_arrays(text, columns, units, limits)`: (time_ns, op, offset, length, line)
/// arrays of a plain CSV trace's I/Os (time from the first I/O's; line: 1-based, in the
/// file), or None for the Python parser.
/// `text`: bytes, or a bytearray the file was read into (no copy to bytes), not changed
/// while it is parsed.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn plain_csv_arrays<'py>(
    py: Python<'py>,
    text: PyBuffer<u8>,
    columns: (usize, usize, usize, usize),
    units: (f64, u64, u64),
    limits: (usize, usize, i64),
) -> Option<(PyObject, PyObject, PyObject, PyObject, PyObject)> {
    let c = Columns {
        time: columns.0,
        op: columns.1,
        offset: columns.2,
        length: columns.3,
        time_ns: units.0,
        offset_unit: units.1,
        length_unit: units.2,
    };
    let lim = Limits {
        max_line: limits.0,
        max_ios: limits.1,
        max_span_ns: limits.2,
    };
    if !text.is_c_contiguous() {
        return None;
    }
    // SAFETY: a contiguous buffer of len_bytes bytes, held (and so not resized) until `text`
    // is dropped at the end of this function
    let bytes = unsafe { std::slice::from_raw_parts(text.buf_ptr() as *const u8, text.len_bytes()) };
    let p = py.allow_threads(|| parse(bytes, &c, &lim))?;
    Some((
        p.t.into_pyarray(py).into_any().unbind(),
        p.op.into_pyarray(py).into_any().unbind(),
        p.off.into_pyarray(py).into_any().unbind(),
        p.len.into_pyarray(py).into_any().unbind(),
        p.line.into_pyarray(py).into_any().unbind(),
    ))
}
