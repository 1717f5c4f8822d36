"""Where do the kernels run: on a CUDA GPU, or in Triton's CPU interpreter?

Importing this module decides it, *before* triton is imported anywhere: with no CUDA device it sets
``TRITON_INTERPRET=1`` (and says so once, in one line), so every ``@triton.jit`` kernel defined
afterwards runs on CPU tensors through NumPy. Every module of ``gemm_lab`` that imports triton
imports this one first.

An explicit ``TRITON_INTERPRET`` in the environment wins: ``TRITON_INTERPRET=1`` forces the
interpreter even on a GPU machine, ``TRITON_INTERPRET=0`` forbids it (useful to see the real error).

Public names: ``INTERPRET``, ``describe()``, ``check_environment()``, ``device()``, ``on_gpu()``.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings

_TRUE = {"1", "true", "yes", "on"}


@functools.lru_cache(maxsize=1)
def _cuda_available() -> bool:
    import torch  # here, not at the top: with TRITON_INTERPRET set, a compile-only process never needs torch

    try:
        return bool(torch.cuda.is_available()) and torch.cuda.device_count() > 0
    except Exception:  # a broken driver counts as no GPU
        return False


def _decide() -> tuple[bool, str]:
    env = os.environ.get("TRITON_INTERPRET")
    if env is not None and env.strip() != "":
        forced = env.strip().lower() in _TRUE
        return forced, f"TRITON_INTERPRET={env} set by the caller"
    if _cuda_available():
        return False, "CUDA device found"
    if "triton" in sys.modules:
        # triton was imported before us: its knobs read the variable lazily, so setting it still
        # works for kernels defined from now on, but kernels defined earlier stay compiled ones.
        warnings.warn(
            "triton was imported before gemm_lab.runtime; kernels defined before this point "
            "will not use the CPU interpreter",
            RuntimeWarning,
            stacklevel=3,
        )
    os.environ["TRITON_INTERPRET"] = "1"
    print("[gemm_lab] no CUDA device: Triton kernels run in the CPU interpreter (TRITON_INTERPRET=1)")
    return True, "no CUDA device"


INTERPRET, _REASON = _decide()


@functools.lru_cache(maxsize=1)
def on_gpu() -> bool:
    """True when kernels are compiled for and launched on a CUDA device."""
    return not INTERPRET and _cuda_available()


@functools.lru_cache(maxsize=1)
def device() -> str:
    """The torch device kernels' tensors must live on: ``"cuda"`` or ``"cpu"`` (interpreter)."""
    return "cuda" if on_gpu() else "cpu"


def where() -> str:
    """Where this Python runs: "colab", "kaggle" or "local"."""
    if "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ or "COLAB_GPU" in os.environ:
        return "colab"
    if "KAGGLE_KERNEL_RUN_TYPE" in os.environ or "KAGGLE_URL_BASE" in os.environ:
        return "kaggle"
    return "local"


def _triton_version() -> str:
    try:
        import triton

        return triton.__version__
    except Exception as exc:  # pragma: no cover - triton is a hard dependency of the kernels
        return f"unavailable ({exc.__class__.__name__})"


def _version_tuple(v: str) -> tuple[int, ...]:
    out = []
    for part in v.split("+")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if digits == "":
            break
        out.append(int(digits))
    return tuple(out)


def describe() -> dict:
    """A dict describing the device and the software: what ``check_environment()`` prints.

    Keys: ``mode`` ("gpu" | "interpreter"), ``reason``, ``where``, ``device_name``,
    ``compute_capability`` ("8.0"-style string or None), ``arch`` ("sm_80" or None), ``sms``,
    ``smem_per_block_optin`` (bytes), ``l2_bytes``, ``total_memory_bytes``, ``torch``, ``triton``,
    ``python``, ``warnings`` (list of strings).
    """
    import torch

    info: dict = {
        "mode": "gpu" if on_gpu() else "interpreter",
        "reason": _REASON,
        "where": where(),
        "device_name": "CPU (Triton interpreter)",
        "compute_capability": None,
        "arch": None,
        "sms": None,
        "smem_per_block_optin": None,
        "l2_bytes": None,
        "total_memory_bytes": None,
        "torch": torch.__version__,
        "triton": _triton_version(),
        "python": sys.version.split()[0],
        "warnings": [],
    }
    if _cuda_available():
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        cc = (props.major, props.minor)
        info.update(
            device_name=props.name,
            compute_capability=f"{cc[0]}.{cc[1]}",
            arch=f"sm_{cc[0]}{cc[1]}",
            sms=props.multi_processor_count,
            smem_per_block_optin=getattr(props, "shared_memory_per_block_optin", None),
            l2_bytes=getattr(props, "L2_cache_size", None),
            total_memory_bytes=props.total_memory,
        )
        if cc == (7, 5):
            msg = (
                "sm_75 (e.g. Tesla T4): since triton 3.4 tl.dot falls back to FP32 FMA instructions "
                "(no tensor cores) and num_stages is ignored (no cp.async pipelining); Triton "
                "supports compute capability 8.0+"
            )
            if _version_tuple(info["triton"]) < (3, 4):
                msg = "sm_75 (e.g. Tesla T4): this triton may fail to compile tl.dot for sm_75; " + msg
            info["warnings"].append(msg)
        elif cc < (7, 5):
            info["warnings"].append(f"compute capability {cc[0]}.{cc[1]} is older than Triton supports")
    return info


def _fmt_bytes(n) -> str:
    if n is None:
        return "?"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.0f} MiB"
    return f"{n / 1024:.0f} KiB ({n:,} B)"


def check_environment(file=None) -> dict:
    """Print a one-block summary of the device and versions (warns on sm_75); return ``describe()``."""
    info = describe()
    out = file or sys.stdout
    if info["arch"] is not None:
        print(
            f"GPU: {info['device_name']} ({info['arch']}, compute capability {info['compute_capability']}), "
            f"{info['sms']} SMs, shared memory per block (opt-in) {_fmt_bytes(info['smem_per_block_optin'])}, "
            f"L2 {_fmt_bytes(info['l2_bytes'])}",
            file=out,
        )
        if info["mode"] != "gpu":
            print(f"Kernels run in the Triton interpreter anyway ({info['reason']})", file=out)
    else:
        print(f"No GPU: Triton interpreter on the CPU ({info['reason']})", file=out)
    print(
        f"torch {info['torch']}, triton {info['triton']}, python {info['python']}, running on: {info['where']}",
        file=out,
    )
    for w in info["warnings"]:
        print(f"WARNING: {w}", file=out)
        warnings.warn(w, RuntimeWarning, stacklevel=2)
    return info


@functools.lru_cache(maxsize=1)
def num_sms() -> int | None:
    """Number of SMs of the current CUDA device (None in the interpreter)."""
    if not _cuda_available():
        return None
    import torch

    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


@functools.lru_cache(maxsize=1)
def capability() -> tuple[int, int] | None:
    """(major, minor) of the current CUDA device, None in the interpreter."""
    if not on_gpu():
        return None
    import torch

    return torch.cuda.get_device_capability()


GRADING_ENV = "GEMM_LAB_GRADING"


def grading_mode() -> bool:
    """True while the autograder runs the notebook (it sets ``GEMM_LAB_GRADING=1`` in the kernel).

    Demonstration cells that carry no points read it to skip their expensive interpreter runs; no
    graded cell may depend on what such a cell computes. Students never see it set.
    """
    return os.environ.get(GRADING_ENV, "").strip().lower() in _TRUE
