# herd — top-level entry points. `make demo` and `make test` install any
# missing system packages first (Debian/Ubuntu, apt-get, as root or via sudo).

SHELL := /bin/bash
CARGO ?= cargo
# Debian packages the build and the tests need.
APT_PACKAGES := pkg-config libhwloc-dev hwloc libudev-dev gcc g++ gfortran make libomp-dev fonts-dejavu-core libopenblas0-pthread libopenblas-serial-dev python3-numpy python3-scipy \
  libopenmpi-dev openmpi-bin libclang-dev libfftw3-dev libfftw3-mpi-dev libscalapack-openmpi-dev
LOOM_MAX_PREEMPTIONS ?= 3

.PHONY: all deps build omp demo test test-rust test-loom test-shuttle test-c test-omp test-lapack test-mpi bench clean tsan

all: build

deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(CARGO) build --release --workspace
	./crates/herd-omp/link.sh

# herd's OpenMP runtime: target/release/libherd_omp.so and
# target/release/gomp/libgomp.so.1 (libgomp's ABI and symbol versions).
omp: deps
	./crates/herd-omp/link.sh

demo: build
	./target/release/herd topo
	./target/release/herd pmo --quick --json out/pmo-quick.json --plot out/pmo-quick.svg
	@echo "chart written to out/pmo-quick.svg, data to out/pmo-quick.json"

test: deps test-rust test-loom test-shuttle test-c test-omp test-lapack test-mpi
	@echo "make test: all suites passed"

test-rust:
	$(CARGO) test --workspace --release --exclude herd-mpi
	# herd-la's OpenBLAS tile-kernel backend (serial OpenBLAS, -l openblas).
	$(CARGO) test --release -p herd-la --features openblas

# Model checks of the sleep/wake protocol, the latches, region post/acknowledge
# down the wake tree and the mts steal ticket, of herd-omp's
# worksharing ring and barrier (bounded), and of herd-flow's ready queue and
# dependency counting.
test-loom:
	RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=$(LOOM_MAX_PREEMPTIONS) \
	  $(CARGO) test -p herd --release --lib --target-dir target/loom -- sync:: sched:: feb:: pool::
	RUSTFLAGS="--cfg loom" $(CARGO) test -p herd-omp --release --lib --target-dir target/loom -- loom_models
	RUSTFLAGS="--cfg loom" $(CARGO) test -p herd-flow --release --lib --target-dir target/loom -- models
	RUSTFLAGS="--cfg loom" $(CARGO) test -p herd-mpi --release --lib --target-dir target/loom -- models
	RUSTFLAGS="--cfg loom" $(CARGO) test -p herd-la --release --lib --target-dir target/loom -- claims_models

# Randomized (random and PCT) schedule checks of the protocols whose models
# need more threads than loom can search: several wakers of different ranges
# cascading over the same sleepers; a refused job handed back to a region
# whose master and member both sleep.
test-shuttle:
	RUSTFLAGS="--cfg shuttle" $(CARGO) test -p herd --release --lib --target-dir target/shuttle -- shuttle_model hand_back_model

# The C comparison programs must compile.
test-c:
	$(MAKE) -C bench c-programs

# The OpenMP construct suite (C programs checking their own results) under
# herd, preloaded and as libgomp.so.1, and under libgomp as the reference.
test-omp: omp
	bash crates/herd-omp/tests/c/run.sh --reference --lib target/release/libherd_omp.so --gomp-dir target/release/gomp
	bash crates/herd-omp/tests/symbol_versions.sh target/release/gomp

# herd-mpi: each MPI test launches itself under `mpirun -np 1, 2, 4` (oversubscribed,
# loopback only, with a deadline) and checks every rank (crates/herd-mpi/src/testing.rs).
test-mpi: deps
	$(CARGO) test --release -p herd-mpi

# herd's LAPACK/BLAS C ABI (target/release/libherd_lapack.so) used by a C
# program, an unmodified Fortran program and NumPy/SciPy, with herd preloaded
# in front of the system LAPACK; results compared with the system library's;
# and an OpenMP program calling it on herd's OpenMP runtime, which carries the
# same LAPACK names and runs them on the team's threads (one set of workers).
test-lapack: deps omp
	$(CARGO) build --release -p herd-lapack
	bash crates/herd-lapack/tests/run.sh target/release/libherd_lapack.so target/release/gomp

bench: build
	./bench/run.sh

# ThreadSanitizer on the runtime's tests (nightly).
# tsan-suppressions.txt silences only crossbeam-deque's documented benign
# speculative slot read and a race TSan reports inside glibc's loader
# (dlclose against dl_iterate_phdr; see the file).
# RUST_BACKTRACE=0: the tests that check a panic reaches its caller panic on
# purpose, and with RUST_BACKTRACE=1 (set in some environments) each such panic
# symbolized a backtrace through the instrumented std's debug info, ~20 s a
# time (herd-mpi's comm tests: 117 s with it, 20 s without). A failing test
# still names its message and source line.
tsan: deps
	@rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src' || \
	  rustup component add rust-src --toolchain nightly
	TSAN_OPTIONS="suppressions=$(CURDIR)/tsan-suppressions.txt" RUST_BACKTRACE=0 \
	RUSTFLAGS="-Zsanitizer=thread --cfg herd_tsan" RUSTDOCFLAGS="-Zsanitizer=thread" \
	  $(CARGO) +nightly test -Zbuild-std --target x86_64-unknown-linux-gnu -p herd -p herd-omp -p herd-flow -p herd-mpi --target-dir target/tsan --tests

clean:
	$(CARGO) clean
	rm -rf out bench/build
