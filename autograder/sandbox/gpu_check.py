"""Check the grading sandbox on a GPU host: CUDA (driver API), then torch and a Triton kernel, inside it.

``python -m autograder.sandbox.gpu_check`` from the repository root (needs bwrap; torch/triton optional).
Prints what the sandbox saw: device nodes, CUDA init, a 1 GiB allocation, the seccomp mode, the outcome.
"""
import json
import os
import sys
import tempfile
import time

from autograder.sandbox import bwrap

if not bwrap.has_gpu():
    sys.exit("no NVIDIA GPU here (/dev/nvidiactl and /dev/nvidiaN): this check is for a GPU host")
print("has_gpu", bwrap.has_gpu(), bwrap.gpu_device_nodes(), "libdirs", bwrap.gpu_library_dirs(), flush=True)
DRIVER = r'''
import ctypes, json, os
out = {"interp": os.environ.get("TRITON_INTERPRET"), "grading": os.environ.get("GEMM_LAB_GRADING"),
       "devs": sorted(os.listdir("/dev"))}
cu = ctypes.CDLL("libcuda.so.1")
out["cuInit"] = cu.cuInit(0)
n = ctypes.c_int(); out["count_rc"] = cu.cuDeviceGetCount(ctypes.byref(n)); out["count"] = n.value
dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
name = ctypes.create_string_buffer(100); cu.cuDeviceGetName(name, 100, dev); out["name"] = name.value.decode()
ctx = ctypes.c_void_p(); out["ctx_rc"] = cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev)
p = ctypes.c_uint64(); out["alloc_1GiB_rc"] = cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(1 << 30))
out["seccomp"] = [ln.split()[1] for ln in open("/proc/self/status") if ln.startswith("Seccomp:")][0]
print(json.dumps(out))
'''
TORCH = r'''
import time, torch
t = time.time(); a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16); c = a @ a
torch.cuda.synchronize(); print("torch", torch.__version__, torch.cuda.get_device_name(), "matmul ok %.2fs" % (time.time() - t))
try:
    import triton, triton.language as tl
    @triton.jit
    def add(x, y, o, n, B: tl.constexpr):
        i = tl.program_id(0) * B + tl.arange(0, B); m = i < n
        tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)
    x = torch.randn(10000, device="cuda"); o = torch.empty_like(x)
    add[(10,)](x, x, o, 10000, B=1024); torch.cuda.synchronize()
    print("triton", triton.__version__, "compiled add ok", bool((o == 2 * x).all()))
except Exception as e:
    print("triton failed:", type(e).__name__, str(e)[:300])
'''
for label, code in (("driver", DRIVER), ("torch", TORCH)):
    if label == "torch":
        try:
            import torch  # noqa: F401
        except ImportError:
            print("no torch on this host")
            break
    t0 = time.monotonic()
    handin = tempfile.mkdtemp()
    with open(os.path.join(handin, "probe.py"), "w") as f:  # @triton.jit needs a source file
        f.write(code)
    proc, outcome = bwrap.run_sandboxed([sys.executable, "probe.py"], handin, tempfile.mkdtemp(), timeout=300)
    print(label, "rc", proc.returncode, "%.2fs" % (time.monotonic() - t0), json.dumps(outcome.to_json()))
    print(proc.stdout[-3000:], proc.stderr[-3000:], flush=True)
