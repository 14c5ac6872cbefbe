"""What may be written: safety checks, drives in use, locks, purge."""
