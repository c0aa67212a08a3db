//! The communicator thread under mpirun: point-to-point in every size class (zero, small,
//! split beyond the count limit), all-to-all, closures, listeners, and a failing rank.

use herd_mpi::{mpi_test, Mpi, Options};

fn small_chunks() -> Options {
    Options { max_count: 7, ..Options::default() }
}

mpi_test!(fn ring_every_size_class() ranks [1, 2, 4] within 120 {
    let mpi = Mpi::init(Options::default()).unwrap();
    let (r, n) = (mpi.rank(), mpi.size());
    for len in [0usize, 1, 6, 7, 8, 100, 1 << 16, 1 << 22] {
        let next = (r + 1) % n;
        let prev = (r + n - 1) % n;
        let data: Vec<f64> = (0..len).map(|i| (r * 10_000_000 + i) as f64).collect();
        let rx = mpi.irecv::<f64>(prev, 5, len).unwrap();
        let tx = mpi.isend(next, 5, data.clone()).unwrap();
        let got = rx.wait().unwrap();
        assert_eq!(tx.wait().unwrap(), data, "the send buffer comes back unchanged");
        let want: Vec<f64> = (0..len).map(|i| (prev * 10_000_000 + i) as f64).collect();
        assert_eq!(got, want, "rank {r} from {prev}, {len} elements");
    }
});

mpi_test!(fn split_messages_reassemble() ranks [2, 4] within 120 {
    let mpi = Mpi::init(small_chunks()).unwrap();
    let (r, n) = (mpi.rank(), mpi.size());
    for len in [0usize, 1, 6, 7, 8, 13, 14, 15, 1000] {
        let next = (r + 1) % n;
        let prev = (r + n - 1) % n;
        let data: Vec<u32> = (0..len as u32).map(|i| i ^ (r as u32) << 20).collect();
        let rx = mpi.irecv::<u32>(prev, 9, len).unwrap();
        let _tx = mpi.isend(next, 9, data).unwrap();
        let want: Vec<u32> = (0..len as u32).map(|i| i ^ (prev as u32) << 20).collect();
        assert_eq!(rx.wait().unwrap(), want);
    }
    // all-to-all beyond the chunk size goes pairwise
    for count in [0usize, 3, 7, 20] {
        let send: Vec<u64> = (0..n * count).map(|k| (r * 10_000 + k) as u64).collect();
        let (back, got) = mpi.ialltoall(send.clone()).unwrap().wait().unwrap();
        assert_eq!(back, send);
        for i in 0..n {
            for k in 0..count {
                assert_eq!(got[i * count + k], (i * 10_000 + r * count + k) as u64);
            }
        }
    }
});

mpi_test!(fn alltoall_closures_and_listeners() ranks [1, 2, 4] within 120 {
    let mpi = Mpi::init(Options::default()).unwrap();
    let (r, n) = (mpi.rank(), mpi.size());
    let count = 1000;
    let send: Vec<f64> = (0..n * count).map(|k| (r * 1_000_000 + k) as f64).collect();
    let (_, got) = mpi.ialltoall(send).unwrap().wait().unwrap();
    for i in 0..n {
        assert_eq!(got[i * count], (i * 1_000_000 + r * count) as f64);
    }
    // a blocking collective through run
    let sum = mpi.run(|w| {
        use mpi::collective::{CommunicatorCollectives, SystemOperation};
        let mut s = 0u64;
        w.all_reduce_into(&(r as u64), &mut s, SystemOperation::sum());
        s
    });
    assert_eq!(sum, (n * (n - 1) / 2) as u64);
    // listeners: every rank sends one message to every rank, each counts n arrivals
    let (tx, rx) = std::sync::mpsc::channel();
    mpi.listen(11, move |src, bytes| tx.send((src, bytes)).unwrap());
    for d in 0..n {
        let _ = mpi.send_bytes(d, 11, vec![r as u8; r + 1]).unwrap();
    }
    let mut seen = vec![false; n];
    for _ in 0..n {
        let (src, bytes) = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("a message per rank");
        assert_eq!(bytes, vec![src as u8; src + 1]);
        assert!(!seen[src]);
        seen[src] = true;
    }
    mpi.barrier();
    mpi.unlisten(11);
    let st = mpi.stats();
    assert!(st.completed > 0);
    // the communicator thread initialized MPI and ran these operations: it has used CPU time,
    // and its clock only moves forward
    assert!(st.cpu_ns > 0, "{st:?}");
    assert!(mpi.stats().cpu_ns >= st.cpu_ns);
    // bad arguments are errors, not aborts
    assert!(mpi.isend(n, 1, vec![0u8]).is_err());
    assert!(mpi.isend(0, 40_000, vec![0u8]).is_err());
    assert!(mpi.ialltoall(vec![0u8; n + 1]).is_err() || n == 1);
    // a panic in a closure on the communicator thread comes back to the caller
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| mpi.run(|_| panic!("boom"))));
    assert!(p.is_err());
    mpi.barrier();
});

/// Bytes the kernel says can still be allocated (for the test below, which a
/// ThreadSanitizer build leaves out).
#[cfg(not(herd_tsan))]
fn mem_available() -> u64 {
    let info = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    info.lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

mpi_test!(
    // Not under ThreadSanitizer: its shadow memory for two 2 GiB buffers makes the run take minutes.
    #[cfg(not(herd_tsan))]
    fn message_beyond_int_count() ranks [2] within 300 {
    // 2^31 + 5 bytes: more elements than an MPI count holds, so the communicator thread
    // posts two messages at the default split size and the receive reassembles them.
    let len = (1usize << 31) + 5;
    let mpi = Mpi::init(Options::default()).unwrap();
    // Both ranks agree to skip when the machine cannot hold the two buffers (2 GiB a rank).
    let room = mpi.run(|w| {
        use mpi::collective::{CommunicatorCollectives, SystemOperation};
        let mine = u64::from(mem_available() > 6 * (1 << 30));
        let mut all = 0u64;
        w.all_reduce_into(&mine, &mut all, SystemOperation::min());
        all == 1
    });
    if !room {
        eprintln!("message_beyond_int_count: skipped, less than 6 GiB available per rank");
        return;
    }
    let byte = |i: usize| (i % 251) as u8;
    if mpi.rank() == 0 {
        let data: Vec<u8> = (0..len).map(byte).collect();
        let back = mpi.isend(1, 3, data).unwrap().wait().unwrap();
        assert_eq!(back.len(), len);
    } else {
        let got = mpi.irecv::<u8>(0, 3, len).unwrap().wait().unwrap();
        assert_eq!(got.len(), len);
        for i in (0..len).step_by(4093).chain(len - 10..len).chain((i32::MAX as usize - 3)..(i32::MAX as usize + 3)) {
            assert_eq!(got[i], byte(i), "byte {i}");
        }
    }
    assert!(mpi.stats().completed >= 1);
    mpi.barrier();
});

mpi_test!(fn ranks_on_a_node_split_its_cores() ranks [1, 2, 4] within 60 {
    use herd_mpi::NodeShare;
    let mpi = Mpi::init(Options::default()).unwrap();
    let (local, ranks) = mpi.local();
    assert_eq!(ranks, mpi.size(), "one node");
    assert_eq!(local, mpi.rank());
    let cores = {
        let topo = herd::Topology::detect().unwrap();
        let mut c: Vec<usize> = topo.pus().iter().map(|p| p.core).collect();
        c.dedup();
        c.len()
    };
    match mpi.node_share() {
        NodeShare::Alone => assert_eq!(ranks, 1),
        NodeShare::Claimed(pus) => {
            assert!(ranks > 1 && !pus.is_empty());
            // every rank's share, gathered: disjoint, and the pool runs on its own share
            let mut mine = vec![u32::MAX; 64];
            mine[..pus.len()].copy_from_slice(pus);
            let (_, all) = mpi.ialltoall(mine.repeat(mpi.size())).unwrap().wait().unwrap();
            let mut seen: Vec<u32> = all.into_iter().filter(|&p| p != u32::MAX).collect();
            let total = seen.len();
            seen.sort_unstable();
            seen.dedup();
            if ranks <= cores {
                assert_eq!(seen.len(), total, "shares overlap: {seen:?}");
            } else {
                assert_eq!(seen.len(), cores.min(total), "oversubscribed ranks spread over every core: {seen:?}");
            }
            assert!(herd::current_num_threads() <= pus.len().max(1));
        }
        NodeShare::Skipped(why) => panic!("skipped on a real topology: {why}"),
        NodeShare::Given => panic!("mpirun --bind-to none leaves ranks unbound and HERD_PLACES is unset"),
    }
    mpi.barrier();
});

/// The ranks of `early_exit_child` under mpirun: rank 1 fails right after starting (by a
/// panic, or by exiting with status 3 without finalizing) while rank 0 waits in a barrier
/// that can never complete. mpirun must end the whole job, not hang, with the failing rank
/// named.
#[test]
fn a_failing_rank_ends_the_job_and_is_named() {
    use herd_mpi::testing::{is_child, mpirun, run_with_deadline};
    if is_child() {
        return; // only the launched `early_exit_child` runs in the ranks
    }
    let exe = std::env::current_exe().unwrap();
    for how in ["panic", "exit"] {
        let mut cmd = mpirun(2, &exe, &["early_exit_child", "--exact", "--nocapture", "--test-threads=1"]);
        cmd.env(herd_mpi::testing::CHILD_ENV, "1").env("HERDMPI_EARLY", how);
        // The deadline tells a hang from an end; it is generous because a failing rank
        // prints a symbolized backtrace, which takes tens of seconds in a ThreadSanitizer
        // build on a loaded machine (40 s was seen).
        let (status, out, err) = run_with_deadline(&mut cmd, std::time::Duration::from_secs(180));
        let status =
            status.unwrap_or_else(|| panic!("{how}: the job hung (killed after 180 s)\n{out}\n{err}"));
        assert!(!status.success(), "{how}: the job must fail\n{out}\n{err}");
        let all = format!("{out}\n{err}");
        match how {
            "panic" => assert!(all.contains("herd-mpi: rank 1 of 2 panicked"), "{all}"),
            _ => assert!(all.contains("Exit code:    3") || all.contains("exit code 3"), "{all}"),
        }
    }
}

#[test]
fn early_exit_child() {
    if !herd_mpi::testing::is_child() || std::env::var_os("HERDMPI_EARLY").is_none() {
        return; // a rank of a_failing_rank_ends_the_job_and_is_named only
    }
    let mpi = Mpi::init(Options::default()).unwrap();
    if mpi.rank() == 1 {
        if std::env::var("HERDMPI_EARLY").as_deref() == Ok("panic") {
            panic!("rank 1 fails on purpose");
        }
        std::process::exit(3);
    }
    mpi.barrier(); // never completes: rank 1 is gone
}
