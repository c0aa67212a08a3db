//! The OpenMP 5.0 affinity format: `OMP_AFFINITY_FORMAT`,
//! `OMP_DISPLAY_AFFINITY`, `omp_{set,get}_affinity_format`,
//! `omp_display_affinity` and `omp_capture_affinity`.
//!
//! # The format
//!
//! Text is copied; `%%` is a `%`; a field is `%[0][.][width]type` where
//! `type` is one character or a long name in braces:
//!
//! | short | long | value |
//! |---|---|---|
//! | `t` | `team_num` | `omp_get_team_num()` |
//! | `T` | `num_teams` | `omp_get_num_teams()` |
//! | `L` | `nesting_level` | `omp_get_level()` |
//! | `n` | `thread_num` | `omp_get_thread_num()` |
//! | `N` | `num_threads` | `omp_get_num_threads()` |
//! | `a` | `ancestor_tnum` | the thread number at the level above (-1 outside any region) |
//! | `H` | `host` | the host name |
//! | `P` | `process_id` | `getpid()` |
//! | `i` | `native_thread_id` | `pthread_self()`, in hex with `0x` (as libgomp prints it) |
//! | `A` | `thread_affinity` | the CPUs the thread may run on, as ranges: `0-3,6` |
//!
//! A field shorter than `width` is padded with spaces on the right; `.`
//! right-justifies it (spaces on the left); `0` (only with `.`) pads a
//! number with zeros after its sign or `0x`. These are libgomp's rules; as
//! in libgomp, a malformed format (unknown type, `0` without `.`, `0`/`.`
//! without a width, an unterminated or unknown long name) ends the program
//! with a message when it is used. The default format is libgomp's,
//! `level %L thread %i affinity %A`.
//!
//! # Display
//!
//! With `OMP_DISPLAY_AFFINITY=true`, every thread prints its line (with the
//! format in effect) to stderr when it enters a parallel region at a nesting
//! level, ancestor, thread number or CPU set different from the last one it
//! printed: at the first region, then only on change, as libgomp does. The
//! check when display is off is one load of a read-only flag.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr};
use std::sync::{Mutex, OnceLock};

/// libgomp's default `affinity-format-var`.
pub const DEFAULT_FORMAT: &str = "level %L thread %i affinity %A";

/// The widest field width accepted (a larger one is a format error rather
/// than an allocation of that size).
const MAX_WIDTH: usize = 1 << 16;

/// The long field names and their one-character types.
const LONG_NAMES: &[(&str, char)] = &[
    ("team_num", 't'),
    ("num_teams", 'T'),
    ("nesting_level", 'L'),
    ("thread_num", 'n'),
    ("num_threads", 'N'),
    ("ancestor_tnum", 'a'),
    ("host", 'H'),
    ("process_id", 'P'),
    ("native_thread_id", 'i'),
    ("thread_affinity", 'A'),
];

/// What the fields of one thread's line show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    pub team_num: i32,
    pub num_teams: i32,
    pub level: i32,
    pub thread_num: i32,
    pub num_threads: i32,
    pub ancestor_tnum: i32,
    pub host: String,
    pub pid: i32,
    /// `pthread_self()`.
    pub native_id: u64,
    /// The CPUs the thread may run on, in increasing order.
    pub cpus: Vec<usize>,
}

/// How a field is padded to its width.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pad {
    Left,
    Right,
    RightZero,
}

/// Renders `format` for `info`; a malformed format is an error naming the fault.
pub fn render(format: &str, info: &ThreadInfo) -> Result<String, String> {
    let mut out = String::with_capacity(format.len() + 32);
    let mut rest = format;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let spec = &rest[at + 1..];
        if let Some(after) = spec.strip_prefix('%') {
            out.push('%');
            rest = after;
            continue;
        }
        let mut pad = Pad::Left;
        let mut i = 0;
        if spec[i..].starts_with('0') {
            i += 1;
            if !spec[i..].starts_with('.') {
                return Err(format!("leading zero not followed by dot in affinity format {format:?}"));
            }
            pad = Pad::RightZero;
            i += 1;
        } else if spec[i..].starts_with('.') {
            pad = Pad::Right;
            i += 1;
        }
        let digits = spec[i..].bytes().take_while(u8::is_ascii_digit).count();
        let width = if digits > 0 && !spec[i..].starts_with('0') {
            let w = spec[i..i + digits]
                .parse::<usize>()
                .ok()
                .filter(|&w| w <= MAX_WIDTH)
                .ok_or_else(|| format!("field width over {MAX_WIDTH} in affinity format {format:?}"))?;
            i += digits;
            Some(w)
        } else if pad != Pad::Left {
            return Err(format!(
                "leading zero or right justification requires a width in affinity format {format:?}"
            ));
        } else {
            None
        };
        let ty = if spec[i..].starts_with('{') {
            let body = &spec[i + 1..];
            let Some(close) = body.find('}') else {
                return Err(format!("unterminated long type name in affinity format {format:?}"));
            };
            let name = &body[..close];
            let Some(&(_, c)) = LONG_NAMES.iter().find(|(n, _)| *n == name) else {
                return Err(format!("unsupported long type name '{name}' in affinity format {format:?}"));
            };
            i += close + 2;
            c
        } else {
            let Some(c) = spec[i..].chars().next() else {
                return Err(format!("'%' at the end of affinity format {format:?}"));
            };
            i += c.len_utf8();
            c
        };
        let (text, numeric) = match ty {
            't' => (info.team_num.to_string(), true),
            'T' => (info.num_teams.to_string(), true),
            'L' => (info.level.to_string(), true),
            'n' => (info.thread_num.to_string(), true),
            'N' => (info.num_threads.to_string(), true),
            'a' => (info.ancestor_tnum.to_string(), true),
            'P' => (info.pid.to_string(), true),
            'i' => (format!("{:#x}", info.native_id), true),
            'H' => (info.host.clone(), false),
            'A' => (cpu_list(&info.cpus), false),
            c => return Err(format!("unsupported type '{c}' in affinity format {format:?}")),
        };
        push_padded(&mut out, &text, width, if numeric { pad } else { nonzero(pad) });
        rest = &spec[i..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Zero padding applies to numbers only; text is right-justified with spaces.
fn nonzero(pad: Pad) -> Pad {
    if pad == Pad::RightZero {
        Pad::Right
    } else {
        pad
    }
}

fn push_padded(out: &mut String, text: &str, width: Option<usize>, pad: Pad) {
    let fill = width.map_or(0, |w| w.saturating_sub(text.chars().count()));
    match pad {
        Pad::Left => {
            out.push_str(text);
            out.extend(std::iter::repeat_n(' ', fill));
        }
        Pad::Right => {
            out.extend(std::iter::repeat_n(' ', fill));
            out.push_str(text);
        }
        Pad::RightZero => {
            let sign = if text.starts_with('-') {
                1
            } else if text.starts_with("0x") {
                2
            } else {
                0
            };
            out.push_str(&text[..sign]);
            out.extend(std::iter::repeat_n('0', fill));
            out.push_str(&text[sign..]);
        }
    }
}

/// CPUs as libgomp writes them: increasing ranges, `0-3,6,8-9`.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end += 1;
        }
        if !s.is_empty() {
            s.push(',');
        }
        if end == start {
            s.push_str(&start.to_string());
        } else {
            s.push_str(&format!("{start}-{end}"));
        }
        i += 1;
    }
    s
}

/// Copies `text` into the caller's `buffer` of `size` bytes as `snprintf`
/// does (truncated, NUL-terminated when `size > 0`); returns `text`'s length.
///
/// # Safety
/// `buffer` is valid for `size` bytes of writes (or `size` is 0).
unsafe fn copy_out(text: &str, buffer: *mut c_char, size: usize) -> usize {
    if size > 0 && !buffer.is_null() {
        let n = text.len().min(size - 1);
        // SAFETY: n + 1 <= size bytes of `buffer` are writable (caller's
        // contract); `text` is a distinct Rust allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buffer.cast::<u8>(), n);
            *buffer.add(n) = 0;
        }
    }
    text.len()
}

/// `affinity-format-var`, set from `OMP_AFFINITY_FORMAT` at first use.
fn format_var() -> &'static Mutex<String> {
    static VAR: OnceLock<Mutex<String>> = OnceLock::new();
    VAR.get_or_init(|| {
        let omp = &crate::runtime::runtime().omp;
        Mutex::new(omp.affinity_format.clone().unwrap_or_else(|| DEFAULT_FORMAT.to_string()))
    })
}

fn current_format() -> String {
    format_var().lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The format to use: `format` if non-null and non-empty, else the ICV.
///
/// # Safety
/// `format` is null or a NUL-terminated string.
unsafe fn chosen(format: *const c_char) -> String {
    if format.is_null() {
        return current_format();
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    let f = unsafe { CStr::from_ptr(format) }.to_string_lossy();
    if f.is_empty() {
        current_format()
    } else {
        f.into_owned()
    }
}

/// The calling thread's line for `format`; a malformed format ends the program.
fn line(format: &str) -> String {
    render(format, &this_thread()).unwrap_or_else(|e| crate::unsupported::fatal(&e))
}

extern "C" {
    // Resolved within this library (another module defines them); declared
    // by symbol so that this file does not depend on where teams live.
    fn omp_get_team_num() -> c_int;
    fn omp_get_num_teams() -> c_int;
}

/// The calling thread's field values.
fn this_thread() -> ThreadInfo {
    let level = crate::api::omp_get_level();
    // SAFETY: both take no arguments and only read the calling thread's state.
    let (team_num, num_teams) = unsafe { (omp_get_team_num(), omp_get_num_teams()) };
    ThreadInfo {
        team_num,
        num_teams,
        level,
        thread_num: crate::api::omp_get_thread_num(),
        num_threads: crate::api::omp_get_num_threads(),
        ancestor_tnum: if level > 0 { crate::api::omp_get_ancestor_thread_num(level - 1) } else { -1 },
        host: host_name(),
        // SAFETY: getpid has no preconditions.
        pid: unsafe { libc::getpid() },
        // SAFETY: pthread_self has no preconditions.
        native_id: unsafe { libc::pthread_self() } as u64,
        cpus: thread_cpus(),
    }
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` has room for len - 1 bytes plus the NUL we keep.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
    if r != 0 {
        return "node".into();
    }
    let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// The calling thread's CPU set (empty if it cannot be read).
fn thread_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Vec::new();
    }
    // SAFETY: CPU_ISSET reads the initialised `set` within CPU_SETSIZE.
    (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
}

/// `OMP_DISPLAY_AFFINITY`, read once.
fn display_on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| crate::runtime::runtime().omp.display_affinity.unwrap_or(false))
}

/// What a displayed line depends on: level, ancestor, thread number, CPUs.
type Shown = (i32, i32, i32, Vec<usize>);

thread_local! {
    /// What this thread last displayed.
    static SHOWN: RefCell<Option<Shown>> = const { RefCell::new(None) };
}

/// Called by each member as it enters a parallel region: prints its line
/// when `OMP_DISPLAY_AFFINITY` is on and what it shows changed.
#[inline]
pub(crate) fn region_entered() {
    if display_on() {
        display_if_changed();
    }
}

#[cold]
fn display_if_changed() {
    let info = this_thread();
    let key = (info.level, info.ancestor_tnum, info.thread_num, info.cpus.clone());
    let changed = SHOWN.with(|s| {
        let mut s = s.borrow_mut();
        let changed = s.as_ref() != Some(&key);
        *s = Some(key);
        changed
    });
    if changed {
        let text = render(&current_format(), &info).unwrap_or_else(|e| crate::unsupported::fatal(&e));
        eprintln!("{text}");
    }
}

#[no_mangle]
pub unsafe extern "C" fn omp_set_affinity_format(format: *const c_char) {
    if format.is_null() {
        crate::unsupported::fatal("omp_set_affinity_format: the format is a null pointer");
    }
    // SAFETY: non-null; the caller passes a NUL-terminated string.
    let f = unsafe { CStr::from_ptr(format) }.to_string_lossy().into_owned();
    *format_var().lock().unwrap_or_else(|e| e.into_inner()) = f;
}

#[no_mangle]
pub unsafe extern "C" fn omp_get_affinity_format(buffer: *mut c_char, size: usize) -> usize {
    // SAFETY: the caller provides `size` writable bytes at `buffer`.
    unsafe { copy_out(&current_format(), buffer, size) }
}

#[no_mangle]
pub unsafe extern "C" fn omp_display_affinity(format: *const c_char) {
    // SAFETY: `format` is null or NUL-terminated (the caller's contract).
    let f = unsafe { chosen(format) };
    eprintln!("{}", line(&f));
}

#[no_mangle]
pub unsafe extern "C" fn omp_capture_affinity(
    buffer: *mut c_char,
    size: usize,
    format: *const c_char,
) -> usize {
    // SAFETY: `format` is null or NUL-terminated (the caller's contract).
    let f = unsafe { chosen(format) };
    // SAFETY: the caller provides `size` writable bytes at `buffer`.
    unsafe { copy_out(&line(&f), buffer, size) }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn info() -> ThreadInfo {
        ThreadInfo {
            team_num: 0,
            num_teams: 1,
            level: 2,
            thread_num: 3,
            num_threads: 4,
            ancestor_tnum: 1,
            host: "box".into(),
            pid: 4242,
            native_id: 0xab,
            cpus: vec![0, 1, 2, 3, 6, 8, 9],
        }
    }

    fn r(f: &str) -> String {
        render(f, &info()).expect("valid format")
    }

    #[test]
    fn every_short_field() {
        assert_eq!(r("%t %T %L %n %N %a %H %P %i %A"), "0 1 2 3 4 1 box 4242 0xab 0-3,6,8-9");
    }

    #[test]
    fn every_long_field_matches_its_short_one() {
        for (name, c) in LONG_NAMES {
            assert_eq!(r(&format!("%{{{name}}}")), r(&format!("%{c}")), "{name}");
        }
    }

    #[test]
    fn the_default_format() {
        assert_eq!(r(DEFAULT_FORMAT), "level 2 thread 0xab affinity 0-3,6,8-9");
    }

    #[test]
    fn percent_and_plain_text() {
        assert_eq!(r("100%% at %n."), "100% at 3.");
        assert_eq!(r(""), "");
        assert_eq!(r("no fields"), "no fields");
    }

    #[test]
    fn widths_and_justification() {
        assert_eq!(r("[%5n]"), "[3    ]");
        assert_eq!(r("[%.5n]"), "[    3]");
        assert_eq!(r("[%0.5n]"), "[00003]");
        assert_eq!(r("[%0.6i]"), "[0x00ab]");
        assert_eq!(r("[%.6H]"), "[   box]");
        assert_eq!(r("[%0.6H]"), "[   box]");
        assert_eq!(r("[%6H]"), "[box   ]");
        assert_eq!(r("[%.12A]"), "[   0-3,6,8-9]");
        assert_eq!(r("[%12{thread_affinity}]"), "[0-3,6,8-9   ]");
        assert_eq!(r("[%2P]"), "[4242]");
        let neg = ThreadInfo { ancestor_tnum: -1, ..info() };
        assert_eq!(render("[%0.4a]", &neg).unwrap(), "[-001]");
    }

    #[test]
    fn malformed_formats_are_errors() {
        for bad in ["%", "%05n", "%.n", "%0n", "%q", "%{nope}", "%{team_num", "%.99999999n", "%{}"] {
            assert!(render(bad, &info()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list(&[]), "");
        assert_eq!(cpu_list(&[5]), "5");
        assert_eq!(cpu_list(&[0, 2, 4]), "0,2,4");
        assert_eq!(cpu_list(&[1, 2]), "1-2");
    }

    #[test]
    fn capture_truncates_like_snprintf() {
        let mut buf = [b'x' as c_char; 8];
        // SAFETY: buf has 8 bytes.
        let n = unsafe { copy_out("abcdefghijkl", buf.as_mut_ptr(), buf.len()) };
        assert_eq!(n, 12);
        // SAFETY: copy_out NUL-terminated it within its 8 bytes.
        assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap(), "abcdefg");
        // SAFETY: size 0 writes nothing.
        assert_eq!(unsafe { copy_out("abc", std::ptr::null_mut(), 0) }, 3);
        let mut big = [b'x' as c_char; 8];
        // SAFETY: big has 8 bytes.
        assert_eq!(unsafe { copy_out("abc", big.as_mut_ptr(), 8) }, 3);
        // SAFETY: NUL-terminated by copy_out.
        assert_eq!(unsafe { CStr::from_ptr(big.as_ptr()) }.to_str().unwrap(), "abc");
    }
}
