"""The GPUs students meet, plus the course's virtual devices.

Units: ``smem_per_block_optin`` and ``l2_bytes`` in bytes (1 KiB = 1024 B), ``regs_per_sm`` in 32-bit
registers, ``fp16_tflops``/``fp32_tflops`` in 10^12 FLOP/s (dense, no sparsity), ``bandwidth_gbs`` in
10^9 B/s. Every row names its source. Per-architecture limits (shared memory per block, registers per
SM) are from the CUDA C++ Programming Guide's "Technical Specifications per Compute Capability" table;
SM counts, L2, peak rates and bandwidth from the vendor's datasheet of that board.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ._validate import as_opt_int, as_opt_real, as_real, as_str

__all__ = ["Device", "VIRTUAL_DEVICE", "VIRTUAL_DEVICE_FP32", "DEVICES", "get_device", "devices_table",
           "CUDA_GUIDE_URL"]

CUDA_GUIDE_URL = ("https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html"
                  "#features-and-technical-specifications-technical-specifications-per-compute-capability")

KIB = 1024
MIB = 1024 * 1024


@dataclass(frozen=True)
class Device:
    """One GPU (or the course's virtual device). ``arch`` is ``"sm_XY"`` or ``None`` (virtual).

    ``fp16_tflops``: peak dense FP16 tensor-core rate with FP32 accumulation (TFLOP/s); ``None`` when
    the device has no such figure. ``fp32_tflops``: peak FP32 (non-tensor) rate. ``notes``: caveats.
    """

    name: str
    arch: str | None
    sms: int | None
    smem_per_block_optin: int | None
    regs_per_sm: int | None
    l2_bytes: int | None
    fp16_tflops: float | None
    bandwidth_gbs: float
    source: str
    fp32_tflops: float | None = None
    notes: str = ""

    def __post_init__(self) -> None:
        """Validate every field: a zero, negative, NaN or infinite rate or size would give negative,
        NaN or infinite times downstream (roofline, best_fitting, softmax_traffic)."""
        as_str("name", self.name)
        if self.arch is not None:
            as_str("arch", self.arch)
        for field in ("sms", "smem_per_block_optin", "regs_per_sm", "l2_bytes"):
            as_opt_int(field, getattr(self, field))
        for field in ("fp16_tflops", "fp32_tflops"):
            as_opt_real(field, getattr(self, field), positive=True)
        as_real("bandwidth_gbs", self.bandwidth_gbs, positive=True)
        as_str("source", self.source)
        as_str("notes", self.notes)

    @property
    def ridge_intensity(self) -> float:
        """Roofline ridge point ``P / BW`` in FLOP/byte (FP16 tensor rate)."""
        if self.fp16_tflops is None:
            raise ValueError(f"device {self.name!r} has no fp16_tflops figure")
        return self.fp16_tflops * 1e12 / (self.bandwidth_gbs * 1e9)


VIRTUAL_DEVICE = Device(
    name="virtual (week 7)", arch=None, sms=None, smem_per_block_optin=None, regs_per_sm=None, l2_bytes=None,
    fp16_tflops=80.0, bandwidth_gbs=1000.0,
    source="seed week07 §5.1: P = 80e12 FLOP/s (FP16 in, FP32 acc), BW = 1e12 B/s; ridge 80 FLOP/B",
)

VIRTUAL_DEVICE_FP32 = Device(
    name="virtual FP32 (week 6)", arch=None, sms=None, smem_per_block_optin=None, regs_per_sm=None,
    l2_bytes=None, fp16_tflops=None, bandwidth_gbs=1000.0, fp32_tflops=20.0,
    source="seed week06 §4: FP32 20e12 FLOP/s, HBM 1e12 B/s (as in weeks 3-4)",
)

_T4 = dict(
    arch="sm_75", sms=40, smem_per_block_optin=64 * KIB, regs_per_sm=65536, l2_bytes=4 * MIB,
    fp16_tflops=65.0, fp32_tflops=8.1, bandwidth_gbs=320.0,
    source=("https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/"
            "t4-tensor-core-datasheet-951643.pdf (65 TFLOPS mixed FP16/FP32, 320 GB/s, 40 SMs, 4 MB L2); "
            + CUDA_GUIDE_URL + " (cc 7.5: 64 KB/block, 64K regs/SM)"),
    notes="Triton compiles tl.dot to FP32 FMA on sm_75 (PTX checked with triton 3.6.0, 3.7.1, 3.8.0 and 3.9.0 by "
          "make compat: fma, no mma; triton 3.3.1 fails to compile a dot for sm_75, the releases in between are not "
          "checked here): the tensor rate is not reachable from Triton",
)

DEVICES: dict[str, Device] = {
    "colab-t4": Device(name="Tesla T4 (Colab)", **_T4),
    "kaggle-t4": Device(name="Tesla T4 (Kaggle)", **_T4),
    "kaggle-p100": Device(
        name="Tesla P100 PCIe 16 GB (Kaggle)", arch="sm_60", sms=56, smem_per_block_optin=48 * KIB,
        regs_per_sm=65536, l2_bytes=4 * MIB, fp16_tflops=18.7, fp32_tflops=9.3, bandwidth_gbs=732.0,
        source=("https://images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-PCIe-datasheet.pdf "
                "(18.7 TFLOPS FP16, 9.3 FP32, 732 GB/s); " + CUDA_GUIDE_URL + " (cc 6.0: 48 KB/block)"),
        notes="no tensor cores: 18.7 is the packed-FP16 CUDA-core rate; Triton supports cc >= 8.0 "
              "officially and may not compile tl.dot for sm_60",
    ),
    "a100": Device(
        name="A100 SXM4 80 GB", arch="sm_80", sms=108, smem_per_block_optin=163 * KIB, regs_per_sm=65536,
        l2_bytes=40 * MIB, fp16_tflops=312.0, fp32_tflops=19.5, bandwidth_gbs=2039.0,
        source=("https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
                "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (312 TFLOPS FP16 tensor dense, 2,039 GB/s); "
                + CUDA_GUIDE_URL + " (cc 8.0: 163 KB/block opt-in)"),
    ),
    "h100": Device(
        name="H100 SXM5 80 GB", arch="sm_90", sms=132, smem_per_block_optin=227 * KIB, regs_per_sm=65536,
        l2_bytes=50 * MIB, fp16_tflops=989.4, fp32_tflops=67.0, bandwidth_gbs=3350.0,
        source=("https://www.nvidia.com/en-us/data-center/h100/ (FP16 tensor 1,979 TFLOPS with sparsity = "
                "989.4 dense, 3.35 TB/s); " + CUDA_GUIDE_URL + " (cc 9.0: 227 KB/block opt-in)"),
    ),
    "h200": Device(
        name="H200 SXM 141 GB", arch="sm_90", sms=132, smem_per_block_optin=232448, regs_per_sm=65536,
        l2_bytes=60 * MIB, fp16_tflops=989.4, fp32_tflops=67.0, bandwidth_gbs=4800.0,
        source=("https://www.nvidia.com/en-us/data-center/h200/ (FP16 tensor 1,979 TFLOPS with sparsity = "
                "989.4 dense, 4.8 TB/s); torch.cuda.get_device_properties on the course team's H200 "
                "(132 SMs, 232,448 B opt-in, 60 MiB L2, measured)"),
    ),
    "rtx5090": Device(
        name="GeForce RTX 5090", arch="sm_120", sms=170, smem_per_block_optin=99 * KIB, regs_per_sm=65536,
        l2_bytes=96 * MIB, fp16_tflops=None, fp32_tflops=104.8, bandwidth_gbs=1792.0,
        source=("https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/rtx-5090/ and the NVIDIA RTX "
                "Blackwell GPU architecture whitepaper (170 SMs, 96 MB L2, 1,792 GB/s); " + CUDA_GUIDE_URL +
                " (cc 12.0: 99 KB/block)"),
        notes="fp16_tflops left out: the FP16 tensor peak with FP32 accumulation could not be checked against "
              "NVIDIA's own whitepaper or spec page, so the course quotes none. fp32_tflops = 21,760 CUDA cores x "
              "2 FLOP x the 2.41 GHz boost clock. The seed blog measured 219 TFLOP/s with cuBLAS.",
    ),
    "virtual": VIRTUAL_DEVICE,
    "virtual-fp32": VIRTUAL_DEVICE_FP32,
}


def _norm(s: str) -> str:
    return "".join(ch for ch in s.lower() if ch.isalnum())


def get_device(name: str) -> Device:
    """Look a device up by key (``"h200"``, ``"colab-t4"``, …) or by its display name; case and
    punctuation are ignored. Unknown names raise ``ValueError`` listing the keys."""
    as_str("name", name)
    key = _norm(name)
    for k, dev in DEVICES.items():
        if key in (_norm(k), _norm(dev.name)):
            return dev
    raise ValueError(f"name: unknown device {name!r}; known: {', '.join(DEVICES)}")


def devices_table():
    """DataFrame of :data:`DEVICES`, one row per key (index), columns = the :class:`Device` fields."""
    import pandas as pd

    df = pd.DataFrame([asdict(d) for d in DEVICES.values()], index=list(DEVICES))
    df.index.name = "key"
    return df
