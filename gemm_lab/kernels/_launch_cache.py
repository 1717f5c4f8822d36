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
                self._fast = _direct(compiled, self.grid, tail, runner)
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


def _direct(compiled, grid, tail, runner):
    """The runner's work without its per-call lookups (about 2 us of Python a launch): the launcher called
    with the current stream; while a launch hook (a profiler) is set, the runner itself."""
    import torch
    from triton import knobs

    rt = knobs.runtime
    launch, fn, meta = compiled.run, compiled.function, compiled.packed_metadata
    g0, g1, g2 = grid
    stream_of = torch._C._cuda_getCurrentRawStream
    device = getattr(torch._C, "_cuda_getDevice", torch.cuda.current_device)

    def fast(*a):
        if rt.launch_enter_hook is None and rt.launch_exit_hook is None:
            launch(g0, g1, g2, stream_of(device()), fn, meta, None, None, None, *a, *tail)
        else:
            runner(*a, *tail)

    return fast
