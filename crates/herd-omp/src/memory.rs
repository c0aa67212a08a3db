//! The OpenMP memory-management vocabulary (omp.h's numbers, OpenMP 5.2
//! §6): predefined allocators, memory spaces, allocator trait keys and
//! values, and the names `OMP_ALLOCATOR` spells them with. Shared by the
//! allocators (`allocator`) and the environment parser (`env`).

/// `omp_null_allocator`.
pub(crate) const NULL_ALLOCATOR: usize = 0;
/// `omp_default_mem_alloc`.
pub(crate) const DEFAULT_MEM_ALLOC: usize = 1;
/// `omp_thread_mem_alloc`, the last predefined allocator.
pub(crate) const LAST_PREDEFINED: usize = 8;

/// `ompx_gnu_pinned_mem_alloc` (a GNU extension since gcc 14): page-locked
/// memory of `omp_default_mem_space`, NULL when it cannot be locked.
pub(crate) const PINNED_MEM_ALLOC: usize = 200;
/// `ompx_gnu_managed_mem_alloc` (gcc 16): memory that the host and the
/// offload devices share; with no device, ordinary host memory.
pub(crate) const MANAGED_MEM_ALLOC: usize = 201;

/// Whether `handle` names a predefined allocator (any other handle but
/// `omp_null_allocator` is the address of one `omp_init_allocator` made).
pub(crate) fn is_predefined(handle: usize) -> bool {
    handle <= LAST_PREDEFINED || handle == PINNED_MEM_ALLOC || handle == MANAGED_MEM_ALLOC
}

/// The predefined allocators (`omp_allocator_handle_t`) by name.
pub(crate) const PREDEFINED_ALLOCATORS: &[(&str, usize)] = &[
    ("omp_default_mem_alloc", DEFAULT_MEM_ALLOC),
    ("omp_large_cap_mem_alloc", 2),
    ("omp_const_mem_alloc", 3),
    ("omp_high_bw_mem_alloc", 4),
    ("omp_low_lat_mem_alloc", 5),
    ("omp_cgroup_mem_alloc", 6),
    ("omp_pteam_mem_alloc", 7),
    ("omp_thread_mem_alloc", LAST_PREDEFINED),
    ("ompx_gnu_pinned_mem_alloc", PINNED_MEM_ALLOC),
    ("ompx_gnu_managed_mem_alloc", MANAGED_MEM_ALLOC),
];

/// Memory spaces (`omp_memspace_handle_t`).
pub(crate) const DEFAULT_MEM_SPACE: usize = 0;
pub(crate) const HIGH_BW_MEM_SPACE: usize = 3;
pub(crate) const LOW_LAT_MEM_SPACE: usize = 4;
/// `ompx_gnu_managed_mem_space` (gcc 16; see [`MANAGED_MEM_ALLOC`]).
pub(crate) const MANAGED_MEM_SPACE: usize = 200;

/// The memory spaces by name, with the predefined allocator of each (what
/// `OMP_ALLOCATOR` naming the space without traits means).
pub(crate) const MEM_SPACES: &[(&str, usize, usize)] = &[
    ("omp_default_mem_space", DEFAULT_MEM_SPACE, DEFAULT_MEM_ALLOC),
    ("omp_large_cap_mem_space", 1, 2),
    ("omp_const_mem_space", 2, 3),
    ("omp_high_bw_mem_space", HIGH_BW_MEM_SPACE, 4),
    ("omp_low_lat_mem_space", LOW_LAT_MEM_SPACE, 5),
    ("ompx_gnu_managed_mem_space", MANAGED_MEM_SPACE, MANAGED_MEM_ALLOC),
];

/// Trait keys (`omp_alloctrait_key_t`).
pub(crate) mod key {
    pub(crate) const SYNC_HINT: i32 = 1;
    pub(crate) const ALIGNMENT: i32 = 2;
    pub(crate) const ACCESS: i32 = 3;
    pub(crate) const POOL_SIZE: i32 = 4;
    pub(crate) const FALLBACK: i32 = 5;
    pub(crate) const FB_DATA: i32 = 6;
    pub(crate) const PINNED: i32 = 7;
    pub(crate) const PARTITION: i32 = 8;
}

/// Trait values (`omp_alloctrait_value_t`).
pub(crate) mod val {
    pub(crate) const DEFAULT: usize = usize::MAX; // omp_atv_default = -1
    pub(crate) const FALSE: usize = 0;
    pub(crate) const TRUE: usize = 1;
    pub(crate) const CONTENDED: usize = 3;
    pub(crate) const UNCONTENDED: usize = 4;
    pub(crate) const SERIALIZED: usize = 5;
    pub(crate) const PRIVATE: usize = 6;
    pub(crate) const ALL: usize = 7;
    pub(crate) const THREAD: usize = 8;
    pub(crate) const PTEAM: usize = 9;
    pub(crate) const CGROUP: usize = 10;
    pub(crate) const DEFAULT_MEM_FB: usize = 11;
    pub(crate) const NULL_FB: usize = 12;
    pub(crate) const ABORT_FB: usize = 13;
    pub(crate) const ALLOCATOR_FB: usize = 14;
    pub(crate) const ENVIRONMENT: usize = 15;
    pub(crate) const NEAREST: usize = 16;
    pub(crate) const BLOCKED: usize = 17;
    pub(crate) const INTERLEAVED: usize = 18;
}

/// The named values of the traits that take names (one table per trait,
/// read by `omp_init_allocator`'s checks and by the `OMP_ALLOCATOR` parser).
pub(crate) const SYNC_HINTS: &[(&str, usize)] = &[
    ("contended", val::CONTENDED),
    ("uncontended", val::UNCONTENDED),
    ("serialized", val::SERIALIZED),
    ("private", val::PRIVATE),
];
pub(crate) const ACCESSES: &[(&str, usize)] =
    &[("all", val::ALL), ("cgroup", val::CGROUP), ("pteam", val::PTEAM), ("thread", val::THREAD)];
/// The fallbacks that need no other trait (`allocator_fb` needs `fb_data`).
pub(crate) const FALLBACKS: &[(&str, usize)] =
    &[("default_mem_fb", val::DEFAULT_MEM_FB), ("null_fb", val::NULL_FB), ("abort_fb", val::ABORT_FB)];
/// Every fallback `OMP_ALLOCATOR` may name; `allocator_fb` only with an
/// `fb_data` trait naming a predefined allocator.
pub(crate) const ENV_FALLBACKS: &[(&str, usize)] = &[
    ("default_mem_fb", val::DEFAULT_MEM_FB),
    ("null_fb", val::NULL_FB),
    ("abort_fb", val::ABORT_FB),
    ("allocator_fb", val::ALLOCATOR_FB),
];
pub(crate) const PINNED: &[(&str, usize)] = &[("true", val::TRUE), ("false", val::FALSE)];
pub(crate) const PARTITIONS: &[(&str, usize)] = &[
    ("environment", val::ENVIRONMENT),
    ("nearest", val::NEAREST),
    ("blocked", val::BLOCKED),
    ("interleaved", val::INTERLEAVED),
];

/// `v` if it is one of `table`'s values, `default` for `omp_atv_default`,
/// `None` otherwise.
pub(crate) fn named_value(v: usize, table: &[(&str, usize)], default: usize) -> Option<usize> {
    if v == val::DEFAULT {
        return Some(default);
    }
    table.iter().any(|&(_, t)| t == v).then_some(v)
}

/// The value of a trait as `OMP_ALLOCATOR` gives it.
pub(crate) enum TraitValue {
    /// One of these names.
    Named(&'static [(&'static str, usize)]),
    /// A positive integer (`power_of_two`: and a power of two).
    Positive { power_of_two: bool },
    /// A predefined allocator, by name (`fb_data`: an environment variable
    /// can name no other allocator handle).
    Allocator,
}

/// The traits `OMP_ALLOCATOR` may give (`key=value`), by name, as libomp takes
/// them: `fb_data` names a predefined allocator.
pub(crate) const ENV_TRAITS: &[(&str, i32, TraitValue)] = &[
    ("sync_hint", key::SYNC_HINT, TraitValue::Named(SYNC_HINTS)),
    ("alignment", key::ALIGNMENT, TraitValue::Positive { power_of_two: true }),
    ("access", key::ACCESS, TraitValue::Named(ACCESSES)),
    ("pool_size", key::POOL_SIZE, TraitValue::Positive { power_of_two: false }),
    ("fallback", key::FALLBACK, TraitValue::Named(ENV_FALLBACKS)),
    ("fb_data", key::FB_DATA, TraitValue::Allocator),
    ("pinned", key::PINNED, TraitValue::Named(PINNED)),
    ("partition", key::PARTITION, TraitValue::Named(PARTITIONS)),
];
