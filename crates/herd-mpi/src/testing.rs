//! Tests that run under `mpirun`: [`crate::mpi_test!`] makes a `#[test]` that, run by
//! `cargo test`, launches its own test binary under `mpirun -np N` for each N it names
//! (`--oversubscribe`, loopback only) with a deadline, and fails with the ranks' output if
//! any rank fails, exits early, or the deadline passes. Under `mpirun` the same test runs
//! its body on every rank.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set in the environment of the ranks a test launched (not `HERD_*`: herd warns about
/// variables of that prefix it does not know).
pub const CHILD_ENV: &str = "HERDMPI_TEST_CHILD";

/// Whether this process is a rank of a launched test.
pub fn is_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// The environment variable naming a launch's own session directory (see [`mpirun`]).
const SESSION_DIR_ENV: &str = "OMPI_MCA_orte_tmpdir_base";
/// The prefix of the session directories [`mpirun`] creates, so that
/// [`run_with_deadline`] removes only its own.
const SESSION_DIR_PREFIX: &str = "herd-mpirun-";

/// The `mpirun` command line used for `np` ranks of `program args…`: oversubscribed,
/// loopback TCP and shared memory only, unbound, and allowed to run as root.
///
/// Each command gets its own session directory under the temporary directory (removed by
/// [`run_with_deadline`] when the job ends): Open MPI 4 creates `/tmp/ompi.<host>.<uid>`
/// with a check-then-`mkdir` that fails ("A call to mkdir was unable to create the desired
/// directory … File exists") when two `mpirun`s of one user start at the same moment, as
/// the tests of one binary do; a clean-clone CI run failed that way.
pub fn mpirun(np: usize, program: &std::path::Path, args: &[&str]) -> Command {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static LAUNCHES: AtomicUsize = AtomicUsize::new(0);
    let session = std::env::temp_dir().join(format!(
        "{SESSION_DIR_PREFIX}{}-{}",
        std::process::id(),
        LAUNCHES.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&session)
        .unwrap_or_else(|e| panic!("cannot create mpirun's session directory {}: {e}", session.display()));
    let mut c = Command::new("mpirun");
    c.env(SESSION_DIR_ENV, &session).env("TMPDIR", &session);
    c.args([
        "--oversubscribe",
        "--bind-to",
        "none",
        "--mca",
        "btl",
        "self,vader,tcp",
        "--mca",
        "btl_tcp_if_include",
        "lo",
    ]);
    c.args(["-np", &np.to_string()]);
    c.arg(program).args(args);
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    // Quiet the "no high-performance network" notices of a container without one.
    c.env("OMPI_MCA_btl_base_warn_component_unused", "0");
    c
}

/// The test side of [`crate::mpi_test!`]: in a rank, returns `true` (run the body); in
/// `cargo test`, launches the test under `mpirun` for each count in `ranks`, panics on a
/// failure, and returns `false`.
pub fn launch(path: &str, ranks: &[usize], limit: Duration) -> bool {
    if is_child() {
        return true;
    }
    // libtest names a test by its path without the crate.
    let name = path.split_once("::").map(|(_, rest)| rest).unwrap_or(path);
    let exe = std::env::current_exe().expect("the test binary's path");
    for &np in ranks {
        let mut cmd = mpirun(np, &exe, &[name, "--exact", "--nocapture", "--test-threads=1"]);
        cmd.env(CHILD_ENV, "1");
        let (status, o, e) = run_with_deadline(&mut cmd, limit);
        match status {
            None => panic!(
                "{name} under mpirun -np {np} did not finish within {} s (killed)\n--- stdout\n{o}\n--- stderr\n{e}",
                limit.as_secs()
            ),
            Some(s) if !s.success() => {
                panic!("{name} under mpirun -np {np} failed ({s})\n--- stdout\n{o}\n--- stderr\n{e}")
            }
            Some(_) => {
                // The ranks' outputs interleave (one run printed "test result: okok."), so
                // this looks only for libtest's opening line, which a rank writes at once:
                // a filter that matched no test prints "running 0 tests".
                if o.contains("running 0 tests") || !o.contains("running 1 test") {
                    panic!("{name} under mpirun -np {np} ran no test (name mismatch?)\n--- stdout\n{o}\n--- stderr\n{e}");
                }
            }
        }
    }
    false
}

/// Runs `cmd` (usually an [`mpirun`] line) in its own process group, collecting its output;
/// past `limit` the whole group (mpirun and every rank) is killed and the status is `None`.
/// The session directory an [`mpirun`] command was given is removed afterwards.
pub fn run_with_deadline(
    cmd: &mut Command,
    limit: Duration,
) -> (Option<std::process::ExitStatus>, String, String) {
    use std::os::unix::process::CommandExt;
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let start = Instant::now();
    let mut child =
        cmd.spawn().unwrap_or_else(|e| panic!("cannot run {cmd:?} (is openmpi-bin installed?): {e}"));
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().expect("waiting for the child") {
            break Some(s);
        }
        if start.elapsed() > limit {
            // SAFETY: kill(2) on the process group created by process_group(0) above.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if let Some(Some(dir)) = cmd.get_envs().find(|(k, _)| *k == SESSION_DIR_ENV).map(|(_, v)| v) {
        let dir = std::path::Path::new(dir);
        if dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with(SESSION_DIR_PREFIX)) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    (status, t_out.join().unwrap_or_default(), t_err.join().unwrap_or_default())
}

/// A `#[test]` whose body runs on every rank under `mpirun -np N`, for each N listed, with a
/// deadline in seconds for each launch:
///
/// ```ignore
/// herd_mpi::mpi_test!(fn ring() ranks [1, 2, 4] within 60 {
///     let mpi = herd_mpi::Mpi::init(Default::default()).unwrap();
///     // … every rank runs this
/// });
/// ```
#[macro_export]
macro_rules! mpi_test {
    ($(#[$m:meta])* fn $name:ident() ranks [$($n:expr),+] within $secs:literal $body:block) => {
        $(#[$m])*
        #[test]
        fn $name() {
            let path = concat!(module_path!(), "::", stringify!($name));
            if $crate::testing::launch(path, &[$($n),+], ::std::time::Duration::from_secs($secs)) $body
        }
    };
}
