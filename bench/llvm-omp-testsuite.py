#!/usr/bin/env python3
"""Runs LLVM libomp's own runtime testsuite (openmp/runtime/test) built with gcc
under the system libgomp and under herd's libgomp.so.1 replacement.

    llvm-omp-testsuite.py [--herd DIR] [--out DIR] [--threads "unset 4"]
                          [--timeout SECS] [--jobs N] [--only SUBSTR]
                          [--runtimes libgomp,herd] TESTDIR

(With one runtime, the other is counted as passing: a quick look at herd alone.)

TESTDIR is libomp's test directory, e.g. from Debian's llvm-toolchain-14 source:
    apt-get source --download-only llvm-toolchain-14   (needs a deb-src line), or
    curl -O http://deb.debian.org/debian/pool/main/l/llvm-toolchain-14/llvm-toolchain-14_14.0.6.orig.tar.xz
    tar xJf llvm-toolchain-14_14.0.6.orig.tar.xz --wildcards '*/openmp/runtime/test/*'
and then TESTDIR = llvm-toolchain-14_14.0.6/openmp/runtime/test.

Each test's `// RUN:` lines are run by bash as LLVM's lit would run them with the
test configuration gcc gets (compiler features gcc, gcc-12; linux, affinity,
multicpu; no OMPT, so the ompt/ directory is skipped): `%libomp-compile` is
`gcc -fopenmp -I TESTDIR FILE -o BIN -lm`, `%libomp-run` is the binary under a
timeout, `FileCheck` and `not` are LLVM 14's (clang-14's package brings them),
`%sort-threads` is `sort -n -s`, `%python` is python3.  `REQUIRES:` /
`UNSUPPORTED:` lines skip tests as lit does; `XFAIL:` is recorded (a test
expected to fail under gcc is reported XFAIL/XPASS, not FAIL/PASS).  The runtime
is chosen by LD_LIBRARY_PATH at run time, so each test is built and run once
per runtime and thread setting.

Results: OUT/results.tsv (test, one column per runtime x threads), OUT/times.tsv
(the same runs' wall-clock seconds, build included), OUT/logs/,
and a summary on stdout: the tests libgomp passes and herd does not.
"""

import argparse
import concurrent.futures as cf
import os
import re
import shutil
import subprocess
import sys
import time

FEATURES = {"gcc", "gcc-12", "linux", "affinity", "multicpu"}
LLVM_BIN = "/usr/lib/llvm-14/bin"


def directives(text, key):
    out = []
    for m in re.finditer(r"//\s*" + key + r":(.*)", text):
        out.append(m.group(1).strip())
    return out


def feature_expr(expr):
    """lit's boolean feature expression, enough of it: `a, b` (any), `a && b`, `!a`."""
    alts = [a.strip() for a in expr.split(",") if a.strip()]
    for a in alts:
        terms = [t.strip() for t in a.split("&&")]
        ok = True
        for t in terms:
            neg = t.startswith("!")
            name = t.lstrip("!").strip()
            have = name in FEATURES or name == "*"
            if have == neg:
                ok = False
        if ok:
            return True
    return False


def run_lines(text):
    lines = []
    cur = ""
    for m in re.finditer(r"//\s*RUN:(.*)", text):
        part = m.group(1).rstrip()
        if part.endswith("\\"):
            cur += part[:-1] + " "
            continue
        lines.append((cur + part).strip())
        cur = ""
    if cur:
        lines.append(cur.strip())
    return lines


def substitute(line, src, binary, tmpdir, timeout):
    testroot = ARGS.testdir
    flags = f"-I {testroot}"
    c = f"gcc -fopenmp {flags}"
    cxx = f"g++ -fopenmp {flags}"
    subs = [
        ("%libomp-compile-and-run", "%libomp-compile && %libomp-run"),
        ("%libomp-c99-compile-and-run", "%libomp-c99-compile && %libomp-run"),
        ("%libomp-cxx-compile-and-run", "%libomp-cxx-compile && %libomp-run"),
        ("%libomp-cxx-compile-c", f"{cxx} -std=c++14 -x c++ %s -o %t -lm"),
        ("%libomp-cxx-compile", f"{cxx} -std=c++14 %s -o %t -lm"),
        ("%libomp-c99-compile", f"{c} -std=c99 %s -o %t -lm"),
        ("%libomp-compile", f"{c} %s -o %t -lm"),
        ("%libomp-run", f"timeout {timeout} %t"),
        ("%sort-threads", "sort -n -s"),
        ("%clangXX", "g++"),
        ("%clang", "gcc"),
        ("%openmp_flags", "-fopenmp"),
        ("%flags-use-compiler-omp-h", flags),
        ("%flags", flags),
        ("%python", "python3"),
        ("%not", f"{LLVM_BIN}/not"),
        ("%no-as-needed-flag", "-Wl,--no-as-needed"),
        ("%preload-tool", "true ||"),
        ("%S", os.path.dirname(src)),
        ("%s", src),
        ("%T", tmpdir),
        ("%t", binary),
    ]
    for a, b in subs:
        line = line.replace(a, b)
    line = re.sub(r"(?<![\w/-])FileCheck\b", f"{LLVM_BIN}/FileCheck", line)
    return line


def classify(test, runtime, threads):
    src = os.path.join(ARGS.testdir, test)
    text = open(src, errors="replace").read()
    for r in directives(text, "REQUIRES"):
        names = [n.strip() for n in r.split(",")]
        if not all(feature_expr(n) for n in names):
            return "SKIP", f"requires {r}", 0.0
    for u in directives(text, "UNSUPPORTED"):
        if feature_expr(u):
            return "SKIP", f"unsupported {u}", 0.0
    xfail = any(feature_expr(x) for x in directives(text, "XFAIL"))
    lines = run_lines(text)
    if not lines:
        return "SKIP", "no RUN line", 0.0
    tag = f"{runtime}-{threads}"
    work = os.path.join(ARGS.out, "work", tag, test.replace("/", "__"))
    os.makedirs(work, exist_ok=True)
    binary = os.path.join(work, "t.exe")
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    for k in list(env):
        if k.startswith(("OMP_", "GOMP_", "KMP_", "HERD_")):
            env.pop(k)
    if threads != "unset":
        env["OMP_NUM_THREADS"] = threads
    if runtime == "herd":
        env["LD_LIBRARY_PATH"] = ARGS.herd + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    script = "set -o pipefail\n" + "\n".join(
        substitute(l, src, binary, work, ARGS.timeout) + " || exit $?" for l in lines
    )
    log = os.path.join(ARGS.out, "logs", tag, test.replace("/", "__") + ".log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    t0 = time.time()
    with open(log, "w") as f:
        f.write(script + "\n----\n")
        f.flush()
        p = subprocess.run(["bash", "-c", script], cwd=work, env=env, stdout=f, stderr=subprocess.STDOUT,
                           timeout=ARGS.timeout * 4 + 120)
    dt = time.time() - t0
    out = open(log, errors="replace").read()
    if runtime == "herd" and "not supported by herd" in out:
        status = "REFUSED"
    elif p.returncode == 124:
        status = "TIMEOUT"
    elif p.returncode == 0:
        status = "XPASS" if xfail else "PASS"
    else:
        status = "XFAIL" if xfail else f"FAIL({p.returncode})"
    if runtime == "herd":
        # Every herd binary must really run on herd.
        if os.path.exists(binary):
            ldd = subprocess.run(["ldd", binary], env=env, capture_output=True, text=True).stdout
            if "libgomp.so.1" in ldd and ARGS.herd not in ldd:
                status = "NOT-HERD"
    return status, "", dt


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--herd", default=os.path.abspath("target/release/gomp"))
    ap.add_argument("--out", default="/tmp/llvm-omp-testsuite")
    ap.add_argument("--threads", default="unset 4")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--runtimes", default="libgomp,herd",
                    help="comma-separated, of libgomp and herd (default both)")
    ap.add_argument("testdir")
    ARGS = ap.parse_args()
    ARGS.testdir = os.path.abspath(ARGS.testdir)
    ARGS.herd = os.path.abspath(ARGS.herd)
    if not os.path.exists(os.path.join(ARGS.herd, "libgomp.so.1")):
        sys.exit(f"--herd {ARGS.herd}: no libgomp.so.1 there (run `make omp`)")
    if not os.path.exists(f"{LLVM_BIN}/FileCheck"):
        sys.exit(f"{LLVM_BIN}/FileCheck is missing: apt-get install llvm-14-tools (or clang-14)")
    if os.path.exists(ARGS.out):
        shutil.rmtree(ARGS.out)
    os.makedirs(ARGS.out)
    tests = []
    for root, dirs, files in os.walk(ARGS.testdir):
        dirs.sort()
        rel = os.path.relpath(root, ARGS.testdir)
        if rel.split(os.sep)[0] == "ompt":
            continue
        for f in sorted(files):
            if f.endswith((".c", ".cpp")):
                t = os.path.normpath(os.path.join(rel, f))
                if ARGS.only in t:
                    tests.append(t)
    runtimes = [r for r in ("libgomp", "herd") if r in ARGS.runtimes.split(",")]
    cols = [(rt, th) for th in ARGS.threads.split() for rt in runtimes]
    results = {}
    with cf.ThreadPoolExecutor(ARGS.jobs) as ex:
        futs = {ex.submit(classify, t, rt, th): (t, rt, th) for t in tests for rt, th in cols}
        done = 0
        for fu in cf.as_completed(futs):
            t, rt, th = futs[fu]
            try:
                results[(t, rt, th)] = fu.result()
            except subprocess.TimeoutExpired:
                results[(t, rt, th)] = ("TIMEOUT", "", 0.0)
            done += 1
            if done % 50 == 0:
                print(f"{done}/{len(futs)}", file=sys.stderr, flush=True)
    with open(os.path.join(ARGS.out, "results.tsv"), "w") as f:
        f.write("test\t" + "\t".join(f"{rt}-{th}" for rt, th in cols) + "\n")
        for t in tests:
            f.write(t + "\t" + "\t".join(results[(t, rt, th)][0] for rt, th in cols) + "\n")
    with open(os.path.join(ARGS.out, "times.tsv"), "w") as f:
        f.write("test\t" + "\t".join(f"{rt}-{th}" for rt, th in cols) + "\n")
        for t in tests:
            f.write(t + "\t" + "\t".join(f"{results[(t, rt, th)][2]:.2f}" for rt, th in cols) + "\n")
    good = ("PASS", "XPASS")
    counts = {}
    bad = []
    for t in tests:
        for th in ARGS.threads.split():
            g = results.get((t, "libgomp", th), ("PASS",))[0]
            h = results.get((t, "herd", th), ("PASS",))[0]
            counts.setdefault(th, [0, 0, 0, 0])
            if g == "SKIP":
                continue
            counts[th][0] += 1
            if g in good:
                counts[th][1] += 1
                if h in good:
                    counts[th][2] += 1
                else:
                    bad.append((t, th, g, h))
            elif h in good:
                counts[th][3] += 1
    for th, (n, g, both, honly) in counts.items():
        print(f"threads={th}: {n} tests run; libgomp passes {g}, herd passes {both} of those; "
              f"herd passes {honly} that libgomp fails")
    for t, th, g, h in bad:
        print(f"  herd {h} where libgomp {g}: {t} (threads={th})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
