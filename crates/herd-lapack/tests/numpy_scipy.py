"""NumPy and SciPy on herd: Debian's python3-numpy/python3-scipy call the system
liblapack.so.3/libblas.so.3; with libherd_lapack.so preloaded, the routines it
defines must reach herd and give the system library's results.

    python3 numpy_scipy.py save REF.npz        # without herd: the reference
    LD_PRELOAD=.../libherd_lapack.so \\
    python3 numpy_scipy.py check REF.npz       # with herd: compared, and every
                                               # routine's calls counted

Each case computes its results and checks them on their own (LAPACK-style
scaled residuals); `check` also compares them with the reference run's and
asks libherd_lapack.so how many calls of each routine reached it.
"""

import ctypes
import sys

import numpy as np
import scipy.linalg as sl
from scipy.linalg import blas as sblas

EPS = np.finfo(float).eps
SIZES = [1, 2, 7, 64, 65, 300, 513]


def rng(seed):
    return np.random.default_rng(seed)


def spd(n, seed):
    a = rng(seed).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def scaled(num, den, n):
    """A LAPACK test ratio: ||residual|| / (||A|| * n * eps)."""
    return 0.0 if num == 0 else num / (max(den, np.finfo(float).tiny) * max(n, 1) * EPS)


def case_numpy_cholesky(out):
    for n in SIZES:
        a = spd(n, n)
        lo = np.linalg.cholesky(a)
        r = scaled(np.linalg.norm(lo @ lo.T - a), np.linalg.norm(a), n)
        assert r < 30, f"numpy cholesky n={n}: residual {r}"
        out[f"np_chol_{n}"] = lo
    return {"dpotrf": len(SIZES)}


def case_scipy_cholesky(out):
    for n in SIZES:
        a = spd(n, n + 100)
        for lower in (True, False):
            c = sl.cholesky(a, lower=lower)
            f = c if lower else c.T
            r = scaled(np.linalg.norm(f @ f.T - a), np.linalg.norm(a), n)
            assert r < 30, f"scipy cholesky n={n} lower={lower}: residual {r}"
            out[f"sp_chol_{n}_{lower}"] = c
    # Not positive definite: SciPy's message carries LAPACK's INFO.
    a = spd(40, 3)
    a[4, 4] = -1.0
    try:
        sl.cholesky(a, lower=True)
        raise AssertionError("an indefinite matrix was factored")
    except np.linalg.LinAlgError as e:
        assert "5" in str(e), f"expected the leading minor of order 5: {e}"
    return {"dpotrf": 2 * len(SIZES) + 1}


def case_gemm(out):
    calls = 0
    for (m, n, k) in [(1, 1, 1), (7, 5, 3), (65, 64, 66), (300, 200, 250)]:
        g = rng(m + n + k)
        a, b = g.standard_normal((m, k)), g.standard_normal((k, n))
        c = a @ b  # numpy: cblas_dgemm (row-major)
        out[f"np_gemm_{m}_{n}_{k}"] = c
        for ta in (0, 1):
            for tb in (0, 1):
                aa = np.asfortranarray(a.T if ta else a)
                bb = np.asfortranarray(b.T if tb else b)
                cc = sblas.dgemm(2.0, aa, bb, trans_a=ta, trans_b=tb)  # Fortran dgemm_
                err = np.abs(cc - 2.0 * c).max()
                bound = 4 * k * EPS * 2.0 * (np.abs(a) @ np.abs(b)).max()
                assert err <= bound, f"dgemm {m}x{n}x{k} ta={ta} tb={tb}: error {err} > {bound}"
                calls += 1
        calls += 1
    return {"dgemm": calls}


def check_qr(q, r, a, what):
    m = a.shape[0]
    r1 = scaled(np.linalg.norm(q @ r - a), np.linalg.norm(a), m)
    r2 = scaled(np.linalg.norm(q.T @ q - np.eye(q.shape[1])), 1.0, m)
    assert r1 < 30 and r2 < 30, f"{what}: residuals {r1}, {r2}"


def case_qr(out):
    calls = {"dgeqrf": 0, "dorgqr": 0, "dormqr": 0}
    for (m, n) in [(1, 1), (7, 7), (65, 64), (300, 300), (513, 200), (120, 300)]:
        a = rng(m * 7 + n).standard_normal((m, n))
        q, r = sl.qr(a)  # dgeqrf + dorgqr
        check_qr(q, r, a, f"scipy qr {m}x{n}")
        out[f"sp_qr_r_{m}_{n}"] = r
        qn, rn = np.linalg.qr(a)  # numpy: dgeqrf + dorgqr (reduced)
        check_qr(qn, rn, a, f"numpy qr {m}x{n}")
        out[f"np_qr_r_{m}_{n}"] = rn
        c = rng(m + n).standard_normal((m, 5))
        cq, rr = sl.qr_multiply(a, c.T)  # dgeqrf + dormqr: c^T Q
        err = np.abs(cq - c.T @ q[:, : min(m, n)]).max()
        assert err < 1e-10 * max(1, np.abs(c).max()) * m, f"qr_multiply {m}x{n}: {err}"
        calls["dgeqrf"] += 3
        calls["dorgqr"] += 2
        calls["dormqr"] += 1
    return calls


def case_lu(out):
    calls = {"dgetrf": 0, "dgetrs": 0, "dgesv": 0}
    for n in SIZES + [1000]:
        a = rng(n + 500).standard_normal((n, n))
        b = rng(n + 501).standard_normal((n, 3))
        lu, piv = sl.lu_factor(a)  # dgetrf
        out[f"sp_lu_{n}"] = lu
        out[f"sp_piv_{n}"] = piv.astype(float)
        x = sl.lu_solve((lu, piv), b)  # dgetrs
        xt = sl.lu_solve((lu, piv), b, trans=1)
        for (m, y, what) in ((a, x, "lu_solve"), (a.T, xt, "lu_solve trans")):
            r = scaled(np.linalg.norm(m @ y - b), np.linalg.norm(m) * np.linalg.norm(y), n)
            assert r < 30, f"{what} n={n}: residual {r}"
        y = np.linalg.solve(a, b)  # dgesv
        out[f"np_solve_{n}"] = y
        inv = np.linalg.inv(a)  # dgesv with the identity
        r = scaled(np.linalg.norm(a @ inv - np.eye(n)), np.linalg.norm(a) * np.linalg.norm(inv), n)
        assert r < 30, f"inv n={n}: residual {r}"
        out[f"np_det_{n}"] = np.array([np.linalg.slogdet(a)[1]])  # dgetrf
        calls["dgetrf"] += 2
        calls["dgetrs"] += 2
        calls["dgesv"] += 2
    # A singular matrix: SciPy warns with LAPACK's INFO, NumPy raises.
    s = np.ones((4, 4))
    try:
        np.linalg.solve(s, np.ones(4))
        raise AssertionError("a singular system was solved")
    except np.linalg.LinAlgError:
        pass
    return calls


def case_eigh(out):
    calls = 0
    for n in [1, 2, 7, 64, 65, 300, 513]:
        g = rng(n + 900)
        r = g.standard_normal((n, n))
        a = r + r.T
        b = spd(n, n + 901)
        for driver in ("gvd", "gv"):  # dsygvd_ (SciPy's default), dsygv_
            for lower in (True, False):
                w, z = sl.eigh(a, b, lower=lower, driver=driver)
                r1 = scaled(np.linalg.norm(a @ z - b @ z * w), np.linalg.norm(a) * np.linalg.norm(z), n)
                r2 = scaled(np.linalg.norm(z.T @ b @ z - np.eye(n)), 1.0, n)
                assert r1 < 30 and r2 < 30, f"eigh n={n} {driver} lower={lower}: residuals {r1}, {r2}"
                out[f"eigh_w_{n}_{driver}_{lower}"] = w
                calls += 1
        w_only = sl.eigh(a, b, eigvals_only=True, driver="gv")  # jobz = 'N'
        out[f"eigh_wonly_{n}"] = w_only
        calls += 1
        for lower in (True, False):  # dsygvd_ (SciPy's default driver), jobz = 'N'
            out[f"eigh_wonly_gvd_{n}_{lower}"] = sl.eigh(a, b, lower=lower, eigvals_only=True)
            calls += 1
    # ITYPE = 2 (A·B·x = λ·x): not herd's; handed to the system LAPACK.
    a, b = spd(30, 1), spd(30, 2)
    w2 = sl.eigh(a, b, type=2, driver="gv", eigvals_only=True)
    out["eigh_type2"] = w2
    # B not positive definite: LAPACK's INFO = n + i reaches SciPy's message.
    bad = spd(20, 3)
    bad[6, 6] = -1.0
    try:
        sl.eigh(spd(20, 4), bad, driver="gv")
        raise AssertionError("an indefinite B was accepted")
    except np.linalg.LinAlgError as e:
        assert "7" in str(e), f"expected the leading minor of order 7 of B: {e}"
    return {"dsygv": calls + 1}


def case_trsm_syrk(out):
    calls = {"dtrsm": 0, "dsyrk": 0}
    for (m, n) in [(1, 1), (7, 3), (65, 64), (300, 200)]:
        g = rng(m * 3 + n)
        t = np.tril(g.standard_normal((m, m))) + m * np.eye(m)
        b = g.standard_normal((m, n))
        x = sblas.dtrsm(1.5, t, b, lower=1)  # Fortran dtrsm_: T·X = 1.5·B
        r = scaled(np.linalg.norm(t @ x - 1.5 * b), np.linalg.norm(t) * np.linalg.norm(x), m)
        assert r < 30, f"dtrsm {m}x{n}: residual {r}"
        out[f"trsm_{m}_{n}"] = x
        a = g.standard_normal((m, n))
        c = sblas.dsyrk(1.0, a, lower=1)  # Fortran dsyrk_: lower triangle of A·Aᵀ
        full = a @ a.T  # NumPy: cblas_dsyrk (row-major)
        err = np.abs(np.tril(c) - np.tril(full)).max()
        assert err < 1e-12 * max(1, n), f"dsyrk {m}x{n}: {err}"
        out[f"syrk_{m}_{n}"] = full
        calls["dtrsm"] += 1
        calls["dsyrk"] += 2 if m > 1 else 1  # NumPy multiplies a 1×1 product itself
    return calls


CASES = [case_numpy_cholesky, case_scipy_cholesky, case_gemm, case_qr, case_lu, case_eigh, case_trsm_syrk]


ROUTINES = ("dgemm", "dpotrf", "dgeqrf", "dorgqr", "dormqr", "dgetrf", "dgetrs", "dgesv", "dsygv", "dtrsm", "dsyrk")


def herd_calls():
    lib = ctypes.CDLL(None)
    try:
        f = lib.herd_lapack_calls
    except AttributeError:
        return None
    f.restype = ctypes.c_int64
    f.argtypes = [ctypes.c_char_p]
    return lambda name: f(name.encode())


def main():
    mode, path = sys.argv[1], sys.argv[2]
    counts = herd_calls()
    if mode == "check" and counts is None:
        sys.exit("libherd_lapack.so is not loaded (LD_PRELOAD it)")
    out, failures = {}, []
    for case in CASES:
        before = {}
        expected = {}
        try:
            if counts:
                before = {r: counts(r) for r in ROUTINES}
            expected = case(out)
        except AssertionError as e:
            failures.append(f"{case.__name__}: {e}")
            continue
        if counts:
            for routine, at_least in expected.items():
                got = counts(routine) - before[routine]
                if got < at_least:
                    failures.append(f"{case.__name__}: {got} {routine} calls reached herd, expected {at_least}")
        print(f"{case.__name__}: ok")
    if mode == "save":
        np.savez(path, **out)
    else:
        ref = np.load(path)
        for key, value in out.items():
            want = ref[key]
            scale = max(np.abs(want).max(), 1.0) if want.size else 1.0
            err = np.abs(value - want).max() / scale if want.size else 0.0
            if err > 1e-10:
                failures.append(f"{key}: herd differs from the system library by {err:.2e} (relative)")
        print(f"{len(out)} results compared with the system library's")
    if failures:
        sys.exit("FAILED:\n  " + "\n  ".join(failures))


if __name__ == "__main__":
    main()
