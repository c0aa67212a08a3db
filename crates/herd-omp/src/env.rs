//! Placeholder: replaced by the OpenMP environment parser.
#[derive(Debug, Default)]
pub struct OmpEnv {}
#[derive(Debug)]
pub struct EnvError(pub String);
impl std::fmt::Display for EnvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
pub fn parse(_lookup: impl Fn(&str) -> Option<String>) -> Result<OmpEnv, EnvError> {
    Ok(OmpEnv {})
}
pub fn apply(_omp: &OmpEnv, herd: herd::Config) -> herd::Config {
    herd
}
