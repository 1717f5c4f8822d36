"""The seccomp filter of the grading sandbox: a classic-BPF program handed to ``bwrap --seccomp FD``.

What it refuses (``EPERM`` unless noted), for every process of a hand-in:

* debugging and reading other processes: ``ptrace``, ``process_vm_readv/writev``, ``pidfd_getfd``, ``kcmp``;
* namespaces: ``unshare``, ``setns``, and ``clone`` with any ``CLONE_NEW*`` flag (a new user namespace
  above all); ``clone3`` gets ``ENOSYS`` (its flags live in memory, which BPF cannot read), so the C
  library falls back to ``clone``, which is checked;
* mounts: ``mount``, ``umount2``, ``pivot_root``, ``chroot`` and the new mount API;
* kernel attack surface a notebook never needs: ``keyctl``/``add_key``/``request_key``, ``bpf``,
  ``perf_event_open``, ``userfaultfd``, ``io_uring_*``, ``fanotify_init``, file handles, modules, kexec,
  reboot, swap, syslog, acct, quotas, clocks, ``iopl``/``ioperm``, ``vhangup``.

A program built for one architecture kills any syscall made with another audit architecture (i386 or
x32 calls on x86-64 would otherwise bypass the numbers below).
"""

from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
OFF_NR, OFF_ARCH, OFF_ARG0_LO = 0, 4, 16

# classic BPF opcodes
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K

RET_KILL_PROCESS = 0x80000000
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000


def ret_errno(code: int) -> int:
    return RET_ERRNO | (code & 0xFFFF)


AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000

# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME
CLONE_NS_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 \
    | 0x00000080

# name: (x86_64, aarch64) syscall numbers (linux uapi unistd_64.h / asm-generic/unistd.h)
SYSCALLS = {
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "pidfd_getfd": (438, 438), "kcmp": (312, 272),
    "unshare": (272, 97), "setns": (308, 268),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442),
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "fanotify_init": (300, 262), "name_to_handle_at": (303, 264), "open_by_handle_at": (304, 265),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "reboot": (169, 142),
    "swapon": (167, 224), "swapoff": (168, 225), "syslog": (103, 116), "acct": (163, 89),
    "quotactl": (179, 60), "settimeofday": (164, 170), "clock_settime": (227, 112),
    "clock_adjtime": (305, 266), "adjtimex": (159, 171), "lookup_dcookie": (212, 18),
    "vhangup": (153, 58), "iopl": (172, None), "ioperm": (173, None),
    "clone": (56, 220), "clone3": (435, 435),
}
DENIED = [n for n in SYSCALLS if n not in ("clone", "clone3")]


def machine() -> str:
    m = platform.machine()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m.lower(), m)


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)


def program(arch: str | None = None) -> bytes:
    """The filter as the bytes of a ``struct sock_filter`` array (what ``bwrap --seccomp`` reads)."""
    arch = machine() if arch is None else arch
    if arch not in AUDIT_ARCH:
        raise ValueError(f"arch: no seccomp filter for {arch!r} (known: {', '.join(AUDIT_ARCH)})")
    col = 0 if arch == "x86_64" else 1
    nr = {name: nums[col] for name, nums in SYSCALLS.items() if nums[col] is not None}
    out = [
        _insn(LD_W_ABS, 0, 0, OFF_ARCH),
        _insn(JEQ_K, 1, 0, AUDIT_ARCH[arch]),
        _insn(RET_K, 0, 0, RET_KILL_PROCESS),
        _insn(LD_W_ABS, 0, 0, OFF_NR),
    ]
    if arch == "x86_64":  # x32 ABI calls carry bit 30 and share the audit arch
        out += [_insn(JGE_K, 0, 1, X32_SYSCALL_BIT), _insn(RET_K, 0, 0, ret_errno(errno.ENOSYS))]
    for name in DENIED:
        if name in nr:
            out += [_insn(JEQ_K, 0, 1, nr[name]), _insn(RET_K, 0, 0, ret_errno(errno.EPERM))]
    out += [_insn(JEQ_K, 0, 1, nr["clone3"]), _insn(RET_K, 0, 0, ret_errno(errno.ENOSYS))]
    out += [
        _insn(JEQ_K, 0, 4, nr["clone"]),
        _insn(LD_W_ABS, 0, 0, OFF_ARG0_LO if _little_endian() else OFF_ARG0_LO + 4),
        _insn(JSET_K, 0, 1, CLONE_NS_FLAGS),
        _insn(RET_K, 0, 0, ret_errno(errno.EPERM)),
        _insn(RET_K, 0, 0, RET_ALLOW),
        _insn(RET_K, 0, 0, RET_ALLOW),
    ]
    return b"".join(out)


def _little_endian() -> bool:
    return struct.pack("=H", 1) == b"\x01\x00"
