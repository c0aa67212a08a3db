//! OpenACC's entry points (`GOACC_*`, the `acc_*` API; libgomp's `GOACC_2.0*`
//! and `OACC_*` version nodes), refused with a message.
//!
//! herd runs host OpenMP. A program built with `gcc -fopenacc` references
//! these names; without them it would not even load (the dynamic linker
//! stops it naming a missing version node). With them it loads, and its
//! first OpenACC call stops it with herd's message naming the entry point:
//! OpenACC is a device-offloading model, refused like OpenMP's offloading
//! (README, "Refused with a message"). Each stub takes no parameters: on
//! x86-64 and AArch64 the caller owns its arguments, and the stub never
//! returns. The names and versions are libgomp's (tests/libgomp.symbols;
//! tests/symbol_versions.sh checks that every one is exported).
#![allow(clippy::missing_safety_doc)]

use crate::unsupported::unsupported;

macro_rules! refused {
    ($($name:ident)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name() {
            unsupported(concat!("OpenACC (", stringify!($name), ")"))
        }
    )*};
}

refused! {
    GOACC_data_end
    GOACC_data_start
    GOACC_declare
    GOACC_enter_data
    GOACC_enter_exit_data
    GOACC_exit_data
    GOACC_get_num_threads
    GOACC_get_thread_num
    GOACC_parallel
    GOACC_parallel_keyed
    GOACC_update
    GOACC_wait
    acc_async_test
    acc_async_test_all
    acc_async_test_all_h_
    acc_async_test_h_
    acc_async_wait
    acc_async_wait_all
    acc_attach
    acc_attach_async
    acc_copyin
    acc_copyin_32_h_
    acc_copyin_64_h_
    acc_copyin_array_h_
    acc_copyin_async
    acc_copyin_async_32_h_
    acc_copyin_async_64_h_
    acc_copyin_async_array_h_
    acc_copyout
    acc_copyout_32_h_
    acc_copyout_64_h_
    acc_copyout_array_h_
    acc_copyout_async
    acc_copyout_async_32_h_
    acc_copyout_async_64_h_
    acc_copyout_async_array_h_
    acc_copyout_finalize
    acc_copyout_finalize_32_h_
    acc_copyout_finalize_64_h_
    acc_copyout_finalize_array_h_
    acc_copyout_finalize_async
    acc_copyout_finalize_async_32_h_
    acc_copyout_finalize_async_64_h_
    acc_copyout_finalize_async_array_h_
    acc_create
    acc_create_32_h_
    acc_create_64_h_
    acc_create_array_h_
    acc_create_async
    acc_create_async_32_h_
    acc_create_async_64_h_
    acc_create_async_array_h_
    acc_delete
    acc_delete_32_h_
    acc_delete_64_h_
    acc_delete_array_h_
    acc_delete_async
    acc_delete_async_32_h_
    acc_delete_async_64_h_
    acc_delete_async_array_h_
    acc_delete_finalize
    acc_delete_finalize_32_h_
    acc_delete_finalize_64_h_
    acc_delete_finalize_array_h_
    acc_delete_finalize_async
    acc_delete_finalize_async_32_h_
    acc_delete_finalize_async_64_h_
    acc_delete_finalize_async_array_h_
    acc_detach
    acc_detach_async
    acc_detach_finalize
    acc_detach_finalize_async
    acc_deviceptr
    acc_free
    acc_get_cuda_stream
    acc_get_current_cuda_context
    acc_get_current_cuda_device
    acc_get_device_num
    acc_get_device_num_h_
    acc_get_device_type
    acc_get_device_type_h_
    acc_get_num_devices
    acc_get_num_devices_h_
    acc_get_property
    acc_get_property_h_
    acc_get_property_string
    acc_get_property_string_h_
    acc_hostptr
    acc_init
    acc_init_h_
    acc_is_present
    acc_is_present_32_h_
    acc_is_present_64_h_
    acc_is_present_array_h_
    acc_malloc
    acc_map_data
    acc_memcpy_device
    acc_memcpy_device_async
    acc_memcpy_from_device
    acc_memcpy_from_device_async
    acc_memcpy_to_device
    acc_memcpy_to_device_async
    acc_on_device
    acc_on_device_h_
    acc_pcopyin
    acc_pcreate
    acc_present_or_copyin
    acc_present_or_copyin_32_h_
    acc_present_or_copyin_64_h_
    acc_present_or_copyin_array_h_
    acc_present_or_create
    acc_present_or_create_32_h_
    acc_present_or_create_64_h_
    acc_present_or_create_array_h_
    acc_prof_lookup
    acc_prof_register
    acc_prof_unregister
    acc_register_library
    acc_set_cuda_stream
    acc_set_device_num
    acc_set_device_num_h_
    acc_set_device_type
    acc_set_device_type_h_
    acc_shutdown
    acc_shutdown_h_
    acc_unmap_data
    acc_update_device
    acc_update_device_32_h_
    acc_update_device_64_h_
    acc_update_device_array_h_
    acc_update_device_async
    acc_update_device_async_32_h_
    acc_update_device_async_64_h_
    acc_update_device_async_array_h_
    acc_update_self
    acc_update_self_32_h_
    acc_update_self_64_h_
    acc_update_self_array_h_
    acc_update_self_async
    acc_update_self_async_32_h_
    acc_update_self_async_64_h_
    acc_update_self_async_array_h_
    acc_wait
    acc_wait_all
    acc_wait_all_async
    acc_wait_all_async_h_
    acc_wait_all_h_
    acc_wait_async
    acc_wait_async_h_
    acc_wait_h_
}
