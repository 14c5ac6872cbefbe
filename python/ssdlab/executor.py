"""Where independent units of work run: in this process, on a pool of local worker
processes, or on a Ray cluster. The only module that knows about parallelism (sweep,
review and validate hand it units and get back what each returned, as each finishes).

Processes, not threads: the simulator releases the GIL while it runs (it takes it back
once per simulated second for the sample callback), so threads would overlap the Rust
part, but a thread cannot be stopped on Ctrl-C (Python delivers signals to the main thread
only; the simulator's signal check is a no-op elsewhere), the Python half of a run (phase
plans, analysis) would still share one GIL, and a simulator that aborts would take the
whole sweep with it. A worker process is killed at once, and its result is just pickled.

Results never depend on the executor: a unit is a function of its arguments (the
simulator is deterministic for a seed), so the same units give the same values inline,
on the pool, or on Ray. Ctrl-C (or SIGTERM) stops everything: running units are killed,
those not started are dropped, and what already finished has been handed back.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
import socket
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from .host_memory import available_bytes
from .interrupts import ignore, raise_if_stopping, stopping
from .phase import Interrupted
from .ray_local import LocalInstance, outside_working_dir
from .targets import child

KINDS = ("inline", "pool", "ray")
MEMORY_SHARE = 0.7  # of the memory available: never more units at once than fit in it
REACH_S = 3.0  # a Ray address's head node answers a TCP connect within this, or is refused


@dataclass
class Unit:
    """One independent piece of work: `fn(*args)`, with `fn` a module-level function (it
    is pickled to the worker)."""
    key: Any
    fn: Callable[..., Any]
    args: tuple = ()
    memory: float = 0.0  # bytes it needs at its peak (a simulated drive's tables)
    cost: float = 1.0  # rough relative wall time: the longest start first


@dataclass
class Done:
    key: Any
    value: Any = None
    error: BaseException | None = None  # what the unit raised, in the worker

    @property
    def ok(self) -> bool:
        return self.error is None


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def longest_first(units: Iterable[Unit]) -> list[Unit]:
    return sorted(units, key=lambda u: -u.cost)  # stable: equal costs keep their order


class Executor:
    """Runs units; use as a context manager (leaving it on an exception kills what runs)."""
    kind = "inline"
    workers = 1

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(abort=exc_type is not None)

    def close(self, abort: bool = False) -> None: ...

    def run(self, units: Iterable[Unit]) -> Iterator[Done]:
        """Each unit's outcome, in the order they finish."""
        for u in longest_first(units):
            done = _outcome(u)
            # Ctrl-C was taken (the handler ran) where Python could not raise it (a
            # destructor): stop here, as the pool does, rather than run the rest
            raise_if_stopping()
            yield done

    def describe(self) -> str:
        return "in this process"


def _outcome(u: Unit) -> Done:
    try:
        return Done(u.key, u.fn(*u.args))
    except (KeyboardInterrupt, SystemExit):
        raise
    except Interrupted as e:  # Ctrl-C reached the simulator in this process: stop as Ctrl-C does
        raise KeyboardInterrupt() from e
    except Exception as e:  # the unit's failure is its outcome, not the executor's
        return Done(u.key, error=e)


def _call(fn: Callable[..., Any], args: tuple) -> Any:
    return fn(*args)


def _worker_init() -> None:
    """A worker leaves Ctrl-C to the parent (the terminal sends it to the whole process
    group; the parent then kills the workers) and dies with its parent."""
    ignore((signal.SIGINT,))
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    # a parent killed while this worker started sent no signal: without it the worker would
    # run its queued units and wait on, holding its drives' memory, for good
    parent = multiprocessing.parent_process()
    if parent is not None and not parent.is_alive():
        os._exit(1)


TRACKER_QUIET = "ignore:resource_tracker:UserWarning"


def _quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (it outlives a SIGKILLed command to unlink
    the pool's semaphores) told not to warn about them: the cleanup is its job, and its
    warning would land on the user's terminal after the command has gone."""
    from multiprocessing import resource_tracker

    old = os.environ.get("PYTHONWARNINGS")
    os.environ["PYTHONWARNINGS"] = ",".join(w for w in (old, TRACKER_QUIET) if w)
    try:
        resource_tracker.ensure_running()
    finally:  # the workers keep the user's own warning filters
        if old is None:
            del os.environ["PYTHONWARNINGS"]
        else:
            os.environ["PYTHONWARNINGS"] = old


class PoolExecutor(Executor):
    """Local worker processes (spawned: the parent may have threads, e.g. progress bars),
    never more units at once than their memory fits in MEMORY_SHARE of what is available
    (the first always runs when nothing else does)."""
    kind = "pool"

    def __init__(self, workers: int | None = None):
        from concurrent.futures import ProcessPoolExecutor

        self.workers = max(1, workers or cores())
        # a spawned worker starts as `python -c ...`: the working directory first on its
        # module path, where another user (in /tmp) may have left a module it imports
        os.environ[child.SAFE_PATH_ENV] = "1"
        _quiet_resource_tracker()
        self.pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_worker_init)
        # units started and not finished, and their memory, over every run at once: runs
        # from several threads (a fit's cross-validation beside its pinning) share the workers
        self._free = threading.Condition()
        self._busy, self._used = 0, 0.0

    def _finished(self, memory: float, _fut: Any) -> None:
        with self._free:
            self._busy -= 1
            self._used -= memory
            self._free.notify_all()

    def describe(self) -> str:
        return f"on {self.workers} local worker process{'es' if self.workers > 1 else ''}"

    def run(self, units: Iterable[Unit]) -> Iterator[Done]:
        """Safe to call from several threads at once: together they never start more units
        than there are workers, nor more than their memory budget holds."""
        from concurrent.futures.process import BrokenProcessPool

        pending = longest_first(units)
        budget = MEMORY_SHARE * available_bytes()
        running: dict = {}
        while pending or running:
            # Ctrl-C was taken, but the pool's own code (a worker's start) swallowed it: what
            # finished is handed on first
            if stopping():
                raise KeyboardInterrupt()
            with self._free:
                while pending and self._busy < self.workers:
                    fit = next((u for u in pending if not self._busy or self._used + u.memory <= budget), None)
                    if fit is None:
                        break
                    pending.remove(fit)
                    fut = self.pool.submit(_call, fit.fn, fit.args)
                    self._busy += 1
                    self._used += fit.memory
                    running[fut] = fit
                    fut.add_done_callback(functools.partial(self._finished, fit.memory))
                if not any(f.done() for f in running):
                    # until a unit ends, this run's or another's (a worker free); now and then
                    # to look at Ctrl-C
                    self._free.wait(timeout=1.0)
            for fut in [f for f in running if f.done()]:
                u = running.pop(fut)
                try:
                    yield Done(u.key, fut.result())
                except BrokenProcessPool:
                    raise RuntimeError("a worker process died (out of memory?); "
                                       "run with fewer --jobs") from None
                except Exception as e:
                    yield Done(u.key, error=e)

    def close(self, abort: bool = False) -> None:
        if abort:  # Ctrl-C: stop the running units now, drop the rest
            procs = list((getattr(self.pool, "_processes", None) or {}).values())
            for p in procs:
                p.kill()
            self.pool.shutdown(wait=True, cancel_futures=True)
            return
        self.pool.shutdown(wait=True)


def _head(address: str) -> tuple[str, int] | None:
    """HOST and PORT of a Ray address (HOST:PORT, [IPv6]:PORT, ray://HOST:PORT); None
    when it is not one."""
    from urllib.parse import urlsplit

    rest = address.removeprefix("ray://")
    try:
        parts = urlsplit("//" + rest)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host or port is None or parts.path or parts.query or parts.fragment or parts.username:
        return None
    return host, port


# HTTP/2's client preface and an empty SETTINGS frame: a gRPC server (a Ray head's GCS and
# client server) answers them with a SETTINGS frame of its own at once
_H2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _grpc_answer(conn: socket.socket, timeout: float) -> str | None:
    """None when the peer speaks HTTP/2 (gRPC), as a Ray head does; else why it is none.
    Ray itself retries anything else for a minute and more, printing warnings. With TLS
    (RAY_USE_TLS) the peer waits for a TLS hello: not looked at."""
    if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
        return None
    conn.settimeout(timeout)
    try:
        conn.sendall(_H2_HELLO)
        head = b""
        while len(head) < 9:
            got = conn.recv(9 - len(head))
            if not got:
                break
            head += got
    except socket.timeout:
        return f"it accepts connections but sends nothing back within {timeout:g} s"
    except OSError as e:
        return f"it closed the connection ({(e.strerror or str(e)).lower()})"
    if len(head) == 9 and head[3] == 0x04 and head[5:9] == b"\x00\x00\x00\x00":  # SETTINGS, stream 0
        return None
    return "it answers, but not in gRPC as a Ray head node does"


def check_ray(ray: str | None, timeout: float = REACH_S) -> None:
    """What --ray / --ray-address name can be used, checked before anything is stored (Ray
    itself retries an unreachable head node for a minute and more): Ray is installed, and
    an address's head node accepts a TCP connection and answers HTTP/2 (gRPC) within
    `timeout` seconds. "auto" is
    Ray's to look up (RAY_ADDRESS, when set, is checked as an address). ValueError with
    one line naming the problem and the fix."""
    if ray is None:
        return
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise ValueError("--ray needs Ray: pip install 'ssdlab[ray]'")
    address = os.environ.get("RAY_ADDRESS", "") if ray == "auto" else ray
    if address in ("", "local", "auto"):
        return
    head = _head(address)
    if head is None:
        raise ValueError(f"--ray-address {ray}: cannot reach the Ray cluster (not an address); "
                         "give HOST:PORT of its head node (e.g. 10.0.0.5:6379 or ray://10.0.0.5:10001)")
    try:
        with socket.create_connection(head, timeout=timeout) as conn:
            answer = _grpc_answer(conn, timeout)
    except socket.timeout:
        why = f"no answer from {head[0]} port {head[1]} within {timeout:g} s"
    except socket.gaierror:
        why = f"unknown host {head[0]}"
    except OSError as e:
        why = f"{head[0]} port {head[1]}: {(e.strerror or str(e)).lower()}"
    else:
        if answer is None:
            return
        raise ValueError(f"--ray-address {ray}: not a Ray cluster ({answer}); give HOST:PORT of its "
                         "head node's GCS (ray start --head prints it, e.g. 10.0.0.5:6379) or ray://HOST:10001")
    via = " (from RAY_ADDRESS)" if address != ray else ""
    raise ValueError(f"--ray-address {ray}{via}: cannot reach the Ray cluster ({why}); start its head "
                     "node (ray start --head) or give HOST:PORT of a running one")


class RayExecutor(Executor):
    """Units as Ray tasks: on the cluster at `address`, or on a local Ray instance started
    for the run (and stopped after it) when no address is given. Ray does the scheduling;
    a unit's memory goes along as Ray's `memory` resource when the cluster has that much."""
    kind = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None):
        check_ray(address or "local")  # before ray.init, which retries an unreachable head for minutes
        import ray

        self.ray = ray
        self.address = address
        self.started = not ray.is_initialized()
        self.local: LocalInstance | None = None
        if self.started:
            kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "configure_logging": False}
            if address:
                kw["address"] = address
            else:  # a new instance of our own: without an address Ray joins the last cluster
                # anyone on this machine started (RAY_ADDRESS, /tmp/ray), another user's too
                kw["address"] = "local"
                kw["num_cpus"] = max(1, workers or cores())
                self.local = LocalInstance()  # its user's alone (ray_local.py)
                kw.update(self.local.init_kwargs())
            try:
                with outside_working_dir():  # Ray would put it on the workers' module path
                    ray.init(**kw)
            except (ConnectionError, ValueError) as e:  # unreachable, or not an address Ray reads
                self._let_go()
                raise ValueError(f"--ray-address {address}: cannot reach the Ray cluster ({e}); "
                                 "give HOST:PORT of its head node") from None
            except BaseException:
                self._let_go()
                raise
        res = ray.cluster_resources()
        self.workers = int(res.get("CPU", 1))
        self.memory = float(res.get("memory", 0.0))
        self.remote = ray.remote(_call)
        self.refs: dict[Any, Unit] = {}  # unfinished tasks

    def describe(self) -> str:
        where = f"the Ray cluster at {self.address}" if self.address else "a local Ray instance"
        return f"on {where} ({self.workers} CPUs)"

    def run(self, units: Iterable[Unit]) -> Iterator[Done]:
        ray = self.ray
        refs = {}
        for u in longest_first(units):
            opts: dict[str, Any] = {"num_cpus": 1, "max_retries": 0}
            if 0 < u.memory <= self.memory:
                opts["memory"] = int(u.memory)
            refs[self.remote.options(**opts).remote(u.fn, u.args)] = u
        self.refs.update(refs)  # every run's, for close() (runs from several threads at once)
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            for ref in ready:
                u = refs.pop(ref)
                self.refs.pop(ref, None)
                try:
                    yield Done(u.key, ray.get(ref))
                except ray.exceptions.RayTaskError as e:
                    cause = getattr(e, "cause", None)
                    yield Done(u.key, error=cause if isinstance(cause, Exception) else RuntimeError(str(e)))
                except ray.exceptions.RayError as e:
                    yield Done(u.key, error=RuntimeError(f"Ray: {type(e).__name__}: {e}"))

    def close(self, abort: bool = False) -> None:
        # A local instance is stopped whole below. Cancelling its tasks first raced with
        # their replies (Ray 2.60 aborts with "Tried to complete task that was not
        # pending"), so only a cluster's unfinished tasks are cancelled.
        pending = list(self.refs)
        if abort and not self.started and pending:
            ready, _ = self.ray.wait(pending, num_returns=len(pending), timeout=0)
            for ref in set(pending) - set(ready):
                try:
                    self.ray.cancel(ref, force=True)
                except Exception:  # finished meanwhile or gone: nothing to stop
                    pass
        if self.started:
            self.ray.shutdown()
        self._let_go()

    def _let_go(self) -> None:
        if self.local is not None:
            self.local.close()
            self.local = None


def open_executor(jobs: int | None = None, ray: str | None = None) -> Executor:
    """`ray` (an address, or "local" for a local instance) wins; else `jobs` processes
    (None: one per core; 1: in this process)."""
    if ray is not None:
        return RayExecutor(None if ray in ("", "local") else ray, jobs)
    if jobs is not None and jobs < 1:
        raise ValueError(f"--jobs {jobs}: must be at least 1")
    n = jobs or cores()
    return Executor() if n == 1 else PoolExecutor(n)


__all__ = ["KINDS", "Done", "Executor", "PoolExecutor", "RayExecutor", "Unit", "available_bytes",
           "check_ray", "cores", "open_executor"]
