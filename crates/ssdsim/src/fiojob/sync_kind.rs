//! What a sync a fio job issues is (sync_ops.rs issues it, end_sync.rs the flushes of
//! end_fsync and fsync_on_close), and how its completion event carries it.

/// A sync's direction in a completion event (after READ, WRITE, TRIM).
pub const SYNC_DIR: usize = 3;

/// What a sync the job issues is (its heap event carries it, sync_done reads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    /// fsync=N or fdatasync=N: a flush, in fio's sync figures.
    Sync,
    /// sync_file_range=FLAGS:N: in fio's sync figures (its count where fio 3.33 puts it: the
    /// writes' short_ios).
    Range,
    /// end_fsync / fsync_on_close once a pass's I/Os are in (fio's fio_io_sync while
    /// TD_FSYNCING): a flush in the pass's time, in none of fio's sync figures.
    End,
    /// fsync_on_close as fio closes the job's files (a plain fsync(2)): in no figure;
    /// `restart`: the verify that follows starts its time when it returns.
    Close { restart: bool },
}

impl SyncKind {
    const CODES: [SyncKind; 5] = [
        SyncKind::Sync,
        SyncKind::Range,
        SyncKind::End,
        SyncKind::Close { restart: false },
        SyncKind::Close { restart: true },
    ];

    pub(crate) fn code(self) -> u32 {
        Self::CODES.iter().position(|&c| c == self).unwrap_or(0) as u32
    }

    pub(crate) fn of(info: u32) -> SyncKind {
        Self::CODES[((info & KIND_MASK) as usize).min(Self::CODES.len() - 1)]
    }

    /// In fio's sync figures (latencies, depths, count).
    pub fn counted(self) -> bool {
        matches!(self, SyncKind::Sync | SyncKind::Range)
    }
}

/// A sync event's info: SYNC_DIR << 30, the kind's code, NO_DRIVE when it reached no drive.
const KIND_MASK: u32 = 7;
pub(crate) const NO_DRIVE: u32 = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_kinds_round_trip_through_an_event() {
        for k in SyncKind::CODES {
            let info = ((SYNC_DIR as u32) << 30) | k.code() | NO_DRIVE;
            assert_eq!(SyncKind::of(info), k);
        }
        assert!(SyncKind::Sync.counted() && SyncKind::Range.counted());
        assert!(!SyncKind::End.counted() && !SyncKind::Close { restart: true }.counted());
    }
}
