//! What the measurements of herd-mpi share: the median of timing samples.

/// The median of `samples` in any order (the mean of the two middle ones for an even count;
/// 0 for none).
pub fn median(samples: &[f64]) -> f64 {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn medians() {
        assert_eq!(super::median(&[8.0, 1.0, 4.0, 2.0]), 3.0);
        assert_eq!(super::median(&[5.0, 1.0, 3.0]), 3.0);
        assert_eq!(super::median(&[]), 0.0);
    }
}
