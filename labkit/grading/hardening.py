"""The driver's own protection, set before it starts a kernel: no tracing, no new user namespaces.

`harden` is the driver's first act (`labkit.grading.driver`), in every mode (root, unprivileged,
``--no-sandbox``), and everything the driver starts inherits what it can inherit:

1. ``prctl(PR_SET_DUMPABLE, 0)``: the driver's ``/proc/<pid>/environ``, ``mem``, ``fd`` and
   ``maps`` then belong to root, and ``ptrace`` needs a capability no sandbox has. The kernel runs
   as the driver's uid, so without this student code could read the driver's memory (the nonces
   of the kernels still to come) or write into its event stream through ``/proc/<pid>/fd``. (A
   process that calls ``exec`` becomes dumpable again: the kernel is, the driver is not.)
2. ``prctl(PR_SET_NO_NEW_PRIVS, 1)``, which a seccomp filter requires and which also keeps any
   set-uid program from raising privileges.
3. A seccomp filter that refuses to create user namespaces: ``unshare`` and ``clone`` with
   ``CLONE_NEWUSER`` fail with EPERM, ``clone3`` (whose flags a filter cannot read) with ENOSYS,
   so that the C library falls back to ``clone``, and so do system calls of another ABI (x32, or
   32-bit calls from a 64-bit process), which could otherwise slip past the numbers below.
   Inside a user namespace of its own, student code would be "root" there and could mount over
   ``/usr`` or the private ``/tmp`` of its own view (``unshare -Urm``). Unprivileged bubblewrap
   has ``--disable-userns`` for this; a sandbox built as root has no user namespace to disable,
   so the filter does it in every mode alike.

The filter is a classic BPF program, built here from the kernel's documented constants
(``linux/seccomp.h``, ``linux/filter.h``, ``linux/audit.h``) for x86-64 and AArch64.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CLONE_NEWUSER = 0x10000000

# BPF instruction classes and modes (linux/filter.h)
BPF_LD, BPF_JMP, BPF_RET = 0x00, 0x05, 0x06
BPF_W, BPF_ABS, BPF_K = 0x00, 0x20, 0x00
BPF_JEQ, BPF_JGE, BPF_JSET = 0x10, 0x30, 0x40
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
X32_SYSCALL_BIT = 0x40000000

# (audit architecture, unshare, clone, clone3) per machine (linux/audit.h, the syscall tables)
ARCHITECTURES = {
    "x86_64": (0xC000003E, 272, 56, 435),
    "aarch64": (0xC00000B7, 97, 220, 435),
}
# offsets in struct seccomp_data: nr, arch, then args[6] (the low word of args[0] first, little-endian)
NR, ARCH, ARG0_LOW = 0, 4, 16


class HardeningError(OSError):
    """The driver could not protect itself (the message says which step failed).

    Examples
    --------
    >>> try:
    ...     user_namespace_filter("vax")
    ... except HardeningError as error:
    ...     print(error.strerror)
    no seccomp filter for 'vax' (known: x86_64, aarch64)
    """


def _insn(code, k, jt=0, jf=0):
    return struct.pack("HBBI", code, jt, jf, k)


def user_namespace_filter(machine: str | None = None) -> bytes:
    """The BPF program (bytes, 8 per instruction) that refuses new user namespaces.

    Steps: a call of another architecture is refused; the x32 ABI is refused; ``clone3`` gets
    ENOSYS; ``unshare`` and ``clone`` whose first argument has ``CLONE_NEWUSER`` get EPERM;
    everything else is allowed.

    Parameters
    ----------
    machine : str, optional
        "x86_64" or "aarch64" (default: this machine's, ``platform.machine()``).

    Returns
    -------
    bytes
        13 instructions of 8 bytes.

    Raises
    ------
    HardeningError
        For another architecture.

    Examples
    --------
    >>> len(user_namespace_filter("x86_64")) // 8, len(user_namespace_filter("aarch64")) // 8
    (13, 13)
    """
    machine = machine or platform.machine()
    if machine not in ARCHITECTURES:
        raise HardeningError(errno.ENOSYS, f"no seccomp filter for {machine!r} (known: {', '.join(ARCHITECTURES)})")
    arch, unshare, clone, clone3 = ARCHITECTURES[machine]
    deny, nosys = SECCOMP_RET_ERRNO | errno.EPERM, SECCOMP_RET_ERRNO | errno.ENOSYS
    program = [
        _insn(BPF_LD | BPF_W | BPF_ABS, ARCH),                  # 0  A = arch
        _insn(BPF_JMP | BPF_JEQ | BPF_K, arch, 0, 9),           # 1  other ABI -> 11 (deny)
        _insn(BPF_LD | BPF_W | BPF_ABS, NR),                    # 2  A = syscall number
        _insn(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 7, 0),  # 3  x32 -> 11 (deny)
        _insn(BPF_JMP | BPF_JEQ | BPF_K, clone3, 7, 0),         # 4  clone3 -> 12 (ENOSYS)
        _insn(BPF_JMP | BPF_JEQ | BPF_K, unshare, 1, 0),        # 5  unshare -> 7
        _insn(BPF_JMP | BPF_JEQ | BPF_K, clone, 0, 2),          # 6  clone -> 7, else -> 9
        _insn(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW),              # 7  A = flags
        _insn(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 1, 0),  # 8  CLONE_NEWUSER -> 10 (deny)
        _insn(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),              # 9  allow
        _insn(BPF_RET | BPF_K, deny),                           # 10 EPERM
        _insn(BPF_RET | BPF_K, deny),                           # 11 EPERM (other ABI)
        _insn(BPF_RET | BPF_K, nosys),                          # 12 ENOSYS
    ]
    return b"".join(program)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _prctl(libc, option, *args):
    args = [ctypes.c_ulong(a) if isinstance(a, int) else a for a in args] + [ctypes.c_ulong(0)] * (4 - len(args))
    if libc.prctl(option, *args) != 0:
        code = ctypes.get_errno()
        raise HardeningError(code, f"prctl({option}) failed: {os.strerror(code)}")


def harden() -> None:
    """Make this process undumpable, set no_new_privs and install `user_namespace_filter`.

    It cannot be undone: the driver calls it as its first act, in a process of its own.

    Raises
    ------
    HardeningError
        If a step fails (the caller decides whether to go on without it).

    Examples
    --------
    In a child process (never in one that must go on making sandboxes), a user namespace is
    refused afterwards:

    >>> import subprocess, sys
    >>> code = ("from labkit.grading.hardening import harden; harden(); import subprocess; "
    ...         "print(subprocess.run(['unshare', '--user', 'true'], capture_output=True).returncode != 0)")
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    'True\\n'
    """
    libc = ctypes.CDLL(None, use_errno=True)
    _prctl(libc, PR_SET_DUMPABLE, 0)
    _prctl(libc, PR_SET_NO_NEW_PRIVS, 1)
    code = user_namespace_filter()
    buffer = ctypes.create_string_buffer(code, len(code))
    program = _SockFprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _prctl(libc, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program))
