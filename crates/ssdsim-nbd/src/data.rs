//! The served drive's data: a sparse file (unwritten blocks read as zeros, a trim punches
//! a hole), read with pread and written with pwrite, except that a write whose every
//! 4 KiB slot this process has already written through pwrite (and not trimmed since) is
//! copied into a shared mapping of the file instead.
//!
//! Why: after large writes (a sequential fill) the page cache holds the file in large
//! folios, and ext4 walks every block of the folio on each buffered write: a 4 KiB pwrite
//! then costs 5 us of CPU against 1 us for a copy into the mapping, and the served drive's
//! random-write IOPS were bound by it. Only slots whose blocks pwrite has allocated go
//! through the mapping, so a full filesystem is met as pwrite's ENOSPC (an error reply),
//! never as a SIGBUS on a page fault; a write racing a trim of the same slot is the one
//! case that can still fault on a hole. Only on ext4, which overwrites allocated blocks in
//! place (a copy-on-write filesystem allocates on every write, and a fault could find it
//! full), and without `ulimit -v`.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

const SLOT: u64 = 4096;

pub struct Data {
    file: File,
    /// The whole file mapped shared, or None (mmap refused: every write is a pwrite).
    map: Option<Mapping>,
    /// One bit per slot: written through pwrite by this process and not trimmed since.
    written: Box<[AtomicU64]>,
}

struct Mapping {
    base: *mut u8,
    len: u64,
}

// The mapping is only written at offsets nbdkit has checked against the export's size;
// concurrent copies into it are what concurrent pwrites would be (the page cache's).
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

fn on_ext4(file: &File) -> bool {
    const EXT4_SUPER_MAGIC: libc::c_long = 0xef53;
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) == 0 && st.f_type as libc::c_long == EXT4_SUPER_MAGIC }
}

/// No `ulimit -v`: the mapping takes the drive's size in address space, which a limit set
/// for the simulator's tables (footprint.rs) would then lack.
fn unlimited_address_space() -> bool {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) == 0 && r.rlim_cur == libc::RLIM_INFINITY }
}

/// A zeroed bitmap of `bits` bits (calloc: pages are taken as they are first written).
fn bitmap(bits: u64) -> Box<[AtomicU64]> {
    const _: () = assert!(std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>());
    let words = vec![0u64; bits.div_ceil(64) as usize].into_boxed_slice();
    // SAFETY: AtomicU64 has the size, alignment (checked above) and bit validity of u64
    unsafe { Box::from_raw(Box::into_raw(words) as *mut [AtomicU64]) }
}

impl Data {
    /// `file` is at least `size` bytes long.
    pub fn new(file: File, size: u64) -> Data {
        let map = (size > 0 && size <= usize::MAX as u64 && on_ext4(&file) && unlimited_address_space())
            .then(|| unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    size as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                )
            })
            .filter(|p| *p != libc::MAP_FAILED)
            .map(|p| Mapping {
                base: p as *mut u8,
                len: size,
            });
        Data {
            file,
            map,
            written: bitmap(size.div_ceil(SLOT)),
        }
    }

    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let mut got = 0;
        while got < buf.len() {
            let n = self.file.read_at(&mut buf[got..], offset + got as u64)?;
            if n == 0 {
                buf[got..].fill(0);
                break;
            }
            got += n;
        }
        Ok(())
    }

    pub fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let end = offset + buf.len() as u64;
        if let Some(m) = &self.map {
            if end <= m.len && !buf.is_empty() && self.all_written(offset, end) {
                // SAFETY: offset..end lies within the mapping (checked just above)
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        buf.as_ptr(),
                        m.base.add(offset as usize),
                        buf.len(),
                    )
                };
                return Ok(());
            }
        }
        self.file.write_all_at(buf, offset)?;
        self.mark(offset.div_ceil(SLOT), end / SLOT, true); // the slots it covered whole have their blocks
        Ok(())
    }

    /// Punch a hole (trimmed blocks read as zeros); false where the filesystem cannot.
    /// The slots it touches go back to pwrite first: their blocks are gone.
    pub fn punch(&self, offset: u64, count: u64) -> bool {
        if count == 0 {
            return true;
        }
        self.mark(offset / SLOT, (offset + count).div_ceil(SLOT), false);
        unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                count as libc::off_t,
            ) == 0
        }
    }

    fn all_written(&self, offset: u64, end: u64) -> bool {
        (offset / SLOT..end.div_ceil(SLOT))
            .all(|s| self.written[(s / 64) as usize].load(Ordering::Acquire) >> (s % 64) & 1 == 1)
    }

    /// Set or clear the bits of slots `lo..hi`, a word at a time.
    fn mark(&self, lo: u64, hi: u64, on: bool) {
        let hi = hi.min(self.written.len() as u64 * 64);
        let mut s = lo;
        while s < hi {
            let n = (64 - s % 64).min(hi - s);
            let bits = if n == 64 {
                u64::MAX
            } else {
                ((1u64 << n) - 1) << (s % 64)
            };
            let w = &self.written[(s / 64) as usize];
            if on {
                w.fetch_or(bits, Ordering::Release);
            } else {
                w.fetch_and(!bits, Ordering::Release);
            }
            s += n;
        }
    }
}

impl Drop for Data {
    fn drop(&mut self) {
        if let Some(m) = &self.map {
            unsafe { libc::munmap(m.base as *mut libc::c_void, m.len as usize) };
        }
    }
}
