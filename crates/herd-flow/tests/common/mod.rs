//! Shared helpers of the integration tests (included with `mod common`).
#![allow(dead_code)]

use std::sync::OnceLock;

/// A two-worker pool shared by the tests of one binary.
pub fn pool2() -> &'static herd::Pool {
    static P: OnceLock<herd::Pool> = OnceLock::new();
    P.get_or_init(|| herd::Pool::builder().num_threads(2).build().unwrap())
}

/// A one-worker pool (deterministic order).
pub fn pool1() -> &'static herd::Pool {
    static P: OnceLock<herd::Pool> = OnceLock::new();
    P.get_or_init(|| herd::Pool::builder().num_threads(1).build().unwrap())
}
