//! Paging in a drive's tables ahead of a pass that will write them all, on a thread of its
//! own. The tables come from the OS untouched (mapping.rs `table`), and the kernel zeroes
//! each page at its first write, in the simulator's thread: seconds per GB where a VM's
//! host has to supply the memory again (docs/performance-jobs.md).
//! `madvise(MADV_POPULATE_WRITE)` makes the pages present and writable without changing
//! what they hold, so a helper thread can take that cost on another core while the
//! simulation writes the same tables: nothing the simulation computes changes, only where
//! the kernel's zeroing happens. The CPU time is the same; the wall time of a whole-drive
//! fill is shorter where a core is free.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Bytes paged in per call: the helper checks its stop flag between them.
const CHUNK: usize = 64 << 20;

/// A running page-in; dropping it stops the helper at its next chunk and waits for it.
pub struct Prefault {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Prefault {
    /// Page in `ranges` (start address, bytes), one after another, unless the kernel
    /// cannot (before Linux 5.14 the advice is unknown: the pages then fault in as the
    /// simulation writes them, as without this).
    pub fn start(ranges: Vec<(usize, usize)>) -> Prefault {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("ssdsim-prefault".into())
            .spawn(move || page_in(&ranges, &flag))
            .ok();
        Prefault { stop, handle }
    }

    /// Wait until every range is paged in (tests; dropping stops the helper early instead).
    #[cfg(test)]
    fn wait(mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Prefault {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn page_in(ranges: &[(usize, usize)], stop: &AtomicBool) {
    for &(start, bytes) in ranges {
        // whole pages inside the range: the advice wants page-aligned starts
        let end = (start + bytes) & !4095;
        let mut at = (start + 4095) & !4095;
        while at < end {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let len = CHUNK.min(end - at);
            // the ranges are tables the drive owns for as long as this helper runs (its
            // `Prefault` is dropped, and so joined, before the drive can change or free them)
            if !populate(at, len) {
                return;
            }
            at += len;
        }
    }
}

/// Make the pages of `bytes` from `start` (page-aligned) present and writable now, without
/// changing a byte of them (the kernel zeroes a fresh page here rather than at its first
/// write: the same system time, on this thread). False where the kernel cannot.
fn populate(start: usize, bytes: usize) -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: advice on memory the caller owns; MADV_POPULATE_WRITE changes no byte of it.
    unsafe {
        libc::madvise(start as *mut libc::c_void, bytes, libc::MADV_POPULATE_WRITE) == 0
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (start, bytes);
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Of the whole 4 KiB pages inside `v`, how many are in memory, and how many there are
    /// (mincore: this range only, whatever the other tests allocate meanwhile).
    fn resident_pages(v: &[u8]) -> (usize, usize) {
        let first = (v.as_ptr() as usize + 4095) & !4095;
        let end = (v.as_ptr() as usize + v.len()) & !4095;
        let mut map = vec![0u8; (end - first) / 4096];
        // SAFETY: a range inside `v`, page-aligned; `map` has a byte per page.
        let r = unsafe { libc::mincore(first as *mut libc::c_void, end - first, map.as_mut_ptr()) };
        assert_eq!(r, 0);
        (map.iter().filter(|&&b| b & 1 == 1).count(), map.len())
    }

    #[test]
    fn paging_in_makes_a_table_resident_and_changes_no_byte_of_it() {
        const N: usize = 96 << 20; // bytes: past the allocator's mmap threshold
        let mut v = vec![0u8; N]; // zeroed memory from the OS: not resident yet
        for i in (0..N).step_by(7 << 20) {
            v[i] = (i >> 20) as u8 + 1; // some pages written already
        }
        let (before, pages) = resident_pages(&v);
        assert!(before < pages / 2, "{before} of {pages} pages in memory before");
        Prefault::start(vec![(v.as_ptr() as usize, N)]).wait();
        assert_eq!(resident_pages(&v), (pages, pages), "every page in memory after");
        for (i, &b) in v.iter().enumerate() {
            let want = if i % (7 << 20) == 0 { (i >> 20) as u8 + 1 } else { 0 };
            assert_eq!(b, want, "byte {i}");
        }
    }

    #[test]
    fn dropping_stops_the_helper_and_a_range_it_cannot_page_in_is_left_alone() {
        // an address nothing is mapped at: the advice fails, the helper ends
        Prefault::start(vec![(4096, 1 << 20)]).wait();
        let v = vec![0u8; 8 << 20];
        drop(Prefault::start(vec![(v.as_ptr() as usize, v.len())]));
        assert!(v.iter().all(|&b| b == 0));
    }
}
