"""The compile pipeline of one kernel at one configuration: TTIR -> TTGIR -> LLIR -> PTX -> CUBIN.

``compile_artifacts("matmul", config, target="sm_90")`` cross-compiles one of the course's kernels for
a named target with ``triton.compile(ASTSource(...), target=GPUTarget("cuda", cc, 32))``: no GPU is
needed, it takes a second or a few, and it works while ``TRITON_INTERPRET=1`` is set (the kernels of
``gemm_lab.kernels`` are then interpreter objects; the original Python function is re-wrapped as a
real ``JITFunction``). On a GPU, ``target=None`` compiles for the live device and also reports the
registers per thread and spills (``n_regs``, ``n_spills``), which only exist once the binary is
loaded onto a device. On a CPU-only machine ``target=None`` means ``DEFAULT_CPU_TARGET``.

``compile_jit(fn, signature, constexprs, target)`` does the same for a student's own @triton.jit
function. Results are cached per process (and triton's own cache keeps the binaries on disk).

``Artifacts.highlights(stage)`` picks out the lines a student should look at: ``tt.dot`` in TTIR; the
``#blocked``/``#shared``/``#mma``/``#dot_op`` layouts, ``local_alloc``, async copies and TMA, and
``warp_group_dot`` in TTGIR; ``mma.sync``/``wgmma``, ``cp.async``/``cp.async.bulk.tensor``,
``ld.global``/``st.global`` in PTX; HMMA/HGMMA/FFMA in the SASS disassembly of the CUBIN.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import threading
import types
from dataclasses import dataclass, field

from gemm_lab import runtime  # before triton: decides TRITON_INTERPRET

# isort: split
import triton
from triton.compiler import ASTSource
from triton.runtime.jit import JITFunction

try:  # GPUTarget moved between versions
    from triton.backends.compiler import GPUTarget
except ImportError:  # pragma: no cover
    from triton.compiler.compiler import GPUTarget

try:
    from triton.runtime.interpreter import InterpretedFunction
except ImportError:  # pragma: no cover
    InterpretedFunction = ()

STAGES = ("ttir", "ttgir", "llir", "ptx", "cubin")
# sm_100 (datacenter Blackwell) uses tcgen05 with Tensor Memory; sm_120 (consumer Blackwell, RTX 50 / RTX Pro 6000)
# keeps mma.sync: it has neither wgmma nor tcgen05
TARGETS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")
DEFAULT_CPU_TARGET = "sm_80"
DTYPES = {"fp16": "fp16", "float16": "fp16", "bf16": "bf16", "bfloat16": "bf16", "fp32": "fp32", "float32": "fp32"}

# what a student should look at in each stage (regular expressions, matched per line)
HIGHLIGHTS = {
    "ttir": [r"tt\.dot\b", r"tt\.load", r"tt\.store", r"scf\.for", r"tt\.descriptor_load", r"tt\.descriptor_store"],
    "ttgir": [r"^#\w+ = #ttg\.(blocked|nvidia_mma|amd_mma|nvmma_shared|swizzled_shared|shared|dot_op)",
              r"ttg\.local_alloc", r"ttg\.local_load", r"ttg\.convert_layout", r"ttg\.async_copy_global_to_local",
              r"ttg\.async_wait", r"ttng\.async_tma_copy", r"ttng\.warp_group_dot", r"ttng\.tc_gen5_mma", r"ttng\.tmem_alloc",
              r"ttng\.barrier_expect",
              r"tt\.dot\b"],
    "llir": [r"mma", r"cp\.async", r"ldmatrix", r"addrspace\(3\)"],
    "ptx": [r"\bmma\.sync", r"\bwgmma\.", r"\btcgen05\.(mma|alloc|ld)\b", r"\bcp\.async", r"\bld\.global", r"\bst\.global", r"\bldmatrix",
            r"\bbar\.sync|\bbarrier\.", r"\bfma\.rn\.f32"],
    "sass": [r"\bUTC\w*MMA\b", r"\bHGMMA\b", r"\bHMMA\b", r"\bFFMA\b", r"\bLDGSTS\b", r"\bUTMALDG\b", r"\bLDSM\b", r"\bSTG\b",
             r"\bLDG\b"],
}
# instruction counts reported by Artifacts.summary() (PTX mnemonics)
PTX_COUNTS = {
    "mma.sync": r"\bmma\.sync\.aligned",
    "wgmma": r"\bwgmma\.mma_async",
    "tcgen05.mma": r"\btcgen05\.mma\b",
    "cp.async": r"\bcp\.async\.(ca|cg)\.",
    "cp.async.bulk.tensor": r"\bcp\.async\.bulk\.tensor",
    "ld.global": r"\bld\.global",
    "st.global": r"\bst\.global",
    "fma.rn.f32": r"\bfma\.rn\.f32",
}


@dataclass(frozen=True)
class Artifacts:
    """Every stage of one compiled kernel, and its metadata (shared bytes, warps, stages, ...)."""

    target: str
    ttir: str
    ttgir: str
    llir: str
    ptx: str
    cubin: bytes
    metadata: dict
    kernel: str = ""
    config: dict = field(default_factory=dict)

    @property
    def shared(self) -> int:
        return int(self.metadata["shared"])

    def stage(self, name: str):
        if name not in STAGES:
            raise ValueError(f"stage must be one of {STAGES}, got {name!r}")
        return getattr(self, name)

    @functools.cached_property
    def sass(self) -> str:
        """The CUBIN disassembled with cuobjdump (shipped with triton); '' where it is unavailable."""
        try:
            from triton.tools.disasm import get_sass

            return get_sass(self.cubin)
        except Exception:
            return ""

    def highlights(self, stage: str, limit: int | None = None) -> list[str]:
        """The lines of ``stage`` worth reading (see ``HIGHLIGHTS``); "cubin" means its SASS."""
        if stage == "cubin":
            text, key = self.sass, "sass"
        elif stage == "sass":
            text, key = self.sass, "sass"
        else:
            text, key = self.stage(stage), stage
        pats = [re.compile(p) for p in HIGHLIGHTS[key]]
        lines = [ln.strip() for ln in text.splitlines() if any(p.search(ln) for p in pats)]
        return lines if limit is None else lines[:limit]

    def count(self, pattern: str, stage: str = "ptx") -> int:
        """Number of lines of ``stage`` matching a regular expression."""
        rx = re.compile(pattern)
        text = self.sass if stage in ("sass", "cubin") else self.stage(stage)
        return sum(1 for ln in text.splitlines() if rx.search(ln))

    def summary(self) -> dict:
        """One row for a table: target, config, shared, warps, stages, registers, spills, key instructions."""
        row = {"kernel": self.kernel, "target": self.target, **self.config}
        for key in ("shared", "num_warps", "num_stages", "n_regs", "n_spills"):
            row[key] = self.metadata.get(key)
        for name, pat in PTX_COUNTS.items():
            row[name] = self.count(pat)
        row["mma"] = ("tcgen05" if row["tcgen05.mma"] else "wgmma" if row["wgmma"] else "mma.sync" if row["mma.sync"] else "fma" if row["fma.rn.f32"]
                      else "none")
        return row


# ------------------------------------------------------------------------------------- targets
def parse_target(target) -> tuple[str, int]:
    """"sm_90" / "sm_90a" / 90 / (9, 0) -> ("sm_90", 90)."""
    if isinstance(target, tuple):
        cc = target[0] * 10 + target[1]
    elif isinstance(target, int):
        cc = target
    elif isinstance(target, str) and re.fullmatch(r"sm_\d{2,3}a?", target):
        cc = int(target[3:].rstrip("a"))
    else:
        raise ValueError(f"target must look like 'sm_80' (or 80, or (8, 0)), got {target!r}")
    if cc < 75:
        raise ValueError(f"Triton does not compile for compute capability {cc} (sm_75 is the oldest tried here)")
    return f"sm_{cc}", cc


def live_target() -> tuple[str, int] | None:
    cc = runtime.capability()
    return None if cc is None else parse_target(cc)


def _gpu_target(cc: int) -> GPUTarget:
    return GPUTarget("cuda", cc, 32)


# ---------------------------------------------------------------- plain function -> JITFunction
def as_jit_function(fn) -> JITFunction:
    """A compilable ``JITFunction`` for ``fn`` (a JITFunction, an interpreter-wrapped kernel, or a plain
    Python function). Interpreter wrappers among its globals (helpers it calls) are converted too."""
    if isinstance(fn, JITFunction):
        return fn
    py = _python_function(fn)
    hit = _AS_JIT.get(id(py))
    if hit is None or hit[0] is not py:
        hit = _AS_JIT[id(py)] = (py, _as_jit(fn, {}))
    return hit[1]


_AS_JIT: dict = {}


def _python_function(fn):
    if isinstance(fn, JITFunction) or (InterpretedFunction and isinstance(fn, InterpretedFunction)):
        return fn.fn
    if isinstance(fn, types.FunctionType):
        return fn
    raise TypeError(f"expected a @triton.jit function, got {type(fn).__name__}")


def _as_jit(fn, memo: dict) -> JITFunction:
    if isinstance(fn, JITFunction):
        return fn
    if InterpretedFunction and isinstance(fn, InterpretedFunction):
        py = fn.fn
    elif isinstance(fn, types.FunctionType):
        py = fn
    else:
        raise TypeError(f"expected a @triton.jit function, got {type(fn).__name__}")
    if id(py) in memo:
        return memo[id(py)]
    globs = dict(py.__globals__)
    new = types.FunctionType(py.__code__, globs, py.__name__, py.__defaults__, py.__closure__)
    new.__module__, new.__qualname__, new.__doc__ = py.__module__, py.__qualname__, py.__doc__
    new.__kwdefaults__ = py.__kwdefaults__
    new.__annotations__ = dict(py.__annotations__)  # tl.constexpr marks: binding/launching needs them
    jf = JITFunction(new)
    memo[id(py)] = jf
    for name, val in py.__globals__.items():
        if InterpretedFunction and isinstance(val, InterpretedFunction):
            globs[name] = _as_jit(val, memo)
    return jf


# ------------------------------------------------------- compiling while the interpreter is on
_LOCK = threading.RLock()


@contextlib.contextmanager
def compiler_mode():
    """Make triton.language's own @jit helpers (tl.cdiv, the reductions' combine functions, ...)
    compilable while ``TRITON_INTERPRET=1``: they were wrapped as interpreter functions when triton
    was imported. They are swapped for JITFunctions for the duration of the block, then restored."""
    from gemm_lab._lang_state import pristine_language

    if not InterpretedFunction:
        yield
        return
    with _LOCK, pristine_language():
        swapped = []
        mods = [m for name, m in list(sys.modules.items())
                if m is not None and (name == "triton.language" or name.startswith("triton.language."))]
        made: dict = {}
        for mod in mods:
            for attr, val in list(vars(mod).items()):
                if isinstance(val, InterpretedFunction):
                    jf = made.get(id(val))
                    if jf is None:
                        jf = made[id(val)] = JITFunction(val.fn)
                    swapped.append((mod, attr, val))
                    setattr(mod, attr, jf)
        try:
            yield
        finally:
            for mod, attr, val in swapped:
                setattr(mod, attr, val)


# --------------------------------------------------------------------------- the compile call
def _make_source(jf: JITFunction, signature: dict, constexprs: dict, divisible: tuple[str, ...]) -> ASTSource:
    names = jf.arg_names
    sig = {}
    consts = {}
    for name in names:
        if name in constexprs:
            sig[name] = "constexpr"
            consts[(names.index(name),)] = constexprs[name]
        elif name in signature:
            sig[name] = signature[name]
        else:
            raise ValueError(f"argument {name!r} of {jf.__name__} has neither a type in signature nor a constexpr value")
    unknown = set(signature) | set(constexprs) - set(names)
    unknown -= set(names)
    if unknown:
        raise ValueError(f"{jf.__name__} has no arguments named {sorted(unknown)}")
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in divisible if n in sig and sig[n] != "constexpr"}
    try:
        return ASTSource(fn=jf, signature=sig, constexprs=consts, attrs=attrs)
    except TypeError:  # pragma: no cover - older triton spelled it `constants`
        return ASTSource(fn=jf, signature=sig, constants=consts, attrs=attrs)


def _metadata_dict(md) -> dict:
    if hasattr(md, "_asdict"):
        d = dict(md._asdict())
    elif isinstance(md, dict):
        d = dict(md)
    else:
        d = {k: getattr(md, k) for k in dir(md) if not k.startswith("_")}
    keep = {}
    for k, val in d.items():
        if isinstance(val, (int, float, str, bool, type(None))):
            keep[k] = val
        elif isinstance(val, tuple) and all(isinstance(x, (int, float, str, bool)) for x in val):
            keep[k] = val
    keep.setdefault("n_regs", None)
    keep.setdefault("n_spills", None)
    return keep


def _compile(jf: JITFunction, signature: dict, constexprs: dict, divisible: tuple[str, ...], target,
             num_warps: int, num_stages: int, kernel_name: str, config: dict) -> Artifacts:
    live = live_target()
    if target is None:
        name, cc = live if live is not None else parse_target(DEFAULT_CPU_TARGET)
    else:
        name, cc = parse_target(target)
    src = _make_source(jf, signature, constexprs, divisible)
    options = {"num_warps": num_warps, "num_stages": num_stages}
    with compiler_mode():
        compiled = triton.compile(src, target=_gpu_target(cc), options=options)
    md = _metadata_dict(compiled.metadata)
    if live is not None and live[1] == cc and runtime.on_gpu():
        try:  # loading the binary onto the device is what reports registers and spills
            compiled._init_handles()
            md["n_regs"] = int(compiled.n_regs)
            md["n_spills"] = int(compiled.n_spills)
        except Exception as exc:  # e.g. OutOfResources: keep the artifacts, say why
            md["load_error"] = f"{exc.__class__.__name__}: {exc}"
    asm = compiled.asm
    return Artifacts(target=name, kernel=kernel_name, ttir=asm.get("ttir", ""), ttgir=asm.get("ttgir", ""),
                     llir=asm.get("llir", ""), ptx=asm.get("ptx", ""), cubin=asm.get("cubin", b""), metadata=md,
                     config=dict(config))


# ------------------------------------------------------------------------- course kernels
def _config_dict(config) -> dict:
    if config is None:
        return dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, num_stages=4, num_warps=4)
    if isinstance(config, dict):
        d = dict(config)
    else:
        d = {k: getattr(config, k) for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages", "num_warps")
             if hasattr(config, k)}
    for tut, ours in (("BLOCK_SIZE_M", "BLOCK_M"), ("BLOCK_SIZE_N", "BLOCK_N"), ("BLOCK_SIZE_K", "BLOCK_K"),
                      ("GROUP_SIZE_M", "GROUP_M")):
        if tut in d:
            d[ours] = d.pop(tut)
    missing = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages", "num_warps"} - set(d)
    if missing:
        raise ValueError(f"config lacks {sorted(missing)}")
    for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps"):
        val = d[k]
        if not isinstance(val, int) or val < 1 or val & (val - 1):
            raise ValueError(f"config {k} must be a power of two, got {val!r}")
    if not isinstance(d["num_stages"], int) or d["num_stages"] < 1:
        raise ValueError(f"config num_stages must be a positive int, got {d['num_stages']!r}")
    return d


def _matmul_spec(kernel: str, cfg: dict, dtype: str, aligned: bool, activation: str | None, num_sms: int):
    from gemm_lab import kernels as K

    ptr = f"*{dtype}"
    ptrs = {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": ptr}
    ints = {n: "i32" for n in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")}
    unit = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1}  # row-major inputs: Triton specializes stride 1
    divisible = ("a_ptr", "b_ptr", "c_ptr") + (tuple(ints) if aligned else ())
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    if kernel == "matmul":
        fn = K.matmul_kernel
        consts = dict(unit, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=cfg.get("GROUP_M", 8),
                      ACTIVATION=activation or "")
    elif kernel == "blog_tiled":
        fn = K.tiled_matmul_kernel
        consts = dict(unit, NUM_STAGES=cfg["num_stages"], BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    elif kernel == "persistent":
        fn = K.persistent_matmul_kernel
        consts = dict(unit, NUM_PROGRAMS=num_sms * cfg.get("programs_per_sm", 1), NUM_STAGES=cfg["num_stages"],
                      BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    elif kernel == "grouped_persistent":
        fn = K.grouped_persistent_kernel
        consts = dict(unit, NUM_PROGRAMS=num_sms * cfg.get("programs_per_sm", 1), NUM_STAGES=cfg["num_stages"],
                      BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg.get("GROUP_M", 8),
                      FLATTEN=bool(cfg.get("flatten", False)), ACTIVATION=activation or "")
    else:  # pragma: no cover - guarded by KERNELS
        raise ValueError(kernel)
    return fn, {**ptrs, **ints}, consts, divisible


def _simple_spec(kernel: str, cfg: dict, dtype: str, aligned: bool):
    from gemm_lab import kernels as K

    ptr = f"*{dtype}"
    if kernel == "vector_add":
        sig = {"x_ptr": ptr, "y_ptr": ptr, "output_ptr": ptr, "n_elements": "i32"}
        consts = {"stride_x": 1, "stride_y": 1, "stride_out": 1, "BLOCK_SIZE": cfg.get("BLOCK_SIZE", 1024),
                  "UPCAST": dtype in ("fp16", "bf16")}
        div = ("x_ptr", "y_ptr", "output_ptr") + (("n_elements",) if aligned else ())
        return K.add_kernel, sig, consts, div
    sig = {"output_ptr": ptr, "input_ptr": ptr, "input_row_stride": "i32", "output_row_stride": "i32",
           "n_rows": "i32", "n_cols": "i32"}
    consts = {"input_col_stride": 1, "output_col_stride": 1, "BLOCK_SIZE": cfg.get("BLOCK_SIZE", 1024)}
    div = ("output_ptr", "input_ptr") + (("input_row_stride", "output_row_stride", "n_cols") if aligned else ())
    return K.softmax_kernel, sig, consts, div


KERNELS = ("matmul", "blog_tiled", "persistent", "grouped_persistent", "vector_add", "softmax")


def compile_artifacts(kernel: str = "matmul", config=None, target=None, dtype: str = "fp16", aligned: bool = True,
                      activation: str | None = None, num_sms: int | None = None) -> Artifacts:
    """Compile one of the course's kernels (``KERNELS``) at one config for ``target``.

    config: a ``gemm_lab.calc.roofline.TileConfig`` or a dict with BLOCK_M, BLOCK_N, BLOCK_K, num_stages,
    num_warps (optional GROUP_M, programs_per_sm, flatten; BLOCK_SIZE for vector_add/softmax); None means
    128x128x32 s4 w4. ``aligned=True`` compiles what Triton builds for 16-byte-divisible pointers, sizes
    and strides (e.g. 4096^3); ``aligned=False`` what it builds when sizes/strides aren't (500x600x300:
    no async-copy pipelining). Row-major inputs (unit inner strides) in both cases.
    ``num_sms`` (persistent kernels' grid, a constexpr) defaults to the live GPU's, else 132 (H100/H200).
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    if activation not in (None, "leaky_relu"):
        raise ValueError(f"activation must be None or 'leaky_relu', got {activation!r}")
    if kernel in ("vector_add", "softmax"):
        cfg = dict(config or {})
        cfg.setdefault("num_warps", 4)
        cfg.setdefault("num_stages", 3)
    else:
        cfg = _config_dict(config)
    target_key = None if target is None else parse_target(target)[0]
    sms = num_sms or runtime.num_sms() or 132
    return _compile_cached(kernel, tuple(sorted(cfg.items())), target_key, DTYPES[dtype], bool(aligned), activation,
                           sms)


@functools.lru_cache(maxsize=256)
def _compile_cached(kernel, cfg_items, target, dtype, aligned, activation, num_sms) -> Artifacts:
    cfg = dict(cfg_items)
    if kernel in ("vector_add", "softmax"):
        fn, sig, consts, div = _simple_spec(kernel, cfg, dtype, aligned)
    else:
        fn, sig, consts, div = _matmul_spec(kernel, cfg, dtype, aligned, activation, num_sms)
    jf = as_jit_function(fn)
    shown = {k: val for k, val in cfg.items()}
    return _compile(jf, sig, consts, div, target, cfg["num_warps"], cfg["num_stages"], kernel, shown)


def compile_jit(fn, signature: dict, constexprs: dict | None = None, target=None, *, num_warps: int = 4,
                num_stages: int = 3, divisible: tuple[str, ...] | None = None, cache: bool = True) -> Artifacts:
    """Compile a student's own @triton.jit function.

    signature: argument name -> type string ("*fp16", "*fp32", "i32", "fp32", ...); constexprs:
    argument name -> value (also the way to pin a stride to 1, as Triton does for unit strides).
    ``divisible``: arguments declared 16-divisible (default: every pointer).
    Example: ``compile_jit(my_kernel, {"x_ptr": "*fp32", "n": "i32"}, {"BLOCK": 128}, "sm_80")``.
    ``cache=False`` compiles without keeping the result (callers that cache by source themselves, such as
    the grader, whose rebuilt functions are new objects every time).
    """
    constexprs = dict(constexprs or {})
    if not isinstance(signature, dict) or not all(isinstance(k, str) for k in signature):
        raise TypeError("signature must be a dict of argument name -> type string, e.g. {'x_ptr': '*fp16'}")
    jf = as_jit_function(fn)
    if divisible is None:
        divisible = tuple(n for n, t in signature.items() if isinstance(t, str) and t.startswith("*"))
    key = (id(_python_function(fn)), tuple(sorted(signature.items())), tuple(sorted((k, repr(v)) for k, v in constexprs.items())),
           None if target is None else parse_target(target)[0], num_warps, num_stages, tuple(divisible))
    hit = _JIT_CACHE.get(key) if cache else None
    if hit is None and not cache:
        return _compile(jf, signature, constexprs, tuple(divisible), target, num_warps, num_stages, jf.__name__,
                        {"num_warps": num_warps, "num_stages": num_stages, **constexprs})
    if hit is None:
        hit = _compile(jf, signature, constexprs, tuple(divisible), target, num_warps, num_stages, jf.__name__,
                       {"num_warps": num_warps, "num_stages": num_stages, **constexprs})
        _JIT_CACHE[key] = hit
    return hit


_JIT_CACHE: dict = {}


# ------------------------------------------------------------- errors and resources, for graders
def first_error(exc) -> dict:
    """The first useful line of a compile failure, instead of its long traceback.

    Returns ``{"kind", "message", "line", "source"}``: the exception's class name, the compiler's message
    (first non-empty line), and for Triton's ``CompilationError`` the line number inside the kernel
    (1 = the ``def`` line) and that source line. Errors raised inside a called @jit helper are followed to
    the innermost one.
    """
    from triton.compiler.errors import CompilationError

    inner = exc
    seen = 0
    while (isinstance(inner, CompilationError) and not inner.error_message
           and isinstance(inner.__cause__, CompilationError) and seen < 20):
        inner, seen = inner.__cause__, seen + 1
    line = source = None
    if isinstance(inner, CompilationError):
        text = inner.error_message or ""
        if not text and isinstance(inner.__cause__, BaseException):
            text = str(inner.__cause__)
        node = inner.node
        if inner.src is not None and hasattr(node, "lineno"):
            lines = inner.src.split("\n")
            if 0 < node.lineno <= len(lines):
                line, source = node.lineno, lines[node.lineno - 1].strip()
    else:
        text = str(inner)
    message = next((ln.strip() for ln in text.splitlines() if ln.strip()), "") or type(inner).__name__
    message = re.sub(r" at 0x[0-9a-fA-F]+>", ">", message)  # object addresses change every run
    return {"kind": type(inner).__name__, "message": message[:300], "line": line, "source": source}


def resource_usage(cubin: bytes) -> dict:
    """Registers per thread and local memory (spill) bytes of a CUBIN's kernel, read with the
    ``cuobjdump -res-usage`` shipped with Triton (no GPU needed): ``{"regs": int, "local": int}``, or
    ``{}`` where the tool is missing or its output cannot be read."""
    import os
    import subprocess
    import tempfile

    if not isinstance(cubin, (bytes, bytearray)) or not cubin:
        return {}
    try:
        import triton.backends.nvidia as nv

        tool = os.path.join(os.path.dirname(nv.__file__), "bin", "cuobjdump")
        if not os.access(tool, os.X_OK):
            return {}
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(cubin)
            f.flush()
            out = subprocess.run([tool, "-res-usage", f.name], capture_output=True, text=True, timeout=30).stdout
    except (OSError, ImportError, subprocess.SubprocessError):
        return {}
    m = re.search(r"REG:(\d+).*?LOCAL:(\d+)", out)
    return {"regs": int(m.group(1)), "local": int(m.group(2))} if m else {}
