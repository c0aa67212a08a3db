//! herd preloaded beside the program's own libgomp.
//!
//! Loaded as `libgomp.so.1` (`herd run`, or `LD_LIBRARY_PATH=<dir of
//! gomp/libgomp.so.1>`), herd *is* the program's libgomp. Preloaded under its
//! own name (`LD_PRELOAD=libherd_omp.so`), it takes the program's `GOMP_*` and
//! `omp_*` calls, but the program's libgomp is loaded too and its constructor
//! runs first (the loader initialises a preloaded object after the program's
//! dependencies, unless the preloaded object depends on them; herd does not
//! depend on libgomp). With `OMP_PROC_BIND` / `OMP_PLACES` /
//! `GOMP_CPU_AFFINITY`, that constructor computes its place list from the
//! process's CPUs and binds the initial thread to the first place. herd's
//! topology counts the CPUs the process may use, which at that point are the
//! initial thread's: herd would see one place's CPUs and run its whole team
//! there.
//!
//! [`restore_affinity`] (called before the settings are resolved) undoes that:
//! when a libgomp other than this library is loaded, and the calling
//! (initial) thread's CPUs are exactly that libgomp's first place while its
//! places hold more, the thread's affinity is set back to the union of the
//! places. libgomp built its places from the CPUs the process was started
//! with (each place intersected with them), so the union never exceeds what
//! the user allowed (`taskset`, cgroups). The place list is read through
//! libgomp's own `omp_get_num_places`, `omp_get_place_num_procs` and
//! `omp_get_place_proc_ids`, which only read it (no threads are started).
//! When the CPUs cannot be recovered, the program is refused with a message
//! naming the ways of loading herd that work. Nothing is printed otherwise;
//! what was done is a note of the `OMP_DISPLAY_ENV` / `HERD_DISPLAY_ENV`
//! report ([`note`]).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::Path;
use std::sync::OnceLock;

/// What [`restore_affinity`] did, for the display-env report.
static NOTE: OnceLock<String> = OnceLock::new();

/// The note for the display-env report, if the affinity was restored.
pub(crate) fn note() -> Option<&'static str> {
    NOTE.get().map(String::as_str)
}

type NumPlaces = unsafe extern "C" fn() -> c_int;
type PlaceNumProcs = unsafe extern "C" fn(c_int) -> c_int;
type PlaceProcIds = unsafe extern "C" fn(c_int, *mut c_int);

/// Gives the calling thread back the CPUs a foreign libgomp's constructor
/// took from it (see the module documentation). `Err`: the message refusing
/// the program.
pub(crate) fn restore_affinity() -> Result<(), String> {
    let Some(gomp) = Foreign::find() else { return Ok(()) };
    let Some(places) = gomp.places() else {
        // A libgomp without the OpenMP 4.5 place API: its binding cannot be
        // seen, let alone undone.
        return if binding_requested() {
            Err(refusal(
                &gomp.path,
                "binding is requested (OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY), so its constructor \
                 may have bound the initial thread to its first place, but it has no omp_get_place_proc_ids \
                 (gcc older than 6): herd cannot tell which CPUs the program may use",
            ))
        } else {
            Ok(())
        };
    };
    let (Some(first), Some(current)) = (places.first(), current_cpus()) else { return Ok(()) };
    let mut union: Vec<usize> = places.iter().flatten().copied().collect();
    union.sort_unstable();
    union.dedup();
    // Only libgomp's own binding is undone: the thread on exactly its first
    // place, which is not all of its places.
    if current != *first || union == current {
        return Ok(());
    }
    set_cpus(&union).map_err(|e| {
        let why = format!(
            "its constructor bound the initial thread to CPU(s) {}, and setting it back to CPU(s) {} failed: {e}",
            list(&current),
            list(&union)
        );
        refusal(&gomp.path, &why)
    })?;
    let _ = NOTE.set(format!(
        "the program's libgomp ({}) is loaded beside herd and bound the initial thread to its first place, \
         CPU(s) {}; herd set it back to CPU(s) {} (the union of that libgomp's places)",
        gomp.path,
        list(&current),
        list(&union)
    ));
    Ok(())
}

/// A loaded `libgomp.so.1` that is not this library.
struct Foreign {
    handle: *mut c_void,
    /// Its path, as loaded.
    path: String,
}

impl Foreign {
    fn find() -> Option<Foreign> {
        // SAFETY: a NUL-terminated name; with RTLD_NOLOAD nothing is loaded
        // (no constructor runs): a handle is returned only for an object
        // already loaded under that soname.
        let handle = unsafe { libc::dlopen(c"libgomp.so.1".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if handle.is_null() {
            return None;
        }
        let mut gomp = Foreign { handle, path: String::new() };
        let (theirs, path) = object_of(gomp.sym(c"omp_get_thread_num")?)?;
        // Any static of this library tells where it is loaded.
        let (ours, _) = object_of(&NOTE as *const OnceLock<String> as *const c_void)?;
        if theirs == ours {
            return None; // herd itself, loaded as libgomp.so.1
        }
        gomp.path = path;
        Some(gomp)
    }

    /// The address of `name` in this libgomp (or its dependencies).
    fn sym(&self, name: &CStr) -> Option<*mut c_void> {
        // SAFETY: a live handle from dlopen and a NUL-terminated name.
        let p = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    }

    /// Its place list (OS CPU numbers of each place); `None` without the
    /// place API.
    fn places(&self) -> Option<Vec<Vec<usize>>> {
        let num = self.sym(c"omp_get_num_places")?;
        let procs = self.sym(c"omp_get_place_num_procs")?;
        let ids = self.sym(c"omp_get_place_proc_ids")?;
        // SAFETY: these are libgomp's OpenMP API functions of these C
        // signatures (OpenMP 4.5: int (void), int (int), void (int, int *)).
        let (num, procs, ids) = unsafe {
            (
                std::mem::transmute::<*mut c_void, NumPlaces>(num),
                std::mem::transmute::<*mut c_void, PlaceNumProcs>(procs),
                std::mem::transmute::<*mut c_void, PlaceProcIds>(ids),
            )
        };
        // SAFETY: reads libgomp's place count, set up by its constructor.
        let n = unsafe { num() }.max(0);
        let mut places = Vec::with_capacity(n as usize);
        for p in 0..n {
            // SAFETY: `p` is a valid place number.
            let k = unsafe { procs(p) }.max(0) as usize;
            let mut buf = vec![0 as c_int; k];
            // SAFETY: `buf` holds the place's `k` CPU numbers, as the function requires.
            unsafe { ids(p, buf.as_mut_ptr()) };
            let mut place: Vec<usize> = buf.into_iter().filter_map(|c| usize::try_from(c).ok()).collect();
            place.sort_unstable();
            places.push(place);
        }
        Some(places)
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        // SAFETY: the handle from `find`'s dlopen, closed once (it only drops
        // the reference dlopen took; the object stays loaded).
        unsafe { libc::dlclose(self.handle) };
    }
}

/// The base address and path of the object holding `addr`.
fn object_of(addr: *const c_void) -> Option<(usize, String)> {
    // SAFETY: Dl_info is plain data; all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer; `addr` is only looked up, not read.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 {
        return None;
    }
    let name = if info.dli_fname.is_null() {
        String::from("?")
    } else {
        // SAFETY: dladdr's file name is a NUL-terminated string owned by the loader.
        unsafe { CStr::from_ptr(info.dli_fname as *const c_char) }.to_string_lossy().into_owned()
    };
    Some((info.dli_fbase as usize, name))
}

/// The calling thread's CPUs, in order.
fn current_cpus() -> Option<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer of the size given.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return None;
    }
    // SAFETY: the indices are below CPU_SETSIZE.
    Some((0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect())
}

/// Binds the calling thread to `cpus`.
fn set_cpus(cpus: &[usize]) -> Result<(), String> {
    // SAFETY: as in `current_cpus`.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(format!("CPU {c} is beyond the {} a cpu_set_t holds", libc::CPU_SETSIZE));
        }
        // SAFETY: `c` is below CPU_SETSIZE (checked above).
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: a valid set of the size given.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(())
}

/// Whether the environment asks libgomp to bind threads (and so, to bind the
/// initial thread at start-up).
fn binding_requested() -> bool {
    let set = |v: &str| std::env::var(v).is_ok_and(|s| !s.trim().is_empty());
    match std::env::var(crate::env::PROC_BIND) {
        Ok(b) if !b.trim().is_empty() => {
            !b.split(',').next().unwrap_or("").trim().eq_ignore_ascii_case("false")
        }
        _ => set(crate::env::PLACES) || set("GOMP_CPU_AFFINITY"),
    }
}

/// The message refusing the program: why, and the ways that work.
fn refusal(gomp: &str, why: &str) -> String {
    let (_, ours) =
        object_of(&NOTE as *const OnceLock<String> as *const c_void).unwrap_or((0, "libherd_omp.so".into()));
    let dir = Path::new(&ours).parent().unwrap_or(Path::new(".")).join("gomp");
    format!(
        "herd's library ({ours}) is preloaded beside the program's own libgomp ({gomp}), and {why}. \
         Load herd as the program's libgomp instead: `herd run -- PROG`, or \
         LD_LIBRARY_PATH={} PROG (the directory of herd's gomp/libgomp.so.1)",
        dir.display()
    )
}

/// `0-3,6` for sorted CPU numbers.
fn list(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if j > i { format!("{}-{}", cpus[i], cpus[j]) } else { cpus[i].to_string() });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_lists() {
        assert_eq!(super::list(&[]), "");
        assert_eq!(super::list(&[0]), "0");
        assert_eq!(super::list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
    }
}
