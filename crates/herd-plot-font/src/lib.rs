//! The font herd's charts lay text out with (`herd la --plot`, `herd pmo
//! --plot`, the benchmark drivers' SVG/PNG charts).
//!
//! plotters measures every label with a registered font, for SVG as well as
//! PNG: on a machine without one (the 16-core device of BENCHMARKS.md has
//! no fonts) every chart failed with "Font loading error". So DejaVu Sans
//! is built into the binaries at compile time (see `build.rs`), and read
//! from the system path only when the build had none.

use plotters::style::FontStyle;
use std::sync::OnceLock;

/// The family name charts ask for.
pub const FAMILY: &str = "sans-serif";

/// Where Debian's `fonts-dejavu-core` puts DejaVu Sans: read at run time
/// when no font was built in.
pub const SYSTEM_PATH: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// The font built in (empty when the build machine had none).
static BUILT_IN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/font.ttf"));

/// Whether a font was built into this binary.
pub fn built_in() -> bool {
    !BUILT_IN.is_empty()
}

/// Registers the font as [`FAMILY`] (once; later calls return the first
/// outcome). The error says what is missing and how to get it.
pub fn register() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let bytes: &'static [u8] = if built_in() {
                BUILT_IN
            } else {
                let bytes = std::fs::read(SYSTEM_PATH).map_err(|e| {
                    format!(
                        "charts need the font {SYSTEM_PATH} ({e}): install fonts-dejavu-core, \
                         or rebuild where it is installed to build it in"
                    )
                })?;
                Box::leak(bytes.into_boxed_slice())
            };
            plotters::style::register_font(FAMILY, FontStyle::Normal, bytes)
                .map_err(|_| "the chart font is not a usable TrueType font".to_string())
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_where_a_font_exists() {
        let available = built_in() || std::path::Path::new(SYSTEM_PATH).exists();
        assert_eq!(register().is_ok(), available, "{:?}", register());
        // A second call returns the first outcome.
        assert_eq!(register().is_ok(), available);
    }

    #[test]
    fn built_in_where_the_build_had_it() {
        // build.rs copies the system font when HERD_PLOT_FONT names none;
        // the tests run where the build ran.
        if option_env!("HERD_PLOT_FONT").is_none() && std::path::Path::new(SYSTEM_PATH).exists() {
            assert!(built_in(), "build.rs did not build {SYSTEM_PATH} in");
        }
    }
}
