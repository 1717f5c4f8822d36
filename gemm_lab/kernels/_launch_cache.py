"""Cheap repeat launches: a compiled-kernel handle per specialization key.

The first launch of a key goes through ``kernel[grid](...)`` (Triton binds the arguments, computes its
own specialization key, compiles or finds the binary) and keeps the returned compiled kernel; later
launches of the same key call that compiled kernel's launcher directly with the grid fixed, skipping
Triton's per-call binding and key computation. The caller's key must fix everything Triton specializes
on: dtypes, every integer argument's value (or at least ==1 and %16), and 16-byte alignment of each
pointer. In the CPU interpreter nothing is cached (each call runs through the interpreter)."""

from __future__ import annotations

from gemm_lab import runtime


class Launch:
    """A kernel at a fixed grid, constexprs and options; call it with the runtime arguments."""

    __slots__ = ("kernel", "grid", "constexprs", "options", "_fast")

    def __init__(self, kernel, grid: tuple[int, ...], constexprs: dict, options: dict):
        self.kernel = kernel
        self.grid = tuple(grid) + (1,) * (3 - len(grid))  # the compiled launcher reads grid[0..2]
        self.constexprs = constexprs
        self.options = options
        self._fast = None

    def keyed(self, key, make_args) -> None:
        """Launch with the runtime arguments ``make_args()`` builds; for a kernel with host tensor
        descriptors, the launcher's expanded arguments (encoded tensor maps included) are kept per ``key``
        and ``make_args`` is not called again for it. ``key`` must fix every argument for this launch's
        kernel (the base addresses behind the descriptors, where shapes and strides are fixed by the caller)."""
        fast = self._fast
        if fast is not None and hasattr(fast, "keyed"):
            fast.keyed(key, make_args)
        else:
            self(*make_args())

    def __call__(self, *args) -> None:
        fast = self._fast
        if fast is not None:
            fast(*args)
            return
        compiled = self.kernel[self.grid](*args, **self.constexprs, **self.options)
        if runtime.on_gpu() and not runtime.INTERPRET and hasattr(compiled, "__getitem__"):
            names = list(self.kernel.arg_names)
            tail = tuple(self.constexprs[n] for n in names[len(args):])
            runner = compiled[self.grid]
            if _direct_launch_ok():
                self._fast = _direct(compiled, self.grid, tail, runner, _descriptor_expander(compiled))
            else:
                def fast(*a, _runner=runner, _tail=tail):
                    _runner(*a, *_tail)

                self._fast = fast


# what CompiledKernel[grid]'s runner does per call, in the Triton versions whose source reads so: the
# current device's current stream, no launch metadata without a launch hook, then the launcher
_RUNNER_CALL = ("self.run(grid[0], grid[1], grid[2], stream, self.function, self.packed_metadata, "
                "launch_metadata,")


def _direct_launch_ok() -> bool:
    import inspect

    from triton.compiler.compiler import CompiledKernel

    try:
        return _RUNNER_CALL in " ".join(inspect.getsource(CompiledKernel.__getitem__).split())
    except (OSError, TypeError):
        return False


def _unset(hook) -> bool:
    """No launch hook: None, or an empty hook chain (Triton 3.6 keeps a ``HookChain`` there, empty unless a
    profiler added a hook; its runner then still passes the chains and builds launch metadata)."""
    return not getattr(hook, "calls", hook)


def _direct(compiled, grid, tail, runner, expander=None):
    """The runner's work without its per-call lookups (about 2 us of Python a launch): the launcher called
    with the current stream; while a launch hook (a profiler) is set, the runner itself. ``expander``
    (``_descriptor_expander``): a kernel with host tensor descriptors, launched with their encoded tensor
    maps kept per base address."""
    import torch
    from triton import knobs

    rt = knobs.runtime
    launch, fn, meta = compiled.run, compiled.function, compiled.packed_metadata
    g0, g1, g2 = grid
    stream_of = torch._C._cuda_getCurrentRawStream
    device = getattr(torch._C, "_cuda_getDevice", torch.cuda.current_device)
    if expander is not None:
        raw, coop, pdl, expand = expander
        by_key: dict = {}

        def fast_desc(*a):
            if _unset(rt.launch_enter_hook) and _unset(rt.launch_exit_hook):
                raw(g0, g1, g2, stream_of(device()), fn, coop, pdl, None, None, meta, None, None, None,
                    *expand(a + tail))
            else:
                runner(*a, *tail)

        def keyed(key, make_args):
            if not (_unset(rt.launch_enter_hook) and _unset(rt.launch_exit_hook)):
                runner(*make_args(), *tail)
                return
            e = by_key.get(key)
            if e is None:
                if len(by_key) >= _DESC_CACHE_MAX:
                    by_key.clear()
                e = by_key[key] = tuple(expand(tuple(make_args()) + tail))
            raw(g0, g1, g2, stream_of(device()), fn, coop, pdl, None, None, meta, None, None, None, *e)

        fast_desc.keyed = keyed
        return fast_desc

    def fast(*a):
        if _unset(rt.launch_enter_hook) and _unset(rt.launch_exit_hook):
            launch(g0, g1, g2, stream_of(device()), fn, meta, None, None, None, *a, *tail)
        else:
            runner(*a, *tail)

    return fast


# the per-launch expansion of host tensor descriptors in the Triton versions whose launcher reads so: the
# base arguments (grid, stream, function, flags, scratch, metadata, hooks) pass through, each descriptor
# becomes make_tensordesc_arg(descriptor, its metadata) = [encoded tensor map, *shape, *strides]
_EXPAND_CALL = "final_args.extend(make_tensordesc_arg(arg, tensordesc_meta[tensordesc_idx]))"
_DESC_CACHE_MAX = 256


def _descriptor_expander(compiled):
    """(raw launcher, cooperative flag, PDL flag, expand) for a compiled kernel
    whose launcher encodes host tensor descriptors on every launch (a tensor map each: cuTensorMapEncode
    and Python around it, several microseconds for three), else None. ``expand(args)`` gives the
    launcher's kernel arguments with each descriptor's expansion looked up by (position, base address,
    shape, strides, padding): the encoded map depends on nothing else once the compiled kernel (its
    descriptor metadata: block, swizzle, element type) is fixed. None as well when the kernel needs scratch
    memory per launch, or where Triton's launcher is not the one this reads (then Triton encodes)."""
    import inspect
    import sys

    run = compiled.run
    inner = getattr(run, "launch", None)
    code, cells = getattr(inner, "__code__", None), getattr(inner, "__closure__", None)
    if code is None or cells is None:
        return None
    free = dict(zip(code.co_freevars, (c.cell_contents for c in cells), strict=False))
    mod = sys.modules.get(type(run).__module__)
    make = getattr(mod, "make_tensordesc_arg", None)
    nbase = getattr(mod, "_BASE_ARGS_FORMAT_LEN", None)
    if (not {"launcher", "tensordesc_indices", "tensordesc_meta"} <= free.keys() or make is None or nbase != 13
            or getattr(run, "global_scratch_size", 1) or getattr(run, "profile_scratch_size", 1)):
        return None
    try:
        if _EXPAND_CALL not in " ".join(inspect.getsource(inner).split()):
            return None
    except (OSError, TypeError):
        return None
    metas, positions = list(free["tensordesc_meta"]), sorted(free["tensordesc_indices"])
    if len(metas) != len(positions) or any(m is None for m in metas):
        return None
    meta_at = dict(zip(positions, metas, strict=True))
    cache: dict = {}

    def expand(args):
        out = []
        for i, x in enumerate(args):
            m = meta_at.get(i)
            if m is None:
                out.append(x)
                continue
            key = (i, x.base.data_ptr(), tuple(x.shape), tuple(x.strides), x.padding,
                   getattr(x, "round_f32_to_tf32", False))
            e = cache.get(key)
            if e is None:
                if len(cache) >= _DESC_CACHE_MAX:
                    cache.clear()
                e = cache[key] = tuple(make(x, m))
            out.extend(e)
        return out

    return free["launcher"], run.launch_cooperative_grid, run.launch_pdl, expand
