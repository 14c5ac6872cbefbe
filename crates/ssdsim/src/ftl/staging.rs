//! GC staging buffers. The data a GC program unit moves sits in controller SRAM from the
//! reads that gather it until its program completes (firmware keeps it in case the program
//! fails). A controller with little SRAM (a DRAM-less one) has few such buffers, which caps
//! how many GC programs are in flight at once over all dies: `ftl.gc_buffers` (0 = no
//! limit). Unlike GC engines (a die holds one for a whole victim), a buffer is held for one
//! program, so GC slows down evenly and never stops host writes for a whole victim.

#[derive(Debug, Clone)]
pub struct Staging {
    /// When each buffer is free again.
    free_at: Vec<u64>,
}

impl Staging {
    /// `n` buffers; 0 = unlimited.
    pub fn new(n: u32) -> Staging {
        Staging {
            free_at: vec![0; n as usize],
        }
    }

    #[inline]
    pub fn limited(&self) -> bool {
        !self.free_at.is_empty()
    }

    /// The buffer free first, and when a program unit ready at `t` can have it.
    pub fn acquire(&self, t: u64) -> (usize, u64) {
        let (i, &f) = self
            .free_at
            .iter()
            .enumerate()
            .min_by_key(|&(_, f)| *f)
            .expect("limited");
        (i, f.max(t))
    }

    /// Buffer `i` holds a unit until `until` (its program's end).
    pub fn hold(&mut self, i: usize, until: u64) {
        self.free_at[i] = until;
    }

    pub fn reset(&mut self, t: u64) {
        self.free_at.iter_mut().for_each(|f| *f = t);
    }
}
