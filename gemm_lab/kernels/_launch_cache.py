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

            def fast(*a, _runner=runner, _tail=tail):
                _runner(*a, *_tail)

            self._fast = fast
