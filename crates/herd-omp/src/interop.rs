//! OpenMP 5.1's `interop` construct and the interop-object queries (gcc
//! 16's `GOMP_5.1.3` node), on a machine whose only device is the host.
//!
//! An interop object gives access to a foreign runtime (CUDA, HIP, SYCL, …)
//! of a device. The host offers none, so, as libgomp does for the initial
//! device: `interop init(…: obj)` sets `obj` to `omp_interop_none`,
//! `destroy` resets it to `omp_interop_none`, `use` does nothing, and every
//! query of `omp_interop_none` answers "empty" (`omp_irc_empty`). A
//! construct's `depend` clauses are honoured: it waits for the dependences
//! as `taskwait depend` would (herd's `GOMP_taskwait_depend`). Property
//! numbers outside OpenMP's range answer `omp_irc_out_of_range`; an object
//! that is not `omp_interop_none` cannot have come from this runtime and
//! answers `omp_irc_other`. The Fortran forms of the string queries are in
//! `fortran.rs`.
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// `omp_interop_t`: an opaque pointer-sized handle; 0 is `omp_interop_none`.
pub(crate) type Interop = usize;
const NONE: Interop = 0;

/// `omp_interop_rc_t` values.
const RC_EMPTY: c_int = -1;
const RC_OUT_OF_RANGE: c_int = -2;
const RC_OTHER: c_int = -6;
const RC_NO_VALUE: c_int = 1;

/// The standard properties, `omp_ipr_fr_id` (−1) down to
/// `omp_ipr_targetsync` (−9) = `omp_ipr_first`, by name.
const PROPERTIES: [&CStr; 9] = [
    c"fr_id",
    c"fr_name",
    c"vendor",
    c"vendor_name",
    c"device_num",
    c"platform",
    c"device",
    c"device_context",
    c"targetsync",
];

/// The index in [`PROPERTIES`] of property `p`, if it is one.
fn property(p: c_int) -> Option<usize> {
    (p < 0 && p >= -(PROPERTIES.len() as c_int)).then(|| (-1 - p) as usize)
}

/// The `interop` construct: `init`, `use` and `destroy` hold `n_*` addresses
/// of interop variables; `depend` is gcc's dependence array or NULL.
#[no_mangle]
pub unsafe extern "C" fn GOMP_interop(
    _device: c_int,
    n_init: c_int,
    init: *const *mut Interop,
    _targetsync: *const c_void,
    _prefer_type: *const c_void,
    _n_use: c_int,
    _use: *const *mut Interop,
    n_destroy: c_int,
    destroy: *const *mut Interop,
    _flags: c_uint,
    depend: *mut *mut c_void,
) {
    if !depend.is_null() {
        // SAFETY: gcc's dependence array.
        unsafe { crate::abi::GOMP_taskwait_depend(depend) };
    }
    for (vars, n) in [(init, n_init), (destroy, n_destroy)] {
        for i in 0..usize::try_from(n).unwrap_or(0) {
            // SAFETY: `n` addresses of interop variables by gcc's contract.
            unsafe { **vars.add(i) = NONE };
        }
    }
}

#[no_mangle]
pub extern "C" fn omp_get_num_interop_properties(_interop: Interop) -> c_int {
    0
}

/// The return code of a query of `interop`'s property `p`: never a value.
fn query(interop: Interop, p: c_int) -> c_int {
    match (property(p), interop) {
        (None, _) => RC_OUT_OF_RANGE,
        (Some(_), NONE) => RC_EMPTY,
        (Some(_), _) => RC_OTHER,
    }
}

/// Stores `rc` where the caller asked for it.
unsafe fn answer(ret: *mut c_int, rc: c_int) {
    if !ret.is_null() {
        // SAFETY: the caller's out-pointer.
        unsafe { *ret = rc };
    }
}

#[no_mangle]
pub unsafe extern "C" fn omp_get_interop_int(interop: Interop, p: c_int, ret: *mut c_int) -> isize {
    // SAFETY: forwarded.
    unsafe { answer(ret, query(interop, p)) };
    0
}

#[no_mangle]
pub unsafe extern "C" fn omp_get_interop_ptr(interop: Interop, p: c_int, ret: *mut c_int) -> *mut c_void {
    // SAFETY: forwarded.
    unsafe { answer(ret, query(interop, p)) };
    std::ptr::null_mut()
}

#[no_mangle]
pub unsafe extern "C" fn omp_get_interop_str(interop: Interop, p: c_int, ret: *mut c_int) -> *const c_char {
    // SAFETY: forwarded.
    unsafe { answer(ret, query(interop, p)) };
    std::ptr::null()
}

#[no_mangle]
pub extern "C" fn omp_get_interop_name(_interop: Interop, p: c_int) -> *const c_char {
    property(p).map_or(std::ptr::null(), |i| PROPERTIES[i].as_ptr())
}

/// A property's type is that of its foreign runtime: none on the host.
#[no_mangle]
pub extern "C" fn omp_get_interop_type_desc(_interop: Interop, _p: c_int) -> *const c_char {
    std::ptr::null()
}

#[no_mangle]
pub extern "C" fn omp_get_interop_rc_desc(_interop: Interop, rc: c_int) -> *const c_char {
    const DESC: [&CStr; 8] = [
        c"no value is available for this property",
        c"success",
        c"the interop object is omp_interop_none",
        c"the property number is out of range",
        c"the property is an integer: query it with omp_get_interop_int",
        c"the property is a pointer: query it with omp_get_interop_ptr",
        c"the property is a string: query it with omp_get_interop_str",
        c"properties can be queried on the initial device only",
    ];
    if (RC_OTHER..=RC_NO_VALUE).contains(&rc) {
        DESC[(RC_NO_VALUE - rc) as usize].as_ptr()
    } else {
        std::ptr::null()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_has_no_foreign_runtime() {
        let (mut a, mut b) = (5usize, 7usize);
        let init = [&mut a as *mut Interop];
        let destroy = [&mut b as *mut Interop];
        // SAFETY: one interop variable each; no dependences.
        unsafe {
            GOMP_interop(
                -1,
                1,
                init.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
                std::ptr::null(),
                1,
                destroy.as_ptr(),
                0,
                std::ptr::null_mut(),
            )
        };
        assert_eq!((a, b), (NONE, NONE));
        assert_eq!(omp_get_num_interop_properties(NONE), 0);
        let mut rc = 0;
        // SAFETY: a valid out-pointer, or NULL.
        unsafe {
            assert_eq!(omp_get_interop_int(NONE, -5, &mut rc), 0);
            assert_eq!(rc, RC_EMPTY);
            assert!(omp_get_interop_ptr(NONE, 0, &mut rc).is_null());
            assert_eq!(rc, RC_OUT_OF_RANGE);
            assert!(omp_get_interop_str(NONE, -10, &mut rc).is_null());
            assert_eq!(rc, RC_OUT_OF_RANGE);
            assert!(omp_get_interop_str(1234, -1, &mut rc).is_null());
            assert_eq!(rc, RC_OTHER);
            assert_eq!(omp_get_interop_int(NONE, -1, std::ptr::null_mut()), 0);
        }
    }

    #[test]
    fn names_and_descriptions() {
        // SAFETY: static C strings.
        let s = |p: *const c_char| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string();
        assert_eq!(s(omp_get_interop_name(NONE, -1)), "fr_id");
        assert_eq!(s(omp_get_interop_name(NONE, -9)), "targetsync");
        assert!(omp_get_interop_name(NONE, 0).is_null() && omp_get_interop_name(NONE, -10).is_null());
        assert!(s(omp_get_interop_rc_desc(NONE, RC_EMPTY)).contains("omp_interop_none"));
        assert!(s(omp_get_interop_rc_desc(NONE, RC_NO_VALUE)).contains("no value"));
        assert!(omp_get_interop_rc_desc(NONE, 2).is_null() && omp_get_interop_rc_desc(NONE, -7).is_null());
    }
}
