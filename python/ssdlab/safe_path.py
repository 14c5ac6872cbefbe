"""Paths ssdlab writes through, and how it opens them: a file target, `serve --data`, the
results store (--db), pending-results files, markers, fio log files, reports (-o DIR),
exports. Every writer goes through this module.

The rule: no symlink another user could have planted is followed. A path is walked one
component at a time (lstat, never the kernel's resolution): a symlink owned by anyone
but the caller (the effective uid) or root is refused, wherever it is in the path, and so
is a symlink whose target is missing (following it would create a file wherever it
points). What ssdlab then opens for writing is opened from a chain of directory
descriptors, each component with O_NOFOLLOW, so a link put in place after the walk is
refused by the kernel rather than followed. Files in shared directories are created new
(O_EXCL) or written to a temporary file and renamed over the name (a rename replaces a
planted link itself, never its target).

Refusals are UnsafePath: one line naming the path and what to do, exit status 2."""

from __future__ import annotations

import contextlib
import errno
import functools
import grp
import os
import pwd
import secrets
import shutil
import stat
from collections import deque
from pathlib import Path
from typing import Callable, Iterator

MAX_LINKS = 40  # the kernel's own limit (ELOOP)
# a directory ssdlab makes lets no one else write, whatever the umask (000 made them 0777,
# which ssdlab then refused and left behind) or a default ACL of its parent (the group
# bits are the ACL's mask: without w, no user or group an entry names may write)
NEW_DIR_MODE = 0o755
DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(ValueError):
    """A path ssdlab will not write through, or cannot (`reason` says why); the CLI exits
    with status 2. A refusal (a link, an owner, a mode) reads "refusing WHAT: REASON"."""

    exit_code = 2

    def __init__(self, what: str, reason: str, refusal: bool = True):
        super().__init__(f"refusing {what}: {reason}" if refusal else f"{what}: {reason}")
        self.what, self.reason, self.refusal = what, reason, refusal


class Exists(UnsafePath):
    """A file that was to be created new is there already."""


class Missing(UnsafePath):
    """A directory of the path does not exist."""


def trusted_uids() -> tuple[int, ...]:
    """Whose symlinks may be followed: the caller's own and root's."""
    return (0, os.geteuid())


def others_may_write(st: os.stat_result, where: str | int | None = None) -> bool:
    """Whether users other than root and the caller may add, rename or remove entries of the
    directory `st`: it is writable by others, or by a group with another member, or (its
    access ACL, read from `where`: its path or a descriptor) by a user or group the ACL
    names, and not sticky (like /tmp: there others cannot rename or remove what is not
    theirs). A user private group (the user's own, alone in it: Debian's and Ubuntu's
    scheme, whose umask 002 makes directories group-writable) lets no one else in."""
    if st.st_mode & stat.S_ISVTX:
        return False
    if st.st_mode & 0o002 or st.st_mode & 0o020 and not _private_group(st.st_gid):
        return True
    return where is not None and _acl_lets_others_write(where)


ACL_XATTR = "system.posix_acl_access"
ACL_USER, ACL_GROUP, ACL_MASK = 0x02, 0x08, 0x10  # entry tags (linux/posix_acl_xattr.h)


def _acl_lets_others_write(where: str | int) -> bool:
    """Whether the access ACL of `where` lets a user it names (other than root and the
    caller), or a group it names with another member, write: `chmod` shows the ACL's mask
    as the group's bits, so a directory of mode 0775 and group root may still be writable
    by any user an entry names. An ACL that cannot be read as Linux writes it counts as
    letting others write."""
    try:
        data = os.getxattr(where, ACL_XATTR, follow_symlinks=False) if isinstance(where, str) \
            else os.getxattr(where, ACL_XATTR)
    except OSError:
        return False  # no ACL (ENODATA), or a filesystem without them
    if len(data) < 4 or (len(data) - 4) % 8 or int.from_bytes(data[:4], "little") != 2:
        return True
    entries = [(int.from_bytes(data[i:i + 2], "little"), int.from_bytes(data[i + 2:i + 4], "little"),
                int.from_bytes(data[i + 4:i + 8], "little")) for i in range(4, len(data), 8)]
    if any(tag == ACL_MASK and not perm & 2 for tag, perm, _ in entries):
        return False  # the mask takes write from every named entry
    return any(perm & 2 and (tag == ACL_USER and ident not in trusted_uids()
                             or tag == ACL_GROUP and not _private_group(ident))
               for tag, perm, ident in entries)


@functools.lru_cache(maxsize=None)
def _private_group(gid: int) -> bool:
    """Whether no user but root and the caller is in group `gid`, as a member or by their
    primary group (a group the databases do not know is not private)."""
    mine = set(trusted_uids())
    try:
        members = grp.getgrgid(gid).gr_mem
        if any(pwd.getpwnam(name).pw_uid not in mine for name in members):
            return False
    except KeyError:
        return False
    return all(p.pw_uid in mine for p in pwd.getpwall() if p.pw_gid == gid)


def _refuse(what: str, text: str) -> UnsafePath:
    return UnsafePath(what, text)


def _cannot(what: str, text: str) -> UnsafePath:
    return UnsafePath(what, text, refusal=False)


def real(path: str | os.PathLike[str], what: str | None = None) -> str:
    """`path` made absolute with every symlink resolved, after checking each one: owned by
    the caller or root, and (when it is the path's last component) pointing at something
    that exists. The last component may be missing (a new file); a missing directory
    before it is refused. `what` names the path in messages (default: the path)."""
    text = os.fspath(path)
    what = what or text
    if not text:
        raise _cannot(what, "an empty path")
    if "\0" in text:
        raise _cannot(what, "the path contains a NUL byte")
    parts = deque(text.split("/"))
    cur = "/" if text.startswith("/") else os.getcwd()
    links = 0
    via_link = False  # the last name to look up is a link's target
    while parts:
        c = parts.popleft()
        if c in ("", "."):
            continue
        if c == "..":
            cur = os.path.dirname(cur)
            continue
        nxt = os.path.join(cur, c)
        last = not any(p not in ("", ".") for p in parts)
        try:
            st = os.lstat(nxt)
        except FileNotFoundError:
            if last and not via_link:
                return nxt  # a new file in an existing directory
            if last:
                raise _refuse(what, f"a symlink to a missing file ({nxt}); give the file's own "
                                    "path (ssdlab does not create files through links)") from None
            raise Missing(what, f"directory {nxt} does not exist", refusal=False) from None
        except OSError as e:
            raise _cannot(what, f"cannot look at {nxt}: {e.strerror}") from None
        if stat.S_ISLNK(st.st_mode):
            if st.st_uid not in trusted_uids():
                raise _refuse(what, f"{nxt} is a symlink owned by uid {st.st_uid}, another user, which "
                                    "ssdlab does not follow; give the real path")
            links += 1
            if links > MAX_LINKS:
                raise _refuse(what, f"more than {MAX_LINKS} symlinks in the path (a loop?)")
            target = os.readlink(nxt)
            if target.startswith("/"):
                cur = "/"
            parts.extendleft(reversed(target.split("/")))
            via_link = via_link or last  # the name at the end is now the link's target's
            continue
        if not last and not stat.S_ISDIR(st.st_mode):
            raise _cannot(what, f"{nxt} is not a directory")
        cur = nxt
    return cur


def dir_fd(directory: str) -> int:
    """An O_PATH descriptor of the real directory `directory` (as `real` returns), opened
    one component at a time with O_NOFOLLOW: a symlink put anywhere in it since it was
    checked fails with ELOOP/ENOTDIR instead of being followed."""
    fd = os.open("/", DIR_FLAGS)
    try:
        for c in [p for p in directory.split("/") if p]:
            nfd = os.open(c, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def cannot_make_files(directory: str) -> str | None:
    """Why no file can be made in the real directory `directory` (the error's text), or None:
    a file of a random name is made there and removed. Checked before a command runs, as
    the mode bits do not say it for root, nor on a filesystem that makes no files (procfs)."""
    try:
        d = dir_fd(directory)
    except OSError as e:
        return e.strerror or str(e)
    tmp = f".ssdlab-probe.{secrets.token_hex(6)}"
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=d))
        os.unlink(tmp, dir_fd=d)
    except OSError as e:
        return e.strerror or str(e)  # (an error without its text still says no)
    finally:
        os.close(d)
    return None


def _opened(what: str, path: str, e: OSError) -> UnsafePath:
    if e.errno in (errno.ELOOP, errno.ENOTDIR):
        return _refuse(what, f"{path} changed into a symlink while ssdlab checked it; look at who "
                             "else writes there")
    if e.errno == errno.EEXIST:
        return Exists(what, f"{path} exists (ssdlab creates it new); remove it or choose another name",
                      refusal=False)
    if e.errno == errno.ENAMETOOLONG:
        return _cannot(what, f"{path}: the name is too long for the filesystem; choose a shorter one")
    return _cannot(what, f"cannot write {path}: {e.strerror}")


def open_file(path: str | os.PathLike[str], flags: int, mode: int = 0o600, what: str | None = None) -> int:
    """A descriptor of `path` (checked and resolved as `real` does) opened with `flags`
    (O_NOFOLLOW added) from the chain of its directories. With O_CREAT|O_EXCL it is a new
    file, never an existing one or a link. UnsafePath when anything in the way is not as
    checked."""
    what = what or os.fspath(path)
    return open_real(real(path, what), flags, mode, what)


def open_real(path: str, flags: int, mode: int = 0o600, what: str | None = None,
              failed: Callable[[OSError], UnsafePath] | None = None) -> int:
    """`path`, a real path (`real` resolved it earlier), opened with no link followed
    anywhere in it: one put there since is refused (ELOOP), even one of the caller.
    `failed` says what another error of the open itself means (default: a write's)."""
    what = what or path
    parent, name = os.path.split(path)
    try:
        d = dir_fd(parent)
    except OSError as e:
        raise _opened(what, parent, e) from None
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=d)
    except OSError as e:
        raise (_opened(what, path, e) if failed is None or e.errno in (errno.ELOOP, errno.ENOTDIR)
               else failed(e)) from None
    finally:
        os.close(d)


def create(path: str | os.PathLike[str], what: str | None = None, mode: int = 0o600) -> int:
    """A new file at `path`, open for writing (never over an existing file or a link)."""
    return open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode, what)


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write(path: str | os.PathLike[str], data: bytes | str, what: str | None = None, mode: int = 0o644,
          sync: bool = False) -> Path:
    """Replace `path` with a file holding `data`: written to a new file of a random name in
    the same checked directory, then renamed over the name (a link planted there is
    replaced, its target left alone; a device, FIFO or socket is refused). Returns the real
    path written."""
    what = what or os.fspath(path)
    blob = data.encode() if isinstance(data, str) else data
    r = real(path, what)
    with contextlib.suppress(FileNotFoundError):
        if stat.S_IFMT(os.lstat(r).st_mode) not in (stat.S_IFREG, stat.S_IFDIR):  # a directory: said below
            raise _cannot(what, f"{r} is a device, FIFO or socket, which ssdlab never replaces with a "
                                "file; give a file's path (without -o the text goes to stdout)")
    parent, name = os.path.split(r)
    try:
        d = dir_fd(parent)
    except OSError as e:
        raise _opened(what, parent, e) from None
    tmp = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
    try:
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=d)
        except OSError as e:
            if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT):  # the directory's: said so
                raise _cannot(what, f"cannot write {r}: no file can be made in {parent} ({e.strerror})") from None
            raise _opened(what, os.path.join(parent, tmp), e) from None
        try:
            try:
                _write_fd(fd, blob)
                if sync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=d, dst_dir_fd=d)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=d)
            raise _opened(what, r, e) from None
    finally:
        os.close(d)
    return Path(r)


def make_dirs(path: str | os.PathLike[str], what: str | None = None, mode: int = 0o777) -> str:
    """`path` as a directory (made, with its missing parents, when it is not there, never
    writable by others: `mode` within NEW_DIR_MODE); its real path. Existing components are
    checked as `real` checks them, and each new directory is made in its parent's descriptor."""
    text = os.fspath(path)
    what = what or text
    try:
        r = real(text, what)
    except Missing:
        make_dirs(os.path.dirname(text.rstrip("/")) or ".", what, mode)
        r = real(text, what)
    if not os.path.lexists(r):
        parent, name = os.path.split(r)
        try:
            d = dir_fd(parent)
        except OSError as e:
            raise _opened(what, parent, e) from None
        try:
            os.mkdir(name, mode & NEW_DIR_MODE, dir_fd=d)
        except FileExistsError:
            pass
        except OSError as e:
            raise _cannot(what, f"cannot create {r}: {e.strerror}") from None
        finally:
            os.close(d)
        r = real(text, what)
    if not os.path.isdir(r) or os.path.islink(r):
        raise _cannot(what, f"{r} is not a directory")
    return r


def check_dirs(path: str, what: str) -> None:
    """Every directory above the real path `path` belongs to root or the caller, and no one
    else can replace what is in it (`others_may_write`). For a path handed to a program that
    opens it by name (fio, nbdkit, SQLite): no one else can swap a link in meanwhile."""
    d = "/"
    for c in [p for p in os.path.dirname(path).split("/") if p] + [None]:
        st = os.lstat(d)
        if st.st_uid not in trusted_uids() or others_may_write(st, d):
            me = "root" if os.geteuid() == 0 else f"root and uid {os.geteuid()}"
            acl = ", an ACL that names them" if st.st_uid in trusted_uids() and _acl_lets_others_write(d) else ""
            raise _refuse(what, f"directory {d} may be written by users other than {me} "
                                f"(owner uid {st.st_uid}, mode {stat.S_IMODE(st.st_mode):o}{acl}), "
                                "who could put a link in place of what ssdlab writes; use a directory only "
                                "they can write")
        if c is not None:
            d = os.path.join(d, c)


def read_trusted(path: str | os.PathLike[str], what: str, limit: int = 1 << 20) -> bytes:
    """The content of a file that decides what others may do (a configuration): refused
    unless the file and every directory above it belong to root or the caller and no one
    else can write them."""
    r = real(path, what)
    check_dirs(r, what)
    fd = open_file(r, os.O_RDONLY | os.O_NONBLOCK, what=what)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(what, f"{r} is not a regular file")
        if st.st_uid not in trusted_uids() or st.st_mode & 0o022:
            raise _refuse(what, f"{r} must belong to root (or uid {os.geteuid()}) and be writable by its "
                                f"owner only (it is uid {st.st_uid}, mode {stat.S_IMODE(st.st_mode):o}); "
                                f"chown root {r}; chmod go-w {r}")
        if st.st_size > limit:
            raise _refuse(what, f"{r} is larger than {limit} bytes")
        data = b""
        while chunk := os.read(fd, limit + 1 - len(data)):
            data += chunk
        return data[:limit]
    finally:
        os.close(fd)


def read_input(path: str | os.PathLike[str], what: str, limit: int) -> bytes:
    """A file the user names as input: a regular file (never a FIFO, which would wait for a
    writer, or a device such as /dev/zero, which never ends) of at most `limit` bytes, read
    through no symlink another user owns (one planted in /tmp could make root read, and
    quote in an error or store, a file only root may read): refused as `real` refuses it."""
    fd = _open_input(path, what)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _cannot(what, f"{os.fspath(path)} is not a regular file; give a file")
        if st.st_size > limit:
            raise _cannot(what, f"{os.fspath(path)} is {st.st_size} bytes, more than the {limit} an input "
                                "of this kind may be")
        chunks, n = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - n)):
            chunks.append(chunk)
            n += len(chunk)
            if n > limit:  # it grew while read
                raise _cannot(what, f"{os.fspath(path)} is more than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _open_input(path: str | os.PathLike[str], what: str) -> int:
    """`path` open for reading as `open_file` opens it, a missing or unreadable file said as
    "cannot read PATH: REASON"."""
    text = os.fspath(path)
    try:
        r = real(text, what)
    except Missing:
        raise _cannot(what, f"cannot read {text}: {os.strerror(errno.ENOENT)}") from None
    return open_real(r, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY, 0, what,
                     lambda e: _cannot(what, f"cannot read {text}: {e.strerror}"))


def own_dir(path: str | os.PathLike[str], what: str | None = None, mode: int = 0o777) -> str:
    """`path` as a directory ssdlab writes files into by name (a report directory): made
    as `make_dirs` makes it (after its existing part passed), refused unless it and every directory above it belong to
    root or the caller and no one else can replace what is in them (`check_dirs`): in a
    directory another user may write, that user could swap what ssdlab made there for a link
    between ssdlab's steps. `mode`: the new directories' (before the umask). Its real path."""
    what = what or os.fspath(path)
    have = os.path.abspath(os.fspath(path))
    while not os.path.isdir(have) and have != "/":
        have = os.path.dirname(have)
    check_dirs(os.path.join(real(have, what), "-"), what)  # the part there already: refused, nothing made
    out = make_dirs(path, what, mode)
    check_dirs(os.path.join(out, "-"), what)
    return out


@contextlib.contextmanager
def staged(out_dir: str | os.PathLike[str], what: str | None = None) -> Iterator[Path]:
    """A private directory (0700, random name) inside `out_dir` to write into freely; when
    the block ends, each file in it is renamed into `out_dir` under its name (replacing a
    planted link, never writing through it) and the private directory is removed.
    `out_dir` must be a directory no one else may write (`own_dir`; a sticky one like /tmp
    is fine): another user who could rename the private directory could put a link to any
    directory in its place, and what was moved out of it would be that directory's files.
    The move itself reads the private directory through its descriptor, never its name."""
    what = what or os.fspath(out_dir)
    out = own_dir(out_dir, what)
    try:
        d = dir_fd(out)
    except OSError as e:
        raise _opened(what, out, e) from None
    name = f".ssdlab-{secrets.token_hex(6)}"
    try:
        os.mkdir(name, 0o700, dir_fd=d)
        sfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=d)
    except OSError as e:
        os.close(d)
        raise _cannot(what, f"cannot write in {out}: {e.strerror}") from None
    stage = Path(out) / name
    try:
        st = os.fstat(sfd)
        if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
            raise _refuse(what, f"{stage} is not the private directory ssdlab made; look at who else writes "
                                f"in {out}")
        yield stage
        _publish(sfd, d, what, out)
    finally:
        os.close(sfd)
        with contextlib.suppress(OSError):
            shutil.rmtree(name, dir_fd=d)  # never follows a link (the name is ours, in our directory)
        os.close(d)


def _publish(src: int, dst: int, what: str, out: str) -> None:
    """Move every entry of the directory open as `src` into the one open as `dst`
    (subdirectories made as needed), both by descriptor: no name in the way is resolved
    but the entry's own, and a link found at a destination subdirectory is refused."""
    for entry in sorted(os.listdir(src)):
        st = os.stat(entry, dir_fd=src, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            try:
                os.replace(entry, entry, src_dir_fd=src, dst_dir_fd=dst)
            except OSError as e:
                raise _cannot(what, f"cannot write {os.path.join(out, entry)}: {e.strerror}") from None
            continue
        with contextlib.suppress(FileExistsError):
            os.mkdir(entry, NEW_DIR_MODE, dir_fd=dst)
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            sub_dst = os.open(entry, flags, dir_fd=dst)
        except OSError:
            raise _refuse(what, f"{os.path.join(out, entry)} is not a directory; remove it") from None
        try:
            dst_st = os.fstat(sub_dst)
            if dst_st.st_uid not in trusted_uids() or others_may_write(dst_st, sub_dst):
                raise _refuse(what, f"{os.path.join(out, entry)} is a directory another user may write; remove it")
            sub_src = os.open(entry, flags, dir_fd=src)
            try:
                _publish(sub_src, sub_dst, what, os.path.join(out, entry))
            finally:
                os.close(sub_src)
        finally:
            os.close(sub_dst)


__all__ = ["Exists", "Missing", "UnsafePath", "check_dirs", "create", "dir_fd", "make_dirs", "open_file", "others_may_write", "own_dir", "open_real", "read_input", "read_trusted", "real", "staged",
           "trusted_uids", "write"]
