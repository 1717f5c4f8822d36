"""Comparing a kernel's output with a reference, at a tolerance the output dtype allows.

Why not ``torch.allclose(out, ref, atol=1e-2, rtol=0)`` as the course suggests: an fp16 output of
magnitude 16-32 has a spacing (ulp) of 0.0156, so a correct kernel whose fp32 accumulation order
differs from cuBLAS's lands 1-2 ulp away, up to 0.03125 (measured at 500x600x300 on an H200 and in the
interpreter). A check must scale with the output's magnitude.

* ``relative_error(out, ref)``: ||out - ref|| / ||ref|| (Frobenius norms, in float64). Expect about
  2e-4 for fp16 outputs of random normal inputs, about 2e-3 for bf16, about 3e-4 for fp32 through
  TF32 on a GPU, under 1e-6 for exact fp32 (the interpreter).
* ``max_ulp_error(out, ref)``: the largest |out - ref| in units of the output dtype's spacing at |ref|
  (with |ref| floored at rms(ref)/16, so results that cancel to near zero are not judged by the
  spacing of tiny numbers). A correct fp16/bf16 kernel stays within about 2 ulp of an fp32 reference.
* ``assert_close(out, ref)``: both checks with the output dtype's tolerances (``TOLERANCES``), and no
  NaN/Inf where the reference is finite; raises AssertionError naming the worst element.
  ``assert_close_fp16`` is the same check, named for what the course compares.
"""

from __future__ import annotations

import torch

# output dtype -> (max relative Frobenius error, max element-wise error in ulps of that dtype)
TOLERANCES = {
    torch.float16: (2e-3, 4.0),
    torch.bfloat16: (1.5e-2, 4.0),
    torch.float32: (2e-3, None),  # fp32 matmuls use TF32 on GPUs: the element error is not ulp-bounded
    torch.float64: (1e-9, None),
}
_MANTISSA_BITS = {torch.float16: 10, torch.bfloat16: 7, torch.float32: 23, torch.float64: 52}


def _f64(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to("cpu", torch.float64)


def _checked_pair(out, ref) -> tuple[torch.Tensor, torch.Tensor]:
    """out and ref as float64 CPU tensors; TypeError for non-float tensors, ValueError for shapes."""
    for name, t in (("out", out), ("ref", ref)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if not (t.is_floating_point() and t.dtype in _MANTISSA_BITS):
            raise TypeError(f"{name} must be a float16/bfloat16/float32/float64 tensor, got {t.dtype}")
        if t.device.type == "meta":
            raise ValueError(f"{name} is a meta tensor: it has no values to compare")
    if tuple(out.shape) != tuple(ref.shape):
        raise ValueError(f"out and ref shapes differ: {tuple(out.shape)} vs {tuple(ref.shape)}")
    return _f64(out), _f64(ref)


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref||_F / ||ref||_F in float64 (0.0 when both are zero, inf when only ref is)."""
    o, r = _checked_pair(out, ref)
    denom = torch.linalg.vector_norm(r).item()
    num = torch.linalg.vector_norm(o - r).item()
    if denom == 0.0:
        return 0.0 if num == 0.0 else float("inf")
    return num / denom


def spacing(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The spacing (ulp) of ``dtype`` at |x|, as float64: 2**(floor(log2|x|) - mantissa bits)."""
    bits = _MANTISSA_BITS[dtype]
    tiny = torch.finfo(dtype).tiny
    ax = _f64(x).abs().clamp_min(tiny)
    return torch.pow(2.0, torch.floor(torch.log2(ax)) - bits)


def max_ulp_error(out: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype | None = None) -> float:
    """max |out - ref| / spacing_dtype(max(|ref|, rms(ref)/16)); ``dtype`` defaults to out's dtype."""
    o, r = _checked_pair(out, ref)
    dtype = out.dtype if dtype is None else dtype
    if dtype not in _MANTISSA_BITS:
        raise TypeError(f"dtype must be one of {sorted(map(str, _MANTISSA_BITS))}, got {dtype!r}")
    if o.numel() == 0:
        return 0.0
    floor = torch.sqrt(torch.mean(r * r)).item() / 16.0
    scale = r.abs().clamp_min(floor)
    return float(((o - r).abs() / spacing(scale, dtype)).max().item())


def assert_close(out: torch.Tensor, ref: torch.Tensor, *, rel: float | None = None, ulps: float | None = None,
                 name: str = "output") -> None:
    """Raise AssertionError unless ``out`` matches ``ref`` within the output dtype's tolerance
    (TypeError/ValueError when either is not a float tensor with values)."""
    for arg, t in (("out", out), ("ref", ref)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{arg} must be a torch.Tensor, got {type(t).__name__}")
        if t.device.type == "meta":
            raise ValueError(f"{arg} is a meta tensor: it has no values to compare")
        if not (t.is_floating_point() and t.dtype in _MANTISSA_BITS):
            raise TypeError(f"{arg} must be a float16/bfloat16/float32/float64 tensor, got {t.dtype}")
    if tuple(out.shape) != tuple(ref.shape):
        raise AssertionError(f"{name}: shape {tuple(out.shape)} != expected {tuple(ref.shape)}")
    default_rel, default_ulps = TOLERANCES.get(out.dtype, (1e-6, None))
    rel = default_rel if rel is None else rel
    ulps = default_ulps if ulps is None else ulps
    o, r = _f64(out), _f64(ref)
    bad = ~torch.isfinite(o) & torch.isfinite(r)
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        raise AssertionError(f"{name}: non-finite value {o[idx].item()} at {idx} (expected {r[idx].item()})")
    err = relative_error(o, r)
    if err > rel:
        diff = (o - r).abs()
        idx = tuple(int(i) for i in (diff == diff.max()).nonzero()[0])
        raise AssertionError(
            f"{name}: relative error {err:.3g} > {rel:.3g}; worst element {idx}: got {o[idx].item()}, "
            f"expected {r[idx].item()}"
        )
    if ulps is not None and out.dtype in _MANTISSA_BITS:
        u = max_ulp_error(o, r, out.dtype)
        if u > ulps:
            raise AssertionError(f"{name}: element-wise error {u:.2f} ulp of {out.dtype} > {ulps}")


def assert_close_fp16(out: torch.Tensor, ref: torch.Tensor, **kw) -> None:
    """``assert_close`` for fp16 outputs against an fp32 (or fp64) reference."""
    assert_close(out, ref, **kw)


def poisoned_view(shape: tuple[int, int], dtype: torch.dtype, device, *, margin: int = 3, transposed: bool = False,
                  fill: float = float("nan"), values: torch.Tensor | None = None):
    """A 2-D view inside a larger buffer whose margins hold ``fill``: returns (view, buffer, interior_mask).

    With ``values`` the view is filled with them; otherwise with ``fill`` too (a poisoned output).
    ``transposed=True`` gives a column-major view (stride (1, rows + 2*margin)). After a kernel ran,
    ``margins_intact(buffer, interior_mask, fill)`` says whether anything outside the view was written.
    """
    rows, cols = shape
    if transposed:
        buf = torch.full((cols + 2 * margin, rows + 2 * margin + 1), fill, dtype=dtype, device=device)
        view = buf[margin:margin + cols, margin:margin + rows].t()
        mask = torch.zeros(buf.shape, dtype=torch.bool, device=device)
        mask[margin:margin + cols, margin:margin + rows] = True
    else:
        buf = torch.full((rows + 2 * margin, cols + 2 * margin + 1), fill, dtype=dtype, device=device)
        view = buf[margin:margin + rows, margin:margin + cols]
        mask = torch.zeros(buf.shape, dtype=torch.bool, device=device)
        mask[margin:margin + rows, margin:margin + cols] = True
    if values is not None:
        view.copy_(values)
    return view, buf, mask


def margins_intact(buf: torch.Tensor, interior: torch.Tensor, fill: float = float("nan")) -> bool:
    """True when every element of ``buf`` outside ``interior`` still holds ``fill`` (NaN-aware)."""
    outside = buf[~interior]
    if fill != fill:  # NaN
        return bool(torch.isnan(outside).all().item())
    return bool((outside == fill).all().item())


def layout_operand(rows: int, cols: int, layout: str, gen: torch.Generator, dtype: torch.dtype = torch.float16):
    """Random values (CPU) in a layout: "contiguous", "strided" (every other column of a NaN-filled buffer
    twice as wide) or "transposed" (column-major)."""
    t0 = torch.randn(rows, cols, generator=gen).to(dtype)
    if layout == "contiguous":
        return t0.clone()
    if layout == "strided":
        t = torch.full((rows, 2 * cols), float("nan"), dtype=dtype)[:, ::2]
        t.copy_(t0)
        return t
    if layout == "transposed":
        return t0.t().contiguous().t()
    raise ValueError(f"layout must be 'contiguous', 'strided' or 'transposed', got {layout!r}")
