"""The NVMe VM's stdout and stderr, through pipes that ssdlab copies on.

virtme-ng has QEMU open `/proc/self/fd/1` and `/proc/self/fd/2` by name (the guest's
stdout and stderr, its /dev/stdout and /dev/stderr, the kernel console), each as a file
chardev: `O_TRUNC`, each open with its own offset. Given a regular file (`... > log`,
`>> notebook.log`, a captured run's temporary file), QEMU therefore truncates it, losing
what was there and what nvme_vm printed before the boot (that QEMU emulates the CPU), and
its writers overwrite each other from offset 0 (the kernel's console lines and the
guest's stderr). Reopened through /proc, a pipe is the same pipe: every write lands after
the others, in order. So the VM always gets pipes, and a thread copies each to where the
caller's output goes (its own descriptor, with its own offset and append mode, or a file
of the result).
"""

from __future__ import annotations

import os
import threading


class Relay:
    """A pipe whose write end the VM gets, copied to `sink` (a descriptor) until every
    writer has closed it."""

    def __init__(self, sink: int):
        self.sink = sink
        self._r, self.w = os.pipe()
        self._thread = threading.Thread(target=self._copy, daemon=True, name="ssdlab-vm-output")
        self._thread.start()

    def _copy(self) -> None:
        try:
            while chunk := os.read(self._r, 1 << 16):
                try:
                    while chunk:
                        chunk = chunk[os.write(self.sink, chunk):]
                except OSError:  # the reader went away (a closed pipe): drain the rest unseen
                    pass
        finally:
            os.close(self._r)

    def started(self) -> None:
        """The VM has its copy of the write end: ours goes, so the VM's end is the pipe's end."""
        os.close(self.w)

    def finish(self, timeout: float = 10.0) -> None:
        """Wait for the copy to reach the end (the VM's processes are gone, or a straggler
        holding the pipe is left to the daemon thread after `timeout`)."""
        self._thread.join(timeout)
