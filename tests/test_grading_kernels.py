"""gemm_lab.grading kernel checks: a correct kernel passes, each typical bug is rejected with its Korean hint.

The broken kernels are tiny Triton kernels defined here (interpreter on CPU), each with one bug a student
makes: missing load/store mask, other=1.0 on the K axis, no store, strides assumed contiguous, a floor
instead of a ceiling in the grid, fp16 accumulation, a persistent kernel that does one tile per program.
"""

import pytest

from gemm_lab import runtime  # noqa: F401  (before triton)

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = triton.language

from gemm_lab.grading import check_matmul, check_persistent, check_softmax, check_vector_add  # noqa: E402


def rejects(fn, *args, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        fn(*args, **kwargs)
    msg = str(info.value)
    assert msg.startswith("❌ "), msg
    return msg


# --------------------------------------------------------------------------- vector add


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, LOAD_MASK: tl.constexpr, STORE_MASK: tl.constexpr,
         STORE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if LOAD_MASK:
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
    else:
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs)
    if STORE:
        if STORE_MASK:
            tl.store(out_ptr + offs, x + y, mask=mask)
        else:
            tl.store(out_ptr + offs, x + y)


def add_launcher(load_mask=True, store_mask=True, store=True, floor_grid=False, BLOCK=256):
    def launch(x, y, out):
        n = x.numel()
        grid = (n // BLOCK,) if floor_grid else (triton.cdiv(n, BLOCK),)
        if grid[0] == 0:
            return out
        _add[grid](x, y, out, n, BLOCK=BLOCK, LOAD_MASK=load_mask, STORE_MASK=store_mask, STORE=store)
        return out

    return launch


def test_vector_add_accepts_correct_kernel(capsys):
    assert check_vector_add(add_launcher(), hidden=True) is None
    assert "✅ vector_add" in capsys.readouterr().out


def test_vector_add_accepts_teammates_launcher():
    kernels = pytest.importorskip("gemm_lab.kernels")
    check_vector_add(lambda x, y, out: kernels.vector_add(x, y, out), hidden=True, noncontiguous=True)


def test_vector_add_missing_store_mask():
    msg = rejects(check_vector_add, add_launcher(store_mask=False))
    assert "마스크가 빠진 것 같습니다: 출력 바깥 여백(margin)에 값이 써졌습니다" in msg
    assert "x[1000]" in msg and "경우 1/" in msg


def test_vector_add_unmasked_load_with_masked_store_passes():
    # A known limit, documented in gemm_lab.grading.kernels: the lanes that read the NaN margin are never
    # stored, so the output is right and the margins are clean; only a sanitizer would see the read.
    assert check_vector_add(add_launcher(load_mask=False)) is None


def test_vector_add_no_store():
    msg = rejects(check_vector_add, add_launcher(store=False))
    assert "결과가 전혀 쓰이지 않았습니다" in msg


def test_vector_add_new_tensor_returned():
    msg = rejects(check_vector_add, lambda x, y, out: x + y)
    assert "결과가 전혀 쓰이지 않았습니다" in msg and "새 텐서를 반환" in msg


def test_vector_add_floor_grid():
    msg = rejects(check_vector_add, add_launcher(floor_grid=True))
    assert "쓰이지 않았습니다" in msg and "cdiv" in msg and "out[768]" in msg


def test_vector_add_exceptions_are_feedback():
    def not_done(x, y, out):
        raise NotImplementedError()

    assert "아직 구현하지 않았습니다" in rejects(check_vector_add, not_done)

    def crashes(x, y, out):
        raise ValueError("bad block size")

    msg = rejects(check_vector_add, crashes)
    assert "실행 중 오류가 났습니다: ValueError: bad block size" in msg
    assert "launch 함수" in rejects(check_vector_add, 42)


def test_vector_add_overwriting_input():
    def clobber(x, y, out):
        out.copy_(x + y)
        x.zero_()

    assert "입력 x을(를) 덮어썼습니다" in rejects(check_vector_add, clobber)


# --------------------------------------------------------------------------- softmax


@triton.jit
def _softmax(out_ptr, x_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr, OTHER: tl.constexpr,
             USE_STRIDE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if USE_STRIDE:
        x_row = x_ptr + row * x_row_stride
        o_row = out_ptr + row * out_row_stride
    else:
        x_row = x_ptr + row * n_cols
        o_row = out_ptr + row * n_cols
    x = tl.load(x_row + cols, mask=cols < n_cols, other=OTHER)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(o_row + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


def softmax_launcher(other=-float("inf"), use_stride=True):
    def launch(x, out):
        R, C = x.shape
        _softmax[(R,)](out, x, x.stride(0), out.stride(0), C, BLOCK=triton.next_power_of_2(C), OTHER=other,
                       USE_STRIDE=use_stride)

    return launch


def test_softmax_accepts_correct_kernels():
    check_softmax(softmax_launcher(), hidden=True)
    kernels = pytest.importorskip("gemm_lab.kernels")
    check_softmax(lambda x, out: kernels.softmax(x, out=out), hidden=True)


def test_softmax_other_zero():
    msg = rejects(check_softmax, softmax_launcher(other=0.0))
    assert "-inf가 아닌 값(0.0 등)으로 읽은 것 같습니다" in msg and "x[5, 10]" in msg


def test_softmax_assumes_contiguous_rows():
    msg = rejects(check_softmax, softmax_launcher(use_stride=False))
    assert "경우 2/" in msg and "행 사이 여백" in msg
    assert "stride" in msg


# --------------------------------------------------------------------------- matmul


@triton.jit
def _mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
        K_MASK: tl.constexpr, OTHER: tl.constexpr, STORE_MASK: tl.constexpr, STORE: tl.constexpr,
        ACC_FP16: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BN)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_am = (pid_m * BM + tl.arange(0, BM)) % M
    offs_bn = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_am[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_bn[None, :] * sbn
    if ACC_FP16:
        acc = tl.zeros((BM, BN), dtype=tl.float16)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        if K_MASK:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=OTHER)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=OTHER)
        else:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        if ACC_FP16:
            acc += tl.dot(a, b, out_dtype=tl.float16)
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    offs_cm = pid_m * BM + tl.arange(0, BM)
    offs_cn = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + scm * offs_cm[:, None] + scn * offs_cn[None, :]
    if STORE:
        if STORE_MASK:
            tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))
        else:
            tl.store(c_ptrs, acc.to(tl.float16))


def mm_launcher(k_mask=True, other=0.0, store_mask=True, store=True, strides=True, acc_fp16=False,
                BM=16, BN=16, BK=16):
    def launch(a, b, c):
        M, K = a.shape
        N = b.shape[1]
        if strides:
            st = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        else:  # the bug: assume contiguous rows
            st = (K, 1, N, 1, N, 1)
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        _mm[grid](a, b, c, M, N, K, *st, BM=BM, BN=BN, BK=BK, K_MASK=k_mask, OTHER=other,
                  STORE_MASK=store_mask, STORE=store, ACC_FP16=acc_fp16)

    return launch


def test_matmul_accepts_correct_kernels(capsys):
    check_matmul(mm_launcher(), hidden=True)
    kernels = pytest.importorskip("gemm_lab.kernels")
    check_matmul(lambda a, b, c: kernels.matmul(a, b, out=c, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16), hidden=True)
    assert capsys.readouterr().out.count("✅ matmul") == 2


def test_matmul_missing_k_mask():
    msg = rejects(check_matmul, mm_launcher(k_mask=False))
    assert "경우 2/" in msg and "a[37, 50]" in msg
    assert "K축 마스크" in msg


def test_matmul_other_one():
    msg = rejects(check_matmul, mm_launcher(other=1.0))
    assert "K축 마스크의 other 값이 0.0이 아닌 것 같습니다" in msg
    assert "약 14만큼" in msg  # cdiv(50, 16) * 16 - 50 = 14 padded slots, each adds 1 × 1


def test_matmul_missing_store_mask():
    msg = rejects(check_matmul, mm_launcher(store_mask=False))
    assert "마스크가 빠진 것 같습니다: 출력 바깥 여백(margin)에 값이 써졌습니다" in msg


def test_matmul_no_store():
    assert "결과가 전혀 쓰이지 않았습니다" in rejects(check_matmul, mm_launcher(store=False))


def test_matmul_wrong_strides():
    msg = rejects(check_matmul, mm_launcher(strides=False))
    assert "경우 3/" in msg and "연속 배치(contiguous)에서는 맞았습니다" in msg


def test_matmul_transposed_inputs_are_hidden_case():
    # a kernel that only handles row-major inputs passes the visible cases but not the hidden ones
    def row_major_only(a, b, c):
        M, K = a.shape
        N = b.shape[1]
        grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)
        _mm[grid](a, b, c, M, N, K, a.stride(0), 1, b.stride(0), 1, c.stride(0), c.stride(1), BM=16, BN=16,
                  BK=16, K_MASK=True, OTHER=0.0, STORE_MASK=True, STORE=True, ACC_FP16=False)

    check_matmul(row_major_only)
    msg = rejects(check_matmul, row_major_only, hidden=True)
    assert "전치(transposed) 뷰" in msg


def test_matmul_fp16_accumulation_is_a_precision_hint():
    msg = rejects(check_matmul, mm_launcher(acc_fp16=True))
    assert "정밀도" in msg


# --------------------------------------------------------------------------- persistent


@triton.jit
def _persistent(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, NUM_PROGRAMS,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, LOOP: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_pid_n
    step = NUM_PROGRAMS if LOOP else num_tiles
    for tile_id in range(pid, num_tiles, step):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        offs_am = (pid_m * BM + tl.arange(0, BM)) % M
        offs_bn = (pid_n * BN + tl.arange(0, BN)) % N
        offs_k = tl.arange(0, BK)
        a_ptrs = a_ptr + offs_am[:, None] * sam + offs_k[None, :] * sak
        b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_bn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BK * sak
            b_ptrs += BK * sbk
        offs_cm = pid_m * BM + tl.arange(0, BM)
        offs_cn = pid_n * BN + tl.arange(0, BN)
        tl.store(c_ptr + scm * offs_cm[:, None] + scn * offs_cn[None, :], acc.to(tl.float16),
                 mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def persistent_launcher(loop=True, BM=32, BN=32, BK=16):
    def launch(a, b, c, num_programs):
        M, K = a.shape
        N = b.shape[1]
        tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)
        P = max(1, min(num_programs, tiles))
        _persistent[(P,)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                          c.stride(1), P, BM=BM, BN=BN, BK=BK, LOOP=loop)

    return launch


def test_persistent_accepts_correct_kernels():
    check_persistent(persistent_launcher(), hidden=True)
    kernels = pytest.importorskip("gemm_lab.kernels")
    check_persistent(lambda a, b, c, p: kernels.persistent_matmul(a, b, out=c, num_sms=p, BLOCK_M=32, BLOCK_N=32,
                                                                  BLOCK_K=16))


def test_persistent_one_tile_per_program():
    msg = rejects(check_persistent, persistent_launcher(loop=False))
    assert "num_programs=1" in msg and "for tile_id in range(pid, num_tiles, NUM_PROGRAMS)" in msg


def test_kernel_check_hint_and_name_are_shown():
    msg = rejects(check_vector_add, add_launcher(store=False), name="내 vector_add", hint="tl.store를 잊지 마세요")
    assert msg.startswith("❌ 내 vector_add (경우 1/2") and msg.endswith("(힌트: tl.store를 잊지 마세요)")


def test_aligned_views_for_tma_kernels():
    from gemm_lab.grading.kernels import _matmul_cases

    cases = _matmul_cases(hidden=True, noncontiguous=True, aligned=True)
    for case in cases:
        for v in case["inputs"] + [case["output"]]:
            assert v.layout == "aligned" and v.strides[0] % 8 == 0 and v.offset % 8 == 0, v.where()
    check_matmul(mm_launcher(), hidden=True, aligned=True)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="TMA tensor descriptors need a GPU")
def test_persistent_tma_variant_on_gpu():
    kernels = pytest.importorskip("gemm_lab.kernels")
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("TMA needs sm_90+")
    check_persistent(lambda a, b, c, p: kernels.persistent_matmul(a, b, out=c, num_sms=p, variant="tma"),
                     hidden=True, aligned=True)
