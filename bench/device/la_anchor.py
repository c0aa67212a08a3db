#!/usr/bin/env python3
"""Anchors for `herd la` on a machine that has PyTorch (whose CPU linear
algebra is Intel MKL in the x86 wheels) or NumPy/SciPy (whose wheels bundle
their own, newer OpenBLAS): the same routines at the same orders, timed the
way `herd la` times them (medians of --reps runs after one warm-up), with the
flop counts `herd la` uses. One library per process, so that two BLAS thread
pools never compete:

    python3 bench/device/la_anchor.py --lib torch --threads 16 \
        --gemm 4000,8000 --potrf 8000 --getrf 8000 --geqrf 4000 --sygv 2000

prints one JSON object per line: {"lib", "blas", "routine", "n", "median",
"samples", "gflops", "residual"}. Each result is checked with a random-vector
probe (O(n^2), as `herd la` does) and the relative residual is reported.
"""
import argparse
import json
import statistics
import sys
import time


def flops(routine, n):
    n = float(n)
    return {
        "gemm": 2 * n**3,
        "potrf": n**3 / 3,
        "getrf": 2 * n**3 / 3,
        "geqrf": 4 * n**3 / 3,
        # sygv: the count `herd la sygv` uses (herd_la::sygv_flops).
        "sygv": 17 * n**3 / 3,
    }[routine]


def timed(fn, reps):
    fn()  # warm-up (thread start, page faults)
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = fn()
        out.append(time.perf_counter() - t0)
    return out, r


def run_torch(args, emit):
    import torch

    torch.set_num_threads(args.threads)
    cfg = torch.__config__.show()
    blas = [l.strip() for l in cfg.splitlines() if "BLAS_INFO" in l or "LAPACK_INFO" in l]
    blas = "; ".join(blas) + f"; mkl={torch.backends.mkl.is_available()} threads={torch.get_num_threads()}"
    g = torch.Generator().manual_seed(7)
    f64 = torch.float64

    def rnd(n, m=None):
        return torch.rand((n, m or n), generator=g, dtype=f64) - 0.5

    def spd(n):
        a = rnd(n)
        return a @ a.T + n * torch.eye(n, dtype=f64)

    def probe(n):
        return torch.rand((n, 1), generator=g, dtype=f64)

    for n in args.gemm:
        a, b = rnd(n), rnd(n)
        s, c = timed(lambda: a @ b, args.reps)
        x = probe(n)
        res = float(torch.linalg.norm(c @ x - a @ (b @ x)) / (torch.linalg.norm(a) * torch.linalg.norm(b) * torch.linalg.norm(x)))
        emit("gemm", n, s, res, blas)
    for n in args.potrf:
        a = spd(n)
        s, l = timed(lambda: torch.linalg.cholesky(a), args.reps)
        x = probe(n)
        res = float(torch.linalg.norm(l @ (l.T @ x) - a @ x) / (torch.linalg.norm(a) * torch.linalg.norm(x)))
        emit("potrf", n, s, res, blas)
    for n in args.getrf:
        a = rnd(n)
        s, (lu, piv) = timed(lambda: torch.linalg.lu_factor(a), args.reps)
        p, l, u = torch.lu_unpack(lu, piv)
        x = probe(n)
        res = float(torch.linalg.norm(p @ (l @ (u @ x)) - a @ x) / (torch.linalg.norm(a) * torch.linalg.norm(x)))
        emit("getrf", n, s, res, blas)
    for n in args.geqrf:
        a = rnd(n)
        s, (qr, tau) = timed(lambda: torch.geqrf(a), args.reps)
        r = torch.triu(qr)
        x = probe(n)
        qrx = torch.ormqr(qr, tau, r @ x)
        res = float(torch.linalg.norm(qrx - a @ x) / (torch.linalg.norm(a) * torch.linalg.norm(x)))
        emit("geqrf", n, s, res, blas)
    for n in args.sygv:
        a, b = rnd(n), spd(n)
        a = a + a.T

        def sygv():
            # dsygv's method: B = L L^T, C = L^-1 A L^-T, C = Z W Z^T, X = L^-T Z.
            l = torch.linalg.cholesky(b)
            y = torch.linalg.solve_triangular(l, a, upper=False)
            c = torch.linalg.solve_triangular(l, y.T, upper=False)
            w, z = torch.linalg.eigh(c)
            return w, torch.linalg.solve_triangular(l.T, z, upper=True)

        s, (w, v) = timed(sygv, args.reps)
        res = float(torch.linalg.norm(a @ v - (b @ v) * w) / (torch.linalg.norm(a) * torch.linalg.norm(v)))
        emit("sygv", n, s, res, blas)


def run_numpy(args, emit):
    import numpy as np
    import scipy.linalg as sl

    try:
        from threadpoolctl import threadpool_info, threadpool_limits

        _limits = threadpool_limits(args.threads)  # noqa: F841 (kept for the whole run)
        blas = "; ".join(f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} threads={i.get('num_threads')}" for i in threadpool_info())
    except Exception as e:  # threadpoolctl missing: the environment sets the threads
        blas = f"numpy {np.__version__} (threadpoolctl: {e})"
    rng = np.random.default_rng(7)

    def rnd(n):
        return rng.random((n, n)) - 0.5

    def spd(n):
        a = rnd(n)
        return a @ a.T + n * np.eye(n)

    def nrm(x):
        return np.linalg.norm(x)

    for n in args.gemm:
        a, b = rnd(n), rnd(n)
        s, c = timed(lambda: a @ b, args.reps)
        x = rng.random(n)
        emit("gemm", n, s, float(nrm(c @ x - a @ (b @ x)) / (nrm(a) * nrm(b) * nrm(x))), blas)
    for n in args.potrf:
        a = spd(n)
        s, l = timed(lambda: sl.cholesky(a, lower=True, check_finite=False), args.reps)
        x = rng.random(n)
        emit("potrf", n, s, float(nrm(l @ (l.T @ x) - a @ x) / (nrm(a) * nrm(x))), blas)
    for n in args.getrf:
        a = rnd(n)
        s, (lu, piv) = timed(lambda: sl.lu_factor(a, check_finite=False), args.reps)
        x = rng.random(n)
        # A x = P L U x: apply L U, then the row interchanges in reverse.
        y = np.tril(lu, -1) @ (np.triu(lu) @ x) + np.triu(lu) @ x
        for i in range(n - 1, -1, -1):
            y[[i, piv[i]]] = y[[piv[i], i]]
        emit("getrf", n, s, float(nrm(y - a @ x) / (nrm(a) * nrm(x))), blas)
    for n in args.geqrf:
        a = rnd(n)
        s, (qr_raw, tau, _, info) = timed(lambda: sl.lapack.dgeqrf(a), args.reps)
        r = np.triu(qr_raw)
        x = rng.random(n)
        q = sl.lapack.dorgqr(qr_raw, tau)[0]
        emit("geqrf", n, s, float(nrm(q @ (r @ x) - a @ x) / (nrm(a) * nrm(x))), blas)
    for n in args.sygv:
        a, b = rnd(n), spd(n)
        a = a + a.T
        s, (w, v) = timed(lambda: sl.eigh(a, b, driver="gv", check_finite=False), args.reps)
        emit("sygv", n, s, float(nrm(a @ v - (b @ v) * w) / (nrm(a) * nrm(v))), blas)


def summary(paths):
    """One line per (routine, n, implementation) from `herd la --json` logs
    (an object or an array of objects) and this script's JSON lines."""
    for path in paths:
        routine = path.split("la-")[-1].split("/")[0]
        text = open(path, errors="replace").read()
        try:
            doc = json.loads(text)
            for m in doc if isinstance(doc, list) else [doc]:
                line = [f"{routine:6} n={m.get('n')}"]
                for k, v in m.items():
                    if isinstance(v, dict) and "gflops" in v:
                        line.append(f"{k} {v['gflops']:.1f} GF/s ({v['median']:.4g} s, res {v.get('residual', float('nan')):.1e})")
                print("  ".join(line))
        except ValueError:
            for l in text.splitlines():
                try:
                    m = json.loads(l)
                    print(f"{m['lib']:6} {m['routine']:6} n={m['n']} {m['gflops']:.1f} GF/s ({m['median']:.4g} s, res {m['residual']:.1e})")
                except (ValueError, KeyError):
                    print(f"{routine}: {l[:200]}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--summary":
        return summary(sys.argv[2:])
    p = argparse.ArgumentParser()
    p.add_argument("--lib", choices=["torch", "numpy"], required=True)
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--reps", type=int, default=3)
    ints = lambda s: [int(v) for v in s.split(",") if v]
    for r in ["gemm", "potrf", "getrf", "geqrf", "sygv"]:
        p.add_argument(f"--{r}", type=ints, default=[])
    args = p.parse_args()

    def emit(routine, n, samples, residual, blas):
        med = statistics.median(samples)
        print(json.dumps({"lib": args.lib, "blas": blas, "routine": routine, "n": n, "threads": args.threads,
                          "median": med, "samples": samples, "gflops": flops(routine, n) / med / 1e9,
                          "residual": residual}), flush=True)

    (run_torch if args.lib == "torch" else run_numpy)(args, emit)


if __name__ == "__main__":
    sys.exit(main())
