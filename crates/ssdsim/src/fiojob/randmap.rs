//! fio's random map for I/Os of several block sizes (io_u.c, lib/axmap.c): one bit per
//! block of the region, set when an I/O covers it. A random block already covered moves
//! to the next free one (wrapping to the region's start); an I/O is cut short at the first
//! covered block after its start (fio's mark_random_map), so a pass writes each block once
//! and late I/Os shrink to the free runs left. Levels of bits over the words below (a bit
//! set when its word is full) find the next free block in a few word reads.

#[derive(Clone)]
pub struct RandMap {
    n: u64,
    /// levels[0]: one bit per block; levels[k + 1]: one bit per full word of levels[k].
    /// Bits past the end are kept set, so a full word reads as all ones.
    levels: Vec<Vec<u64>>,
}

impl RandMap {
    pub fn new(n: u64) -> RandMap {
        let n = n.max(1);
        let mut levels = vec![];
        let mut bits = n;
        loop {
            let words = bits.div_ceil(64);
            levels.push(vec![0u64; words as usize]);
            if words == 1 {
                break;
            }
            bits = words;
        }
        let mut m = RandMap { n, levels };
        m.clear();
        m
    }

    /// Bytes the map takes for `n` blocks.
    pub fn bytes(n: u64) -> u64 {
        n.div_ceil(64) * 8 * 64 / 63 + 8
    }

    /// Every block free again (a new pass).
    pub fn clear(&mut self) {
        let mut bits = self.n;
        for l in self.levels.iter_mut() {
            l.iter_mut().for_each(|w| *w = 0);
            if !bits.is_multiple_of(64) {
                let last = l.len() - 1;
                l[last] = !0u64 << (bits % 64);
            }
            bits = bits.div_ceil(64);
        }
    }

    #[inline]
    pub fn is_free(&self, b: u64) -> bool {
        b < self.n && self.levels[0][(b / 64) as usize] & (1 << (b % 64)) == 0
    }

    fn set(&mut self, b: u64) {
        let mut i = b;
        for l in self.levels.iter_mut() {
            let w = (i / 64) as usize;
            l[w] |= 1 << (i % 64);
            if l[w] != !0 {
                return;
            }
            i = w as u64;
        }
    }

    /// Cover up to `nr` blocks from `b`, stopping at the first covered one or the end: how
    /// many were covered.
    pub fn cover(&mut self, b: u64, nr: u64) -> u64 {
        let mut k = 0;
        while k < nr && self.is_free(b + k) {
            self.set(b + k);
            k += 1;
        }
        k
    }

    /// The first free block at or after `p`.
    fn first_free_from(&self, p: u64) -> Option<u64> {
        let mut pos = p;
        let mut lvl = 0;
        while lvl < self.levels.len() {
            let w = (pos / 64) as usize;
            let &word = self.levels[lvl].get(w)?;
            let masked = word | ((1u64 << (pos % 64)) - 1);
            if masked != !0 {
                let mut idx = w as u64 * 64 + (!masked).trailing_zeros() as u64;
                while lvl > 0 {
                    lvl -= 1;
                    let word = self.levels[lvl][idx as usize];
                    idx = idx * 64 + (!word).trailing_zeros() as u64;
                }
                return (idx < self.n).then_some(idx);
            }
            pos = w as u64 + 1;
            lvl += 1;
        }
        None
    }

    /// fio's axmap_next_free: the first free block after `b`, wrapping to the start;
    /// None when every block is covered.
    pub fn next_free(&self, b: u64) -> Option<u64> {
        let next = if b + 1 >= self.n { 0 } else { b + 1 };
        self.first_free_from(next)
            .or_else(|| (next != 0).then(|| self.first_free_from(0)).flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covering_stops_at_a_covered_block_and_free_blocks_are_found_past_full_words() {
        for n in [1u64, 63, 64, 65, 4096, 262_145] {
            let mut m = RandMap::new(n);
            assert_eq!(m.cover(n / 2, 3), 3.min(n - n / 2));
            if n > 4 {
                assert_eq!(m.cover(n / 2 - 1, 5), 1); // stops at the covered n/2
            }
            // cover all but the last block: the next free after 0 is it
            let mut b = 0;
            while b < n - 1 {
                m.cover(b, n - 1 - b);
                b += 1;
            }
            if n > 1 {
                assert_eq!(m.next_free(0), Some(n - 1), "n = {n}");
                assert_eq!(m.next_free(n - 1), Some(n - 1));
            }
            m.cover(n - 1, 1);
            assert_eq!(m.next_free(0), None);
            m.clear();
            assert_eq!(m.next_free(n - 1), Some(0));
        }
    }
}
