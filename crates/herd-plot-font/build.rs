//! Copies the chart font into OUT_DIR so that `include_bytes!` builds it
//! into the binaries: `HERD_PLOT_FONT` names a TrueType file, else DejaVu
//! Sans where Debian's `fonts-dejavu-core` (which `make deps` installs) puts
//! it. Without either the copy is empty and the library reads the system
//! path at run time instead.

use std::path::PathBuf;

const SYSTEM_FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

fn main() {
    println!("cargo:rerun-if-env-changed=HERD_PLOT_FONT");
    let source = std::env::var("HERD_PLOT_FONT").unwrap_or_else(|_| SYSTEM_FONT.to_string());
    println!("cargo:rerun-if-changed={source}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("font.ttf");
    let bytes = std::fs::read(&source).unwrap_or_else(|e| {
        println!("cargo:warning=no chart font built in ({source}: {e}); charts will need it at run time");
        Vec::new()
    });
    std::fs::write(&out, bytes).expect("OUT_DIR is writable");
}
