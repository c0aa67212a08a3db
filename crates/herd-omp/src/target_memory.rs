//! The device memory routines (`omp_target_alloc`, `omp_target_memcpy`, …)
//! on the only device herd has: the host, the initial device.
//!
//! As libgomp without an offload device: the initial device (its number,
//! `omp_get_initial_device()` = 0 = `omp_get_num_devices()`, or
//! `omp_initial_device` = -1 from OpenMP 5.2) is ordinary memory — allocation
//! is `malloc`, copies are `memcpy`, every pointer is present, accessible and
//! mapped to itself. Any other device number does not exist: allocation
//! returns NULL, copies return `EINVAL`, queries answer "no". Associating
//! device pointers with host pointers needs a device, so it returns `EINVAL`
//! as libgomp does for the host. The `_async` routines run the copy before
//! returning, after waiting for the calling task's children when they name
//! dependence objects (those can only be on sibling tasks, so this honours
//! them).
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_int, c_void};

extern "C" {
    fn GOMP_taskwait();
}

/// The initial device's numbers.
fn host(device: c_int) -> bool {
    device == 0 || device == -1
}

#[no_mangle]
pub extern "C" fn omp_target_alloc(size: usize, device: c_int) -> *mut c_void {
    if !host(device) {
        return std::ptr::null_mut();
    }
    // SAFETY: plain C allocation.
    unsafe { libc::malloc(size) }
}

#[no_mangle]
pub unsafe extern "C" fn omp_target_free(ptr: *mut c_void, device: c_int) {
    if host(device) {
        // SAFETY: `ptr` came from omp_target_alloc on the host (or is NULL).
        unsafe { libc::free(ptr) }
    }
}

#[no_mangle]
pub extern "C" fn omp_target_is_present(ptr: *const c_void, device: c_int) -> c_int {
    (ptr.is_null() || host(device)) as c_int
}

#[no_mangle]
pub extern "C" fn omp_target_is_accessible(_ptr: *const c_void, _size: usize, device: c_int) -> c_int {
    host(device) as c_int
}

#[no_mangle]
pub extern "C" fn omp_get_mapped_ptr(ptr: *const c_void, device: c_int) -> *mut c_void {
    if ptr.is_null() || host(device) {
        ptr as *mut c_void
    } else {
        std::ptr::null_mut()
    }
}

#[no_mangle]
pub unsafe extern "C" fn omp_target_memcpy(
    dst: *mut c_void,
    src: *const c_void,
    length: usize,
    dst_offset: usize,
    src_offset: usize,
    dst_device: c_int,
    src_device: c_int,
) -> c_int {
    if !host(dst_device) || !host(src_device) {
        return libc::EINVAL;
    }
    // SAFETY: the caller's host buffers hold the ranges copied; memmove
    // tolerates overlap.
    unsafe {
        libc::memmove((dst as *mut u8).add(dst_offset) as _, (src as *const u8).add(src_offset) as _, length)
    };
    0
}

/// Copies a `dims`-dimensional sub-volume (row-major, element-sized bytes).
///
/// # Safety
/// The arrays hold `dims` entries and the volumes lie within the buffers.
unsafe fn copy_rect(
    dst: *mut u8,
    src: *const u8,
    elem: usize,
    dims: usize,
    volume: *const usize,
    dst_off: *const usize,
    src_off: *const usize,
    dst_dims: *const usize,
    src_dims: *const usize,
) {
    // SAFETY: the caller's contract throughout.
    unsafe {
        if dims == 1 {
            std::ptr::copy(src.add(*src_off * elem), dst.add(*dst_off * elem), *volume * elem);
            return;
        }
        // Bytes of one slice along the first dimension.
        let mut dst_slice = elem;
        let mut src_slice = elem;
        for i in 1..dims {
            dst_slice *= *dst_dims.add(i);
            src_slice *= *src_dims.add(i);
        }
        for j in 0..*volume {
            copy_rect(
                dst.add((*dst_off + j) * dst_slice),
                src.add((*src_off + j) * src_slice),
                elem,
                dims - 1,
                volume.add(1),
                dst_off.add(1),
                src_off.add(1),
                dst_dims.add(1),
                src_dims.add(1),
            );
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn omp_target_memcpy_rect(
    dst: *mut c_void,
    src: *const c_void,
    element_size: usize,
    num_dims: c_int,
    volume: *const usize,
    dst_offsets: *const usize,
    src_offsets: *const usize,
    dst_dimensions: *const usize,
    src_dimensions: *const usize,
    dst_device: c_int,
    src_device: c_int,
) -> c_int {
    if dst.is_null() && src.is_null() {
        return c_int::MAX; // the number of dimensions supported
    }
    if !host(dst_device) || !host(src_device) || num_dims < 0 || dst.is_null() || src.is_null() {
        return libc::EINVAL;
    }
    if num_dims == 0 {
        return 0; // nothing to copy (libgomp)
    }
    // SAFETY: the caller's arrays of `num_dims` entries describe volumes
    // inside its buffers.
    unsafe {
        copy_rect(
            dst as *mut u8,
            src as *const u8,
            element_size,
            num_dims as usize,
            volume,
            dst_offsets,
            src_offsets,
            dst_dimensions,
            src_dimensions,
        )
    };
    0
}

/// Honours an `_async` routine's dependence objects (see the module docs).
fn wait_for_dependences(depobj_count: c_int) {
    if depobj_count > 0 {
        // SAFETY: a taskwait in the calling task.
        unsafe { GOMP_taskwait() }
    }
}

#[no_mangle]
pub unsafe extern "C" fn omp_target_memcpy_async(
    dst: *mut c_void,
    src: *const c_void,
    length: usize,
    dst_offset: usize,
    src_offset: usize,
    dst_device: c_int,
    src_device: c_int,
    depobj_count: c_int,
    _depobj_list: *mut c_void,
) -> c_int {
    wait_for_dependences(depobj_count);
    // SAFETY: forwarded.
    unsafe { omp_target_memcpy(dst, src, length, dst_offset, src_offset, dst_device, src_device) }
}

#[no_mangle]
pub unsafe extern "C" fn omp_target_memcpy_rect_async(
    dst: *mut c_void,
    src: *const c_void,
    element_size: usize,
    num_dims: c_int,
    volume: *const usize,
    dst_offsets: *const usize,
    src_offsets: *const usize,
    dst_dimensions: *const usize,
    src_dimensions: *const usize,
    dst_device: c_int,
    src_device: c_int,
    depobj_count: c_int,
    _depobj_list: *mut c_void,
) -> c_int {
    wait_for_dependences(depobj_count);
    // SAFETY: forwarded.
    unsafe {
        omp_target_memcpy_rect(
            dst,
            src,
            element_size,
            num_dims,
            volume,
            dst_offsets,
            src_offsets,
            dst_dimensions,
            src_dimensions,
            dst_device,
            src_device,
        )
    }
}

/// OpenMP 6.0 (gcc 14): fills `count` bytes; returns `ptr`.
#[no_mangle]
pub unsafe extern "C" fn omp_target_memset(
    ptr: *mut c_void,
    value: c_int,
    count: usize,
    device: c_int,
) -> *mut c_void {
    if host(device) && !ptr.is_null() {
        // SAFETY: the caller's buffer of `count` bytes.
        unsafe { libc::memset(ptr, value, count) };
    }
    ptr
}

#[no_mangle]
pub unsafe extern "C" fn omp_target_memset_async(
    ptr: *mut c_void,
    value: c_int,
    count: usize,
    device: c_int,
    depobj_count: c_int,
    _depobj_list: *mut c_void,
) -> *mut c_void {
    wait_for_dependences(depobj_count);
    // SAFETY: forwarded.
    unsafe { omp_target_memset(ptr, value, count, device) }
}

/// Associating a device buffer needs a device: `EINVAL`, as libgomp answers
/// for the host.
#[no_mangle]
pub extern "C" fn omp_target_associate_ptr(
    _host: *const c_void,
    _device_ptr: *const c_void,
    _size: usize,
    _device_offset: usize,
    _device: c_int,
) -> c_int {
    libc::EINVAL
}

#[no_mangle]
pub extern "C" fn omp_target_disassociate_ptr(_ptr: *const c_void, _device: c_int) -> c_int {
    libc::EINVAL
}
