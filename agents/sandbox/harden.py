"""Restrictions a sandboxed process puts on itself before it runs untrusted code.

STANDALONE: standard library only (the sandboxed process runs this source; nothing here may
import longpuzzle). Every step is best effort and reported: a kernel without Landlock or a
container that forbids seccomp still gets the others, and :func:`apply` says what held.

    rlimits        address space (memory), CPU seconds in total, no core files, file size,
                   open files; threads and processes (RLIMIT_NPROC, once the process runs
                   as a user of its own, where the count is its own)
    namespaces     a new network namespace (no interface but a loopback that is down: no
                   address is reachable, not even 127.0.0.1), a new IPC namespace (no
                   System V IPC or POSIX queue of the host) and a new mount namespace in
                   which the process sees only what it may read (the "view", below); they
                   need root (or CAP_SYS_ADMIN), or unprivileged user namespaces
    view           every top-level folder that holds nothing readable is covered by an
                   empty read-only tmpfs, one that holds some is rebuilt as a tmpfs with
                   only those parts bound into it, the project's own paths are covered,
                   /tmp is a private tmpfs (bounded in size) holding the work folder, and
                   /proc shows only the process's own entries (hidepid): files outside
                   cannot be read, written, stat'ed, watched or have their metadata
                   changed, because they are not there
    own user       started by root, the process switches to a uid and gid of its own
                   (UID_BASE + its pid), with no supplementary groups: it owns nothing
                   outside its work folder
    parent death   SIGKILL when the harness process dies (PR_SET_PDEATHSIG), so a paused
                   process never outlives it
    no_new_privs   prctl(PR_SET_NO_NEW_PRIVS): no privilege gain through exec (needed by the
                   next two)
    landlock       Linux 5.13+: the filesystem becomes read-only on the given roots (the
                   Python runtime, its libraries, a few system files), read-write in the
                   process's own work folder and invisible everywhere else; it also keeps
                   the process from tracing or reading the memory of processes outside its
                   domain, (ABI 4, Linux 6.7+) from binding or connecting TCP sockets and
                   (ABI 6, Linux 6.12+) from signalling them or reaching their abstract
                   unix sockets
    capabilities   all capabilities dropped (a process started by root keeps uid 0 but no
                   power beyond a file owner's, where it could not switch users)
    seccomp        refused with EPERM: new processes (fork, vfork, clone without
                   CLONE_THREAD, exec), ptrace and process_vm_readv/writev, every socket
                   (socket, socketpair) and io_uring (which could open them), inotify and
                   fanotify, changes of file metadata (chmod, chown, utime, xattrs),
                   mount, namespaces, mknod, bpf, perf_event_open, userfaultfd, keys and
                   a new parent-death signal; threads stay allowed (x86_64, aarch64)

Call :func:`apply` in the sandboxed process while it is still single-threaded (unshare,
Landlock and seccomp bind the calling thread and the threads it starts later).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import signal
import struct

PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2

# Landlock (include/uapi/linux/landlock.h); the syscalls are numbered alike on every arch
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_TRUNCATE, FS_IOCTL_DEV = 1 << 14, 1 << 15
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
READ_RIGHTS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2

# machine -> (AUDIT_ARCH, syscall numbers); a name missing from a table is a syscall that
# machine does not have (aarch64 has only the *at forms)
ARCH = {
    "x86_64": (0xC000003E, {
        "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone3": 435,
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "capset": 126,
        "socket": 41, "socketpair": 53, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "inotify_init": 253, "inotify_add_watch": 254, "inotify_init1": 294, "fanotify_init": 300,
        "fanotify_mark": 301, "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "chown": 92,
        "fchown": 93, "lchown": 94, "fchownat": 260, "utime": 132, "utimes": 235, "futimesat": 261,
        "utimensat": 280, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197,
        "lremovexattr": 198, "fremovexattr": 199, "setxattrat": 463, "removexattrat": 466,
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308,
        "mknod": 133, "mknodat": 259, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
        "keyctl": 250, "add_key": 248, "request_key": 249, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        "prctl": 157}),
    "aarch64": (0xC00000B7, {
        "clone": 220, "execve": 221, "execveat": 281, "clone3": 435, "ptrace": 117,
        "process_vm_readv": 270, "process_vm_writev": 271, "capset": 91,
        "socket": 198, "socketpair": 199, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "inotify_add_watch": 27, "inotify_init1": 26, "fanotify_init": 262, "fanotify_mark": 263,
        "fchmod": 52, "fchmodat": 53, "fchmodat2": 452, "fchown": 55, "fchownat": 54, "utimensat": 88,
        "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15,
        "fremovexattr": 16, "setxattrat": 463, "removexattrat": 466,
        "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "unshare": 97, "setns": 268,
        "mknodat": 33, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
        "keyctl": 219, "add_key": 217, "request_key": 218, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        "prctl": 167}),
}
# what seccomp refuses, by group (the report names the groups in force)
DENY = {
    "processes": ("fork", "vfork", "execve", "execveat"),
    "tracing": ("ptrace", "process_vm_readv", "process_vm_writev"),
    "sockets": ("socket", "socketpair", "io_uring_setup", "io_uring_enter", "io_uring_register"),
    "watching": ("inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark"),
    "metadata": ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime",
                 "utimes", "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr",
                 "lremovexattr", "fremovexattr", "setxattrat", "removexattrat"),
    "system": ("mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "mknod", "mknodat", "bpf",
               "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key", "open_tree", "move_mount",
               "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"),
}
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x08000000, 0x10000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = \
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4
UID_BASE = 0x50000000          # + pid: a user (and group) of the process's own, shared with nobody
WORK = "lp-sandbox"            # the work folder's name inside the private /tmp
CLONE_THREAD = 0x00010000

_libc = None


def _sys():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
        _libc.prctl.restype = ctypes.c_int
        _libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return _libc


def _err() -> str:
    return os.strerror(ctypes.get_errno())


def apply(conf: dict) -> dict:
    """Apply the restrictions described by ``conf`` to this process; report what held.

    conf keys (all optional): ``memory_mb``, ``cpu_seconds``, ``file_mb``, ``open_files``,
    ``threads`` (RLIMIT_NPROC), ``read`` (paths readable), ``write`` (paths writable besides
    the work folder), ``view`` (the mount plan: process.py ``view_plan``), ``tmp_mb`` (size of
    the private /tmp), ``workdir_prefix`` and ``tmp`` (where a work folder is made when there
    is no private /tmp), ``parent`` (the harness's pid), ``network`` / ``processes`` (True
    keeps them), ``namespaces`` / ``own_user`` / ``landlock`` / ``seccomp`` /
    ``drop_capabilities`` (False skips). The report's ``workdir`` is the work folder
    (``private_tmp``: it lives in the private /tmp and goes away with the process)."""
    rep: dict = {"platform": platform.system().lower(), "errors": []}
    errors = rep["errors"]
    rep["rlimits"] = _rlimits(conf, errors)
    rep.update(netns=False, ipcns=False, mountns=False, userns=False, private_tmp=False, own_user=False,
               uid=os.getuid() if hasattr(os, "getuid") else None, threads=None, parent_death=False)
    if rep["platform"] != "linux":
        rep.update(no_new_privs=False, landlock=0, landlock_scoped=False, landlock_net=False,
                   capabilities_dropped=False, seccomp=False, seccomp_denies=[])
        rep["workdir"] = _host_workdir(conf)
        _enter(rep["workdir"])
        return rep
    lib = _sys()
    root = os.geteuid() == 0
    uid = UID_BASE + os.getpid() if root and conf.get("own_user", True) else None
    if uid is not None and not _mapped(uid):
        errors.append("own user: no user of its own in this user namespace (root only by its map)")
        uid = None
    # 1. namespaces, and the view of the filesystem in the new mount namespace
    if conf.get("namespaces", True):
        _namespaces(conf, rep, root)
    workdir = None
    if rep["mountns"]:
        try:
            workdir = _view(conf.get("view") or {}, conf.get("tmp_mb"), uid)
            rep["private_tmp"] = True
        except OSError as e:
            errors.append(f"view: {e}")
    if workdir is None:
        workdir = _host_workdir(conf)
    rep["workdir"] = workdir
    # 2. a user of its own (root only; only where it can still reach what it may read)
    if uid is not None:
        _drop_bounding_set()
        if rep["private_tmp"] or _reachable(conf.get("read", ())):
            rep["own_user"] = _own_user(uid, workdir, errors)
        else:
            errors.append("own user: the Python runtime is not readable by other users (and no private view)")
        rep["uid"] = os.getuid()
    if conf.get("threads") is not None and (rep["own_user"] or rep["userns"]):
        rep["threads"] = _nproc(int(conf["threads"]), errors)
    if conf.get("parent"):
        rep["parent_death"] = lib.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        if os.getppid() != int(conf["parent"]):
            os._exit(0)                         # the harness is gone already
    _enter(workdir)
    # 3. no_new_privs, Landlock, capabilities, seccomp
    rep["no_new_privs"] = lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    if not rep["no_new_privs"]:
        errors.append(f"no_new_privs: {_err()}")
    rep["landlock"], rep["landlock_scoped"], rep["landlock_net"] = 0, False, False
    if conf.get("landlock", True) and rep["no_new_privs"]:
        try:
            rep["landlock"], rep["landlock_scoped"], rep["landlock_net"] = _landlock(
                conf.get("read", ()), [workdir, *conf.get("write", ())], not conf.get("network"), errors)
        except OSError as e:
            errors.append(f"landlock: {e}")
    rep["capabilities_dropped"] = _drop_capabilities(errors) if conf.get("drop_capabilities", True) else False
    rep["seccomp"], rep["seccomp_denies"] = False, []
    if conf.get("seccomp", True) and rep["no_new_privs"]:
        groups = [g for g in DENY if not (g == "processes" and conf.get("processes"))
                  and not (g == "sockets" and conf.get("network"))]
        if _seccomp(groups, errors):
            rep["seccomp"], rep["seccomp_denies"] = True, groups
    return rep


def _enter(workdir: str) -> None:
    """Make ``workdir`` the current folder, HOME and TMPDIR."""
    os.chdir(workdir)
    os.environ.update(HOME=workdir, TMPDIR=workdir)


def _host_workdir(conf: dict) -> str:
    """A work folder in the host's temporary folder (no private /tmp): named after the harness's
    pid, so that one left behind by a harness killed outright is recognised and removed."""
    import tempfile
    return tempfile.mkdtemp(prefix=conf.get("workdir_prefix") or "lp-sandbox-", dir=conf.get("tmp"))


# ---- namespaces and the view ------------------------------------------------------------------

def _namespaces(conf: dict, rep: dict, root: bool) -> None:
    lib = _sys()
    flags = CLONE_NEWNS | CLONE_NEWIPC | (0 if conf.get("network") else CLONE_NEWNET)
    userns = not root
    if userns:                                  # an unprivileged harness: a user namespace first
        uid, gid = os.getuid(), os.getgid()
        flags |= CLONE_NEWUSER
    if lib.unshare(flags) != 0:
        rep["errors"].append(f"namespaces: unshare: {_err()}")
        return
    if userns:
        try:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
                with open(f"/proc/self/{name}", "w") as f:
                    f.write(text)
        except OSError as e:
            rep["errors"].append(f"namespaces: user map: {e}")
            return
        rep["userns"] = True
    rep["netns"] = not conf.get("network")
    rep["ipcns"] = True                         # System V IPC and POSIX queues of its own
    if _mount(None, "/", None, MS_REC | MS_PRIVATE) != 0:   # nothing done here reaches the host
        rep["errors"].append(f"namespaces: private mounts: {_err()}")
        return
    rep["mountns"] = True


def _mount(src, target, fstype, flags, data=None) -> int:
    def enc(v):
        return None if v is None else v.encode()
    return _sys().mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data))


def _must(rc: int, what: str) -> None:
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def _view(plan: dict, tmp_mb, uid) -> str:
    """Build the view of the mount plan (see process.py view_plan) and return the work folder.

    plan: ``empty`` folders to cover with an empty read-only tmpfs; ``rebuild``: [[folder,
    [paths to bind back], [[link, target], ...]], ...] (each folder becomes a tmpfs holding
    only those, then read-only); ``cover``: paths to cover wherever they still show (the
    project's own, inside folders that stay); ``tmp``: [paths under /tmp to bind back]."""
    ro = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    for d in plan.get("empty", ()):
        _must(_mount("tmpfs", d, "tmpfs", ro, "size=4k,nr_inodes=1,mode=0555"), f"cover {d}")
    rebuild = [list(r) for r in plan.get("rebuild", ())]
    rebuild.append(["/tmp", list(plan.get("tmp", ())), []])
    for folder, binds, links in rebuild:
        # hold every part to bind back before the tmpfs covers it
        held = []
        for p in binds:
            try:
                held.append((p, os.open(p, os.O_PATH | os.O_CLOEXEC)))
            except OSError:
                continue
        size = "size=16m," if folder != "/tmp" else f"size={int(tmp_mb)}m," if tmp_mb else ""
        _must(_mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, f"{size}mode=0755"), f"rebuild {folder}")
        for p, fd in held:
            try:
                os.makedirs(os.path.dirname(p), 0o755, exist_ok=True)
                if os.path.isdir(f"/proc/self/fd/{fd}"):
                    os.makedirs(p, 0o755, exist_ok=True)
                else:
                    open(p, "a").close()
                _must(_mount(f"/proc/self/fd/{fd}", p, None, MS_BIND | MS_REC), f"bind {p}")
            finally:
                os.close(fd)
        for link, target in links:
            try:
                os.makedirs(os.path.dirname(link), 0o755, exist_ok=True)
                os.symlink(target, link)
            except OSError:
                pass
        if folder == "/tmp":
            work = os.path.join(folder, WORK)
            os.mkdir(work, 0o700)
            if uid is not None:
                os.chown(work, uid, uid)
        else:
            _must(_mount(None, folder, None, MS_REMOUNT | MS_BIND | ro), f"read-only {folder}")
    for p in plan.get("cover", ()):
        if not os.path.lexists(p) or os.path.islink(p):
            continue                            # gone from the view already
        if os.path.isdir(p):
            _must(_mount("tmpfs", p, "tmpfs", ro, "size=4k,nr_inodes=1,mode=0555"), f"cover {p}")
        else:
            _must(_mount("/dev/null", p, None, MS_BIND), f"cover {p}")
    # /dev/shm of the host is out of reach; /proc shows only what the process may trace
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", ro, "size=4k,nr_inodes=1,mode=0555")
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible")
    return os.path.join("/tmp", WORK)


def _mapped(uid: int) -> bool:
    """Whether ``uid`` (and the same gid) exist in this user namespace (inside ``unshare -r``
    root is the only user there is)."""
    for name in ("uid_map", "gid_map"):
        try:
            with open(f"/proc/self/{name}") as f:
                rows = [tuple(int(x) for x in line.split()) for line in f if line.strip()]
        except (OSError, ValueError):
            return False
        if not any(first <= uid < first + count for first, _, count in rows):
            return False
    return True


def _reachable(paths) -> bool:
    """Whether a user that is neither owner nor group could reach and read every path (the
    host's filesystem, without a view): every folder on the way searchable by others."""
    seen = set()
    for p in paths:
        d = p if os.path.isdir(p) else os.path.dirname(p)
        while d not in seen and d not in ("", "/"):
            seen.add(d)
            try:
                if not os.stat(d).st_mode & 0o001:
                    return False
            except OSError:
                pass
            d = os.path.dirname(d)
    return True


# ---- a user of its own ----------------------------------------------------------------------

def _own_user(uid: int, workdir: str, errors: list) -> bool:
    try:
        if not workdir.startswith("/tmp/" + WORK):
            os.chown(workdir, uid, uid)         # a host work folder (the private one is made so)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    except OSError as e:
        errors.append(f"own user: {e}")
        return False
    # its /proc entries belong to it (not to root, as after any setuid): they are its own
    _sys().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    return True


def _nproc(n: int, errors: list):
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
        return n
    except (ValueError, OSError) as e:
        errors.append(f"RLIMIT_NPROC: {e}")
        return None


# ---- resource limits ------------------------------------------------------------------------

def _rlimits(conf: dict, errors: list) -> dict:
    out = {}
    want = [
        ("RLIMIT_AS", conf.get("memory_mb"), 1 << 20),
        ("RLIMIT_CPU", conf.get("cpu_seconds"), 1),
        ("RLIMIT_CORE", 0, 1),
        ("RLIMIT_FSIZE", conf.get("file_mb"), 1 << 20),
        ("RLIMIT_NOFILE", conf.get("open_files"), 1),
    ]
    for name, value, unit in want:
        if value is None or not hasattr(resource, name):
            continue
        lim = getattr(resource, name)
        v = max(0, int(-(-value * unit // 1)))          # round up
        soft, hard = resource.getrlimit(lim)
        if hard != resource.RLIM_INFINITY:
            v = min(v, hard)
        # CPU: past the soft limit SIGXCPU (default action: terminate), one second later SIGKILL
        new_hard = v + 1 if name == "RLIMIT_CPU" and (hard == resource.RLIM_INFINITY or v + 1 <= hard) else v
        try:
            resource.setrlimit(lim, (v, new_hard))
            out[name[7:].lower()] = v
        except (ValueError, OSError) as e:
            errors.append(f"{name}: {e}")
    if "cpu" in out:
        signal.signal(signal.SIGXCPU, signal.SIG_DFL)
    return out


# ---- Landlock ---------------------------------------------------------------------------------

def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none)."""
    if platform.system() != "Linux":
        return 0
    r = _sys().syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                       ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return max(0, int(r))


def _landlock(read, write, no_net: bool, errors: list) -> tuple[int, bool, bool]:
    abi = landlock_abi()
    if abi < 1:
        errors.append("landlock: not available in this kernel")
        return 0, False, False
    lib = _sys()
    handled = (1 << 13) - 1
    if abi >= 2:
        handled |= 1 << 13                      # REFER
    if abi >= 3:
        handled |= FS_TRUNCATE
    if abi >= 5:
        handled |= FS_IOCTL_DEV
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    net = NET_BIND_TCP | NET_CONNECT_TCP if no_net and abi >= 4 else 0     # handled, and no rule allows any
    # struct landlock_ruleset_attr { u64 handled_access_fs, handled_access_net, scoped; }
    attr = struct.pack("<QQQ", handled, net, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    buf = ctypes.create_string_buffer(attr[:size], size)
    rfd = lib.syscall(SYS_LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if rfd < 0:
        errors.append(f"landlock: create_ruleset: {_err()}")
        return 0, False, False
    try:
        for paths, rights in ((read, READ_RIGHTS), (write, handled)):
            for p in paths:
                try:
                    fd = os.open(p, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue                    # a path that does not exist here: nothing to allow
                try:
                    r = rights & handled
                    if not os.path.isdir(p):
                        r &= FILE_RIGHTS
                    rule = ctypes.create_string_buffer(struct.pack("<Qi", r, fd), 12)   # packed struct
                    if lib.syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_int(rfd), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                                   rule, ctypes.c_uint32(0)) != 0:
                        errors.append(f"landlock: add_rule: {_err()}")
                finally:
                    os.close(fd)
        if lib.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(rfd), ctypes.c_uint32(0)) != 0:
            errors.append(f"landlock: restrict_self: {_err()}")
            return 0, False, False
    finally:
        os.close(rfd)
    return abi, bool(scoped), bool(net)


# ---- capabilities ---------------------------------------------------------------------------

def _drop_bounding_set() -> None:
    """Empty the bounding set and the ambient set (needs CAP_SETPCAP: before a user switch)."""
    lib = _sys()
    lib.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(64):
        if lib.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
            break                               # past the last capability this kernel knows


def _drop_capabilities(errors: list) -> bool:
    lib = _sys()
    arch = ARCH.get(platform.machine())
    if arch is None:
        errors.append(f"capabilities: unknown machine {platform.machine()}")
        return False
    _drop_bounding_set()
    # capset(v3 header {version, pid}, data[2] {effective, permitted, inheritable}) = all zero
    head = ctypes.create_string_buffer(struct.pack("<Ii", 0x20080522, 0), 8)
    data = ctypes.create_string_buffer(bytes(24), 24)
    if lib.syscall(ctypes.c_long(arch[1]["capset"]), head, data) != 0:
        errors.append(f"capabilities: capset: {_err()}")
        return False
    return True


# ---- seccomp --------------------------------------------------------------------------------

def _bpf(prog: list) -> bytes:
    """Assemble (code, k, jump-true label, jump-false label) / ("label", name) into sock_filter[]."""
    labels, out, pos = {}, [], 0
    for ins in prog:
        if ins[0] == "label":
            labels[ins[1]] = pos
        else:
            pos += 1
    pos = 0
    for ins in prog:
        if ins[0] == "label":
            continue
        code, k, jt, jf = ins
        def rel(lab, pos=pos):
            return 0 if lab is None else labels[lab] - pos - 1
        out.append(struct.pack("<HBBI", code, rel(jt), rel(jf), k & 0xFFFFFFFF))
        pos += 1
    return b"".join(out)


def _seccomp(groups, errors: list) -> bool:
    """Install the filter refusing the syscalls of ``groups`` (names of DENY) with EPERM."""
    arch = ARCH.get(platform.machine())
    if arch is None:
        errors.append(f"seccomp: no syscall table for {platform.machine()}")
        return False
    audit, nr = arch
    LD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
    ALLOW, KILL = 0x7FFF0000, 0x80000000
    deny = sorted({nr[n] for g in groups for n in DENY[g] if n in nr})
    prog = [(LD, 4, None, None), (JEQ, audit, None, "kill"), (LD, 0, None, None)]
    if audit == 0xC000003E:
        prog.append((JGE, 0x40000000, "kill", None))        # no x32 syscalls
    for n in deny:
        prog.append((JEQ, n, "eperm", None))
    if "processes" in groups:
        prog += [(JEQ, nr["clone3"], "enosys", None),         # libc then falls back to clone()
                 (JEQ, nr["clone"], "clone", None)]
    if "system" in groups:                                    # its parent-death signal stays
        prog.append((JEQ, nr["prctl"], "prctl", None))
    prog += [(RET, ALLOW, None, None),
             ("label", "prctl"), (LD, 16, None, None),        # args[0] (option)
             (JEQ, PR_SET_PDEATHSIG, "eperm", "allow"),
             ("label", "clone"), (LD, 16, None, None),        # args[0] (flags), low 32 bits
             (JSET, CLONE_THREAD, "allow", "eperm"),
             ("label", "allow"), (RET, ALLOW, None, None),
             ("label", "eperm"), (RET, 0x00050000 | errno.EPERM, None, None),
             ("label", "enosys"), (RET, 0x00050000 | errno.ENOSYS, None, None),
             ("label", "kill"), (RET, KILL, None, None)]
    code = _bpf(prog)
    filt = ctypes.create_string_buffer(code, len(code))
    # struct sock_fprog { unsigned short len; struct sock_filter *filter; }
    fprog = struct.pack("<HxxxxxxQ", len(code) // 8, ctypes.addressof(filt))
    fbuf = ctypes.create_string_buffer(fprog, len(fprog))
    if _sys().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fbuf), 0, 0) != 0:
        errors.append(f"seccomp: {_err()}")
        return False
    return True
