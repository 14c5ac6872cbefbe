//! fio's verify (backend.c do_verify, verify.c get_next_verify, iolog.c log_io_piece): a
//! job that writes with `verify` set reads back what it wrote, after each pass
//! (`do_verify`, the default), as it goes (`verify_backlog`: after every N writes, N reads
//! of the oldest written pieces), or only that (`verify_only`: the writes are not issued,
//! their read back is). Each write is logged as a piece (offset, length): in write order
//! when a random map keeps offsets from repeating, else sorted by offset with any older
//! piece a new one overlaps dropped (a rewritten block is read back once). Runs of equal,
//! touching pieces are kept as one entry, so a sequential pass is a single entry. In write
//! order nothing need be kept at all: the pass's stream, copied at its start, draws the
//! same writes again (memory: the stream's, not one entry per write).

use std::collections::{BTreeMap, VecDeque};

use super::stream::Stream;
use super::WRITE;

/// fio's verify options of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Verify {
    /// Read back each pass's writes after it (fio's do_verify).
    pub after: bool,
    /// verify_backlog: after every `backlog` logged writes, read back `batch` pieces.
    pub backlog: u64,
    pub batch: u64,
    /// verify_only: issue no writes; read back the pieces they would have written.
    pub only: bool,
}

/// Runs of pieces: start offset -> (piece length, pieces); or the pass's stream drawing
/// its writes again.
enum Log {
    Ordered(VecDeque<(u64, u64, u64)>),
    Sorted(BTreeMap<u64, (u64, u64)>),
    Replay(Box<Stream>),
}

pub struct PieceLog {
    log: Log,
    /// Pieces logged and not yet read back (fio's io_hist_len).
    pub len: u64,
    /// Entries held (runs), for the memory bound.
    pub entries: u64,
}

impl PieceLog {
    /// `ordered`: write order (a random map keeps offsets from repeating), else sorted.
    pub fn new(ordered: bool) -> PieceLog {
        PieceLog {
            log: if ordered {
                Log::Ordered(VecDeque::new())
            } else {
                Log::Sorted(BTreeMap::new())
            },
            len: 0,
            entries: 0,
        }
    }

    /// Bytes an entry takes at most (for the bound on a job's log).
    pub const ENTRY_BYTES: u64 = 48;

    /// The pieces of a pass in write order, drawn again from `stream` as it was at the
    /// pass's start (the writes logged are a prefix of its writes).
    pub fn replay(stream: Stream) -> PieceLog {
        PieceLog {
            log: Log::Replay(Box::new(stream)),
            len: 0,
            entries: 0,
        }
    }

    /// A new pass from `stream` (a replay log starts over from it; the others are empty).
    pub fn restart(&mut self, stream: &Stream) {
        match &mut self.log {
            Log::Replay(s) => **s = stream.clone(),
            Log::Ordered(q) => q.clear(),
            Log::Sorted(m) => m.clear(),
        }
        self.len = 0;
        self.entries = 0;
    }

    /// A write of `len` bytes at `off` was issued.
    pub fn log(&mut self, off: u64, len: u64) {
        match &mut self.log {
            Log::Replay(_) => self.len += 1,
            Log::Ordered(q) => {
                if let Some(last) = q.back_mut() {
                    if last.1 == len && last.0 + last.1 * last.2 == off {
                        last.2 += 1;
                        self.len += 1;
                        return;
                    }
                }
                q.push_back((off, len, 1));
                self.entries += 1;
                self.len += 1;
            }
            Log::Sorted(m) => {
                // drop every older piece the new one overlaps
                let end = off + len;
                let mut hit: Vec<(u64, u64, u64)> = vec![];
                if let Some((&s, &(l, n))) = m.range(..off).next_back() {
                    if s + l * n > off {
                        hit.push((s, l, n));
                    }
                }
                hit.extend(m.range(off..end).map(|(&s, &(l, n))| (s, l, n)));
                for (s, l, n) in hit {
                    m.remove(&s);
                    self.entries -= 1;
                    let first = if off > s { (off - s) / l } else { 0 };
                    let last = ((end - s).div_ceil(l)).min(n); // pieces [first, last) overlap
                    self.len -= last - first;
                    if first > 0 {
                        m.insert(s, (l, first));
                        self.entries += 1;
                    }
                    if last < n {
                        m.insert(s + last * l, (l, n - last));
                        self.entries += 1;
                    }
                }
                // join the run ending where this piece starts, if of the same length
                let prev = m
                    .range(..off)
                    .next_back()
                    .map(|(&s, &(l, n))| (s, l, n))
                    .filter(|&(s, l, n)| l == len && s + l * n == off);
                match prev {
                    Some((s, l, n)) => {
                        m.insert(s, (l, n + 1));
                    }
                    None => {
                        m.insert(off, (len, 1));
                        self.entries += 1;
                    }
                }
                self.len += 1;
            }
        }
    }

    /// The next piece to read back (the oldest, or the lowest offset): (offset, length).
    pub fn take(&mut self) -> Option<(u64, u64)> {
        if self.len == 0 {
            return None;
        }
        let (off, len) = match &mut self.log {
            Log::Replay(s) => loop {
                let r = s.next_io()?;
                if r.dir == WRITE {
                    break (r.offset, r.len);
                }
            },
            Log::Ordered(q) => {
                let e = q.front_mut()?;
                let p = (e.0, e.1);
                e.0 += e.1;
                e.2 -= 1;
                if e.2 == 0 {
                    q.pop_front();
                    self.entries -= 1;
                }
                p
            }
            Log::Sorted(m) => {
                let (&s, &(l, n)) = m.iter().next()?;
                m.remove(&s);
                if n > 1 {
                    m.insert(s + l, (l, n - 1));
                } else {
                    self.entries -= 1;
                }
                (s, l)
            }
        };
        self.len -= 1;
        Some((off, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequential_pass_is_one_entry_read_back_in_order() {
        let mut p = PieceLog::new(false);
        for i in 0..1000u64 {
            p.log(i * 4096, 4096);
        }
        assert_eq!((p.len, p.entries), (1000, 1));
        let got: Vec<u64> = std::iter::from_fn(|| p.take()).map(|x| x.0).collect();
        assert_eq!(got, (0..1000).map(|i| i * 4096).collect::<Vec<_>>());
        assert_eq!((p.len, p.entries), (0, 0));
    }

    #[test]
    fn sorted_pieces_drop_what_a_later_write_overlaps() {
        let mut p = PieceLog::new(false);
        for i in 0..8u64 {
            p.log(i * 4096, 4096);
        }
        p.log(4096 + 2048, 8192); // overlaps pieces 1, 2 and 3
        p.log(0, 4096); // rewrites piece 0
        assert_eq!(p.len, 6); // 0, the new one, 4..8
        let got: Vec<(u64, u64)> = std::iter::from_fn(|| p.take()).collect();
        assert_eq!(got[0], (0, 4096));
        assert_eq!(got[1], (6144, 8192));
        assert_eq!(got[2], (16384, 4096));
        assert_eq!(got.len(), 6);
    }

    #[test]
    fn ordered_pieces_keep_write_order() {
        let mut p = PieceLog::new(true);
        for o in [5u64, 1, 9, 2] {
            p.log(o * 512, 512);
        }
        let got: Vec<u64> = std::iter::from_fn(|| p.take()).map(|x| x.0 / 512).collect();
        assert_eq!(got, vec![5, 1, 9, 2]);
    }
}
