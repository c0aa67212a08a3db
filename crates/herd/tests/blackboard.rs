//! Hostile blackboards are harmless (issue 13): whatever another user (or a
//! stale file) puts at the blackboard's path — a FIFO, a symbolic link, a
//! file with a wrong mode, size or owner, arbitrary bytes — a pool built with
//! `Throttle::Auto` starts and stops promptly, reports what is there, and
//! never trusts it.
//!
//! Every test uses its own name (a `/dev/shm` name or a private temporary
//! directory standing for `$XDG_RUNTIME_DIR`), never the user's real
//! blackboard.

use herd::throttle::blackboard::{self, FileKind, Problem, Reader, Writer};
use herd::throttle::MonitorSettings;
use herd::{Pool, Throttle};
use proptest::prelude::*;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Runs `f`; aborts the whole test process, loudly, if it takes longer than
/// `limit` (a hang must not pass as a slow test).
fn with_watchdog<R>(name: &str, limit: Duration, f: impl FnOnce() -> R) -> R {
    let (tx, rx) = mpsc::channel::<()>();
    let name = name.to_string();
    let dog = std::thread::spawn(move || {
        if rx.recv_timeout(limit) == Err(mpsc::RecvTimeoutError::Timeout) {
            eprintln!("watchdog: {name} did not finish within {limit:?}: it blocked");
            std::process::abort();
        }
    });
    let r = f();
    drop(tx);
    dog.join().unwrap();
    r
}

fn is_root() -> bool {
    // SAFETY: getuid cannot fail and has no preconditions.
    unsafe { libc::getuid() == 0 }
}

/// The uid root gives files away to.
const NOBODY: u32 = 65534;

/// A fresh private directory (mode 0700) standing for `$XDG_RUNTIME_DIR`.
fn private_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("herd-test-bbi-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
    d
}

/// A blackboard name in a fresh private directory, as `herd monitor` and
/// the pools derive it from `$XDG_RUNTIME_DIR`.
fn runtime_name(tag: &str) -> (PathBuf, String) {
    let d = private_dir(tag);
    let name = blackboard::runtime_dir_name(&d).unwrap();
    (d, name)
}

fn shm_test_name(tag: &str) -> String {
    format!("/herd-test-bbi-{}-{tag}", std::process::id())
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0, "mkfifo {}", p.display());
}

/// Gives `p` (not following a link) to [`NOBODY`] when running as root;
/// returns whether it did.
fn give_away(p: &Path) -> bool {
    if is_root() {
        std::os::unix::fs::lchown(p, Some(NOBODY), Some(NOBODY)).unwrap();
        true
    } else {
        false
    }
}

/// A valid blackboard for `n` sockets (zeroed meters).
fn valid_bytes(n: u32) -> Vec<u8> {
    let total = blackboard::HEADER_SIZE + n as usize * blackboard::METER_SIZE;
    let mut b = vec![0u8; total];
    b[0..8].copy_from_slice(&blackboard::MAGIC.to_ne_bytes());
    b[8..12].copy_from_slice(&blackboard::VERSION.to_ne_bytes());
    b[12..16].copy_from_slice(&(blackboard::HEADER_SIZE as u32).to_ne_bytes());
    b[16..24].copy_from_slice(&(total as u64).to_ne_bytes());
    b[24..28].copy_from_slice(&n.to_ne_bytes());
    b
}

fn write_file(p: &Path, bytes: &[u8], mode: u32) {
    let _ = std::fs::remove_file(p);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(p).unwrap();
    std::io::Write::write_all(&mut f, bytes).unwrap();
    f.set_permissions(std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Builds a `Throttle::Auto` pool reading blackboard `name`, waits for the
/// monitor to report `words` about it, drops the pool, and checks that
/// nothing took long: the build, the report, the drop.
fn pool_reports_and_stops_promptly(name: &str, words: &[&str]) {
    let path = blackboard::display_path(name);
    with_watchdog(&format!("pool with blackboard {path}"), Duration::from_secs(20), || {
        let settings = MonitorSettings {
            epoch: Duration::from_millis(5),
            blackboard: Some(name.to_string()),
            ..MonitorSettings::default()
        };
        let t = Instant::now();
        let pool = Pool::builder()
            .num_threads(2)
            .throttle(Throttle::Auto)
            .monitor_settings(settings)
            .build()
            .unwrap();
        assert!(t.elapsed() < Duration::from_secs(5), "building took {:?}", t.elapsed());
        let monitor = pool.monitor().unwrap();
        let tid = monitor.thread_id();
        let t = Instant::now();
        let reported = loop {
            let w = blackboard::warnings().into_iter().find(|w| w.contains(&path));
            if w.is_some() || t.elapsed() > Duration::from_secs(5) {
                break w;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let w = reported.unwrap_or_else(|| panic!("no warning about {path}: {:?}", blackboard::warnings()));
        for word in words {
            assert!(w.contains(word), "{w:?} lacks {word:?}");
        }
        // The warning comes from the monitor's first attempt to open the
        // blackboard, which can precede its first finished epoch (seen
        // under ThreadSanitizer): wait for one.
        let t = Instant::now();
        let st = loop {
            let st = pool.monitor().unwrap().state();
            if st.epochs > 0 || t.elapsed() > Duration::from_secs(5) {
                break st;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert!(st.epochs > 0 && st.blackboard.is_none(), "{st:?}");
        // Work still runs.
        assert_eq!(
            pool.map_reduce(0..1000, herd::Schedule::Dynamic { chunk: 8 }, |i| i, 0, |a, b| a + b),
            499_500
        );
        let t = Instant::now();
        drop(pool);
        assert!(t.elapsed() < Duration::from_secs(1), "dropping the pool took {:?}", t.elapsed());
        assert!(
            !Path::new(&format!("/proc/self/task/{tid}")).exists(),
            "the monitor thread outlived its pool"
        );
    });
}

#[test]
fn a_fifo_squatting_the_shm_name_neither_blocks_nor_is_trusted() {
    let name = shm_test_name("fifo");
    let p = blackboard::path(&name).unwrap();
    let _ = std::fs::remove_file(&p);
    mkfifo(&p);
    let foreign = give_away(&p);
    let e =
        with_watchdog("Reader::open on a FIFO", Duration::from_secs(10), || Reader::open(&name).unwrap_err());
    let Problem::NotRegular { found } = &e else { panic!("{e:?}") };
    assert_eq!(found.kind, FileKind::Fifo);
    let mut words = vec!["FIFO", "not a regular file"];
    if foreign {
        assert_eq!(found.uid, NOBODY);
        words.push("uid 65534");
    }
    pool_reports_and_stops_promptly(&name, &words);
    // The daemon's side does not block either, and says what is there.
    let e = with_watchdog("Writer::create on a FIFO", Duration::from_secs(10), || {
        Writer::create(&name, 1, Duration::from_millis(10)).unwrap_err()
    });
    assert!(matches!(&e, Problem::NotRegular { found } if found.kind == FileKind::Fifo), "{e:?}");
    if foreign {
        // Another user's: `unlink` leaves it alone and says whose it is.
        let e = blackboard::unlink(&name).unwrap_err();
        assert!(matches!(&e, Problem::WrongOwner { found, .. } if found.uid == NOBODY), "{e:?}");
        assert!(p.exists());
        std::fs::remove_file(&p).unwrap();
    } else {
        eprintln!("note: not root: the FIFO is this user's own (the foreign-owner case needs root)");
        blackboard::unlink(&name).unwrap();
    }
}

#[test]
fn a_fifo_in_the_runtime_directory_neither_blocks_nor_is_trusted() {
    let (dir, name) = runtime_name("fifo");
    mkfifo(Path::new(&name));
    pool_reports_and_stops_promptly(&name, &["FIFO", "not a regular file"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_with_group_or_other_access_is_refused() {
    let (dir, name) = runtime_name("mode");
    write_file(Path::new(&name), &valid_bytes(1), 0o644);
    assert_eq!(Reader::open(&name).unwrap_err(), Problem::InsecureMode { mode: 0o644 });
    pool_reports_and_stops_promptly(&name, &["mode 0644", "group or others"]);
    // The daemon refuses it too (it does not loosen or reuse it).
    assert_eq!(Writer::create(&name, 1, Duration::ZERO).unwrap_err(), Problem::InsecureMode { mode: 0o644 });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_symbolic_link_is_never_followed() {
    let (dir, name) = runtime_name("link");
    // The link points at a perfectly valid blackboard of this user.
    let target = dir.join("target");
    write_file(&target, &valid_bytes(1), 0o600);
    std::os::unix::fs::symlink(&target, &name).unwrap();
    let e = Reader::open(&name).unwrap_err();
    assert!(matches!(&e, Problem::NotRegular { found } if found.kind == FileKind::Symlink), "{e:?}");
    pool_reports_and_stops_promptly(&name, &["symbolic link"]);
    // Neither does the writer: the target keeps its content.
    let e = Writer::create(&name, 2, Duration::ZERO).unwrap_err();
    assert!(matches!(&e, Problem::NotRegular { .. }), "{e:?}");
    assert_eq!(std::fs::read(&target).unwrap(), valid_bytes(1));
    // A dangling link to where a writer would create a file: nothing created.
    std::fs::remove_file(&target).unwrap();
    assert!(matches!(Writer::create(&name, 1, Duration::ZERO), Err(Problem::NotRegular { .. })));
    assert!(!target.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_of_the_wrong_size_is_refused() {
    let (dir, name) = runtime_name("size");
    let mut b = valid_bytes(2);
    b.truncate(b.len() - 1);
    write_file(Path::new(&name), &b, 0o600);
    assert!(matches!(Reader::open(&name), Err(Problem::WrongSize { .. })));
    pool_reports_and_stops_promptly(&name, &["wrong size"]);
    // Huge: refused before anything is mapped.
    let f = std::fs::OpenOptions::new().write(true).open(&name).unwrap();
    f.set_len(1 << 40).unwrap();
    let e = Reader::open(&name).unwrap_err();
    assert!(matches!(&e, Problem::WrongSize { detail } if detail.contains("more than")), "{e:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_of_another_user_is_refused() {
    if !is_root() {
        eprintln!("note: not root: cannot create a file of another uid; test skipped");
        return;
    }
    for name in [shm_test_name("owner"), runtime_name("owner").1] {
        let p = blackboard::path(&name).unwrap();
        write_file(&p, &valid_bytes(1), 0o600);
        give_away(&p);
        let e = Reader::open(&name).unwrap_err();
        let Problem::WrongOwner { found, me: 0 } = &e else { panic!("{e:?}") };
        assert_eq!((found.uid, found.kind), (NOBODY, FileKind::Regular));
        assert!(!found.is_ours());
        pool_reports_and_stops_promptly(&name, &["regular file", "uid 65534", "not owned by this user"]);
        assert!(matches!(Writer::create(&name, 1, Duration::ZERO), Err(Problem::WrongOwner { .. })));
        assert!(matches!(blackboard::unlink(&name), Err(Problem::WrongOwner { .. })));
        assert!(p.exists(), "unlink removed another user's file");
        std::fs::remove_file(&p).unwrap();
        if let Some(dir) = p.parent().filter(|d| d.starts_with(std::env::temp_dir())) {
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
}

#[test]
fn a_valid_blackboard_in_a_runtime_directory_is_read() {
    let (dir, name) = runtime_name("ok");
    let w = Writer::create(&name, 1, Duration::from_millis(10)).unwrap();
    let m = blackboard::Meter {
        llc_miss_rate: 0.0,
        cycles_rate: 0.0,
        utilisation: 0.5,
        suggested_active: 2,
        source: Some(blackboard::MeterSource::Software),
    };
    w.publish(&[m]);
    assert_eq!(Reader::open(&name).unwrap().read().unwrap().meters, vec![m]);
    let st = std::fs::symlink_metadata(&name).unwrap();
    assert_eq!(st.permissions().mode() & 0o7777, 0o600);
    blackboard::unlink(&name).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Segment contents for the property test: arbitrary bytes, or a valid
/// header for a few sockets whose seqlock fields and meters are arbitrary,
/// with at most one header byte changed and the size off by -1, 0 or +1.
fn contents() -> impl Strategy<Value = Vec<u8>> {
    let structured = (
        1u32..6,
        proptest::collection::vec(any::<u8>(), 32 + 5 * 32),
        proptest::option::of((0usize..32, any::<u8>())),
        0usize..3,
    )
        .prop_map(|(n, tail, flip, size)| {
            let mut b = valid_bytes(n);
            let len = b.len();
            b[32..].copy_from_slice(&tail[..len - 32]);
            // An even seqlock, so that the reader returns the meters.
            let seq = u64::from_ne_bytes(b[32..40].try_into().unwrap()) & !1;
            b[32..40].copy_from_slice(&seq.to_ne_bytes());
            if let Some((i, v)) = flip {
                b[i] = v;
            }
            match size {
                0 => b.truncate(len - 1),
                2 => b.push(0),
                _ => {}
            }
            b
        });
    prop_oneof![proptest::collection::vec(any::<u8>(), 0..400), structured]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Whatever a segment holds, opening and reading it never panics, and
    /// what it yields is in range.
    #[test]
    fn any_content_is_read_safely_and_in_range(bytes in contents()) {
        let name = &shm_test_name("prop");
        let path = blackboard::path(name).unwrap();
        write_file(&path, &bytes, 0o600);
        let opened = Reader::open(name);
        std::fs::remove_file(&path).unwrap();
        match opened {
            Ok(r) => {
                prop_assert!((1..=blackboard::MAX_SOCKETS as usize).contains(&r.n_sockets()));
                if let Some(s) = r.read() {
                    prop_assert_eq!(s.meters.len(), r.n_sockets());
                    for m in &s.meters {
                        prop_assert!(m.llc_miss_rate.is_finite() && m.llc_miss_rate >= 0.0, "{:?}", m);
                        prop_assert!(m.cycles_rate.is_finite() && m.cycles_rate >= 0.0, "{:?}", m);
                        prop_assert!((0.0..=1.0).contains(&m.utilisation), "{:?}", m);
                        prop_assert!((1..=blackboard::MAX_SUGGESTED_ACTIVE).contains(&m.suggested_active));
                    }
                    let _ = (s.age(), s.is_stale());
                }
            }
            Err(p) => {
                let _ = p.warning(name);
                let foreign = matches!(p, Problem::NotRegular { .. } | Problem::WrongOwner { .. });
                prop_assert!(!foreign, "{:?}", p);
            }
        }
    }
}
