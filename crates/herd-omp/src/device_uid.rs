//! OpenMP 6.0's device identifiers (`omp_get_uid_from_device`,
//! `omp_get_device_from_uid`, gcc 16's `GOMP_6.0` node) for the only device
//! herd has, the initial device.
//!
//! As libgomp 16 on a machine without offload devices: the initial device —
//! `omp_initial_device` (−1), or its number `omp_get_initial_device()` (0),
//! or `omp_default_device` (−5) while the default device is the host — has
//! the identifier `"OMP_INITIAL_DEVICE"`, which maps back to
//! `omp_initial_device`; any other number has none (NULL), and any other
//! string names no device (`omp_invalid_device`, −4). Read from libgomp
//! 16.2's binary (Debian's `libgomp1` 16.2.0-4), not guessed. The Fortran
//! forms are in `fortran.rs`.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, CStr};

/// `omp_initial_device`.
pub(crate) const INITIAL: c_int = -1;
/// OpenMP 6.0's `omp_invalid_device` in gcc's `omp.h`.
pub(crate) const INVALID: c_int = -4;
/// OpenMP 6.0's `omp_default_device`.
const DEFAULT: c_int = -5;

/// The initial device's identifier (libgomp's string).
pub(crate) const HOST_UID: &CStr = c"OMP_INITIAL_DEVICE";

/// Whether device number `d` names the initial device.
fn is_host(d: c_int) -> bool {
    let d = if d == DEFAULT { crate::api::omp_get_default_device() } else { d };
    d == INITIAL || d == crate::api::omp_get_initial_device()
}

#[no_mangle]
pub extern "C" fn omp_get_uid_from_device(device: c_int) -> *const c_char {
    if is_host(device) {
        HOST_UID.as_ptr()
    } else {
        std::ptr::null()
    }
}

#[no_mangle]
pub unsafe extern "C" fn omp_get_device_from_uid(uid: *const c_char) -> c_int {
    if uid.is_null() {
        return INVALID;
    }
    // SAFETY: a NUL-terminated string by the caller's contract.
    if unsafe { CStr::from_ptr(uid) } == HOST_UID {
        INITIAL
    } else {
        INVALID
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_initial_device_and_nothing_else_has_an_identifier() {
        let host = omp_get_uid_from_device(INITIAL);
        // SAFETY: a static C string.
        assert_eq!(unsafe { CStr::from_ptr(host) }, HOST_UID);
        assert_eq!(omp_get_uid_from_device(crate::api::omp_get_initial_device()), host);
        assert_eq!(omp_get_uid_from_device(DEFAULT), host);
        for d in [1, 7, INVALID, -2, -3, -100] {
            assert!(omp_get_uid_from_device(d).is_null(), "device {d}");
        }
        // SAFETY: valid C strings or NULL.
        unsafe {
            assert_eq!(omp_get_device_from_uid(host), INITIAL);
            assert_eq!(omp_get_device_from_uid(c"omp_initial_device".as_ptr()), INVALID);
            assert_eq!(omp_get_device_from_uid(std::ptr::null()), INVALID);
        }
    }
}
