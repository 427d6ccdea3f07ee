"""Restrictions a sandboxed process puts on itself before it runs untrusted code.

STANDALONE: standard library only (the sandboxed process runs this source; nothing here may
import longpuzzle). Every step is best effort and reported: a kernel without Landlock or a
container that forbids seccomp still gets the others, and :func:`apply` says what held.

    rlimits        address space (memory), CPU seconds in total, no core files, file size,
                   open files
    no_new_privs   prctl(PR_SET_NO_NEW_PRIVS): no privilege gain through exec (needed by the
                   next two)
    landlock       Linux 5.13+: the filesystem becomes read-only on the given roots (the
                   Python runtime, its libraries, a few system files), read-write in the
                   process's own work folder and invisible everywhere else; it also keeps
                   the process from tracing or reading the memory of processes outside its
                   domain, and (ABI 6, Linux 6.12+) from signalling them or reaching their
                   abstract unix sockets
    capabilities   all capabilities dropped (a process started by root keeps uid 0 but no
                   power beyond a file owner's)
    seccomp        no new processes (fork, vfork, clone without CLONE_THREAD, exec), no
                   ptrace or process_vm_readv/writev; threads stay allowed (x86_64, aarch64)

Call :func:`apply` in the sandboxed process while it is still single-threaded (Landlock and
seccomp bind the calling thread and the threads it starts later).
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

ARCH = {  # machine -> (AUDIT_ARCH, syscall numbers)
    "x86_64": (0xC000003E, {"clone": 56, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone3": 435,
                            "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "capset": 126}),
    "aarch64": (0xC00000B7, {"clone": 220, "execve": 221, "execveat": 281, "clone3": 435, "ptrace": 117,
                             "process_vm_readv": 270, "process_vm_writev": 271, "capset": 91}),
}
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
    ``read`` (paths readable), ``write`` (paths writable), ``processes`` (True keeps
    process creation), ``landlock`` / ``seccomp`` / ``drop_capabilities`` (False skips)."""
    rep: dict = {"platform": platform.system().lower(), "errors": []}
    rep["rlimits"] = _rlimits(conf, rep["errors"])
    if rep["platform"] != "linux":
        rep.update(no_new_privs=False, landlock=0, landlock_scoped=False, capabilities_dropped=False, seccomp=False)
        return rep
    lib = _sys()
    rep["no_new_privs"] = lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    if not rep["no_new_privs"]:
        rep["errors"].append(f"no_new_privs: {_err()}")
    rep["landlock"], rep["landlock_scoped"] = 0, False
    if conf.get("landlock", True) and rep["no_new_privs"]:
        try:
            rep["landlock"], rep["landlock_scoped"] = _landlock(conf.get("read", ()), conf.get("write", ()),
                                                                rep["errors"])
        except OSError as e:
            rep["errors"].append(f"landlock: {e}")
    rep["capabilities_dropped"] = _drop_capabilities(rep["errors"]) if conf.get("drop_capabilities", True) else False
    rep["seccomp"] = False
    if conf.get("seccomp", True) and not conf.get("processes", False) and rep["no_new_privs"]:
        rep["seccomp"] = _seccomp(rep["errors"])
    return rep


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


def _landlock(read, write, errors: list) -> tuple[int, bool]:
    abi = landlock_abi()
    if abi < 1:
        errors.append("landlock: not available in this kernel")
        return 0, False
    lib = _sys()
    handled = (1 << 13) - 1
    if abi >= 2:
        handled |= 1 << 13                      # REFER
    if abi >= 3:
        handled |= FS_TRUNCATE
    if abi >= 5:
        handled |= FS_IOCTL_DEV
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    # struct landlock_ruleset_attr { u64 handled_access_fs, handled_access_net, scoped; }
    attr = struct.pack("<QQQ", handled, 0, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    buf = ctypes.create_string_buffer(attr[:size], size)
    rfd = lib.syscall(SYS_LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if rfd < 0:
        errors.append(f"landlock: create_ruleset: {_err()}")
        return 0, False
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
            return 0, False
    finally:
        os.close(rfd)
    return abi, bool(scoped)


# ---- capabilities ---------------------------------------------------------------------------

def _drop_capabilities(errors: list) -> bool:
    lib = _sys()
    arch = ARCH.get(platform.machine())
    if arch is None:
        errors.append(f"capabilities: unknown machine {platform.machine()}")
        return False
    lib.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(64):
        if lib.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
            break                               # past the last capability this kernel knows
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
        rel = (lambda lab: 0 if lab is None else labels[lab] - pos - 1)
        out.append(struct.pack("<HBBI", code, rel(jt), rel(jf), k & 0xFFFFFFFF))
        pos += 1
    return b"".join(out)


def _seccomp(errors: list) -> bool:
    arch = ARCH.get(platform.machine())
    if arch is None:
        errors.append(f"seccomp: no syscall table for {platform.machine()}")
        return False
    audit, nr = arch
    LD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
    ALLOW, KILL = 0x7FFF0000, 0x80000000
    deny = [nr[n] for n in ("fork", "vfork", "execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev")
            if n in nr]
    prog = [(LD, 4, None, None), (JEQ, audit, None, "kill"), (LD, 0, None, None)]
    if audit == 0xC000003E:
        prog.append((JGE, 0x40000000, "kill", None))        # no x32 syscalls
    for n in deny:
        prog.append((JEQ, n, "eperm", None))
    prog += [(JEQ, nr["clone3"], "enosys", None),             # libc then falls back to clone()
             (JEQ, nr["clone"], "clone", None),
             (RET, ALLOW, None, None),
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
