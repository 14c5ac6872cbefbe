"""What a served drive leaves for others to read: the marker beside its socket and its
stats file; the contract between `ssdlab serve` (which writes them) and `--drive nbd:`
(which reads them)."""
