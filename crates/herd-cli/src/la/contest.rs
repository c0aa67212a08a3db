//! Several implementations of one routine timed in the same process: rounds
//! of one run each, the first contender rotating from round to round, so that
//! no contender always follows the same one (OpenBLAS's threads keep spinning
//! for a while after a call, and caches are warm from the previous run).

use crate::error::CliError;
use crate::timing::median;
use crate::CliResult;
use indicatif::ProgressBar;

/// A result that a correct computation cannot exceed: the probe's ratio
/// (`herd_la::probe_residual`) is of order 1 or below; LAPACK's tests accept
/// up to 30.
pub const RESIDUAL_LIMIT: f64 = 30.0;

/// One timed run: seconds (the computation alone) and its residual.
pub struct Sample {
    /// Seconds of the timed call.
    pub secs: f64,
    /// The scaled residual of its result.
    pub residual: f64,
}

/// A run of one implementation; `true` on the last round.
type Run<'a> = Box<dyn FnMut(bool) -> CliResult<Sample> + 'a>;

/// An implementation taking part.
pub struct Contender<'a> {
    key: &'static str,
    label: String,
    info: serde_json::Map<String, serde_json::Value>,
    run: Run<'a>,
}

impl<'a> Contender<'a> {
    /// `key` names it in JSON (`herd`, `faer`, `openblas`), `label` in tables.
    pub fn new(key: &'static str, label: String, run: impl FnMut(bool) -> CliResult<Sample> + 'a) -> Self {
        Contender { key, label, info: serde_json::Map::new(), run: Box::new(run) }
    }

    /// Adds a field to its JSON object (the library file, a setting).
    pub fn info(mut self, name: &str, value: serde_json::Value) -> Self {
        self.info.insert(name.to_string(), value);
        self
    }
}

/// What one implementation did over all rounds.
pub struct Outcome {
    /// The JSON key.
    pub key: &'static str,
    /// The table label.
    pub label: String,
    /// Extra JSON fields.
    pub info: serde_json::Map<String, serde_json::Value>,
    /// Seconds of each run, in round order.
    pub seconds: Vec<f64>,
    /// The largest residual of its runs.
    pub residual: f64,
}

impl Outcome {
    /// The median run time.
    pub fn median(&self) -> f64 {
        median(&self.seconds)
    }
}

/// Runs `reps` rounds of every contender (round `r` starts with contender
/// `r mod count`), ticking `bar` after each run, and checks every residual
/// against [`RESIDUAL_LIMIT`].
///
/// # Errors
/// The first failing run's error; [`CliError::Verify`] naming the
/// implementation whose residual is NaN or not below the limit.
pub fn rounds(mut contenders: Vec<Contender<'_>>, reps: usize, bar: &ProgressBar) -> CliResult<Vec<Outcome>> {
    let count = contenders.len();
    let mut samples: Vec<(Vec<f64>, f64)> = vec![(Vec::new(), 0.0); count];
    for rep in 0..reps {
        for turn in 0..count {
            let i = (rep + turn) % count;
            bar.set_message(contenders[i].label.clone());
            let s = (contenders[i].run)(rep + 1 == reps)?;
            if s.residual.is_nan() || s.residual >= RESIDUAL_LIMIT {
                return Err(CliError::Verify(format!(
                    "{}: residual {} (>= {RESIDUAL_LIMIT})",
                    contenders[i].label, s.residual
                )));
            }
            samples[i].0.push(s.secs);
            samples[i].1 = samples[i].1.max(s.residual);
            bar.inc(1);
        }
    }
    Ok(contenders
        .into_iter()
        .zip(samples)
        .map(|(c, (seconds, residual))| Outcome {
            key: c.key,
            label: c.label,
            info: c.info,
            seconds,
            residual,
        })
        .collect())
}
