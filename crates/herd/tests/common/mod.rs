//! Helpers shared by the integration tests.

/// Fibonacci with a `join` at every level: many tiny tasks.
pub fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = herd::join(|| fib(n - 1), || fib(n - 2));
    a + b
}
