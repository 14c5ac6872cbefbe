"""The fio target: a block device, a file or an NBD export driven by fio; the jobs it
writes, fio's output and logs it reads, the device's identity."""
