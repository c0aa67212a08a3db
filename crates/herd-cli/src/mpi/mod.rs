//! `herd mpi …`: experiments of herd-mpi, run under `mpirun` (rank 0 reports).

pub mod copy;
pub mod fft;
pub mod potrf;

use crate::error::CliError;
use crate::plot::{self, COLORS, FONT_FAMILY};
use crate::CliResult;
use herd_mpi::{Mpi, MpiError};
use std::path::Path;

/// The `herd mpi` subcommands.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum MpiCommand {
    /// Copy and pack on every rank, and a strided block exchanged between ranks 0 and 1.
    ///
    /// Each rank measures herd's parallel copy against memcpy and herd's pack against
    /// MPI_Pack with a vector datatype; ranks 0 and 1 then exchange a column block of a
    /// row-major matrix both ways, (a) herd pack + contiguous isend/irecv + herd unpack,
    /// (b) MPI_Sendrecv_replace with the MPI_Type_vector. Every result is checked. Rank 0
    /// prints the tables (one JSON line with --json). Run under mpirun, with
    /// HERD_NUM_THREADS set per rank.
    Copy(copy::MpiCopyArgs),
    /// Distributed 2-D FFT: herd overlapped and bulk-synchronous against FFTW-MPI.
    ///
    /// Run under mpirun (n divisible by the number of ranks). Times the three
    /// implementations of the forward n × n complex FFT (transposed output) in
    /// alternating rounds after one untimed warm-up round; a sample is the
    /// slowest rank's time from a barrier to its completion. Rank 0 prints the
    /// medians, GFLOP/s (5 n² log2(n²) flops) and ratios. The overlapped
    /// output must equal the bulk one and FFTW's must agree within
    /// 10 · n · log2(n) · ε · rms(x), else the command fails.
    Fft(fft::FftArgs),
    /// Distributed tiled Cholesky on herd-flow against ScaLAPACK's pdpotrf.
    ///
    /// Run under mpirun. Both factor the same n × n SPD matrix (herd_mpi::spd: every rank
    /// generates only its own tiles), 2-D block-cyclic in nb × nb tiles over the same
    /// process grid (the most square, or --grid), with as many threads per rank
    /// (HERD_NUM_THREADS; OpenBLAS's count for ScaLAPACK). Rounds alternate the two,
    /// first rotating; a sample is the slowest rank's time between barriers. Each
    /// factor is checked by the distributed O(n²) residual ‖A·x − L·(Lᵀ·x)‖ scaled by
    /// norms, n and ε; above 10 the command fails. Rank 0 prints medians, GFLOP/s (n³/3)
    /// and the ratio (one JSON line with --json).
    Potrf(potrf::PotrfArgs),
}

/// Runs a `herd mpi` subcommand.
pub(crate) fn run(cmd: &MpiCommand) -> crate::CliResult {
    match cmd {
        MpiCommand::Copy(args) => copy::run(args),
        MpiCommand::Fft(args) => fft::run(args),
        MpiCommand::Potrf(args) => potrf::run(args),
    }
}

/// herd-mpi's errors as the CLI's: bad arguments are usage errors (status 2).
pub(crate) fn mpi_err(e: MpiError) -> CliError {
    match e {
        MpiError::Invalid(m) => CliError::Usage(m),
        e => CliError::Failed(e.to_string()),
    }
}

/// The maximum of `v` over all ranks (an all-to-all of one value per rank).
pub(crate) fn max_all(mpi: &Mpi, v: f64) -> CliResult<f64> {
    let (_, got) = mpi.ialltoall(vec![v; mpi.size()]).and_then(|p| p.wait()).map_err(mpi_err)?;
    Ok(got.into_iter().fold(f64::NEG_INFINITY, f64::max))
}

/// A bar chart of one median per implementation (seconds; lower is faster).
pub(crate) fn bar_chart(
    path: &Path,
    format: plot::Format,
    caption: &str,
    names: &[&str],
    medians: &[f64],
) -> CliResult {
    use plotters::prelude::*;
    fn on<DB: DrawingBackend>(
        root: DrawingArea<DB, plotters::coord::Shift>,
        caption: &str,
        names: &[&str],
        medians: &[f64],
    ) -> Result<(), Box<dyn std::error::Error>>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let top = medians.iter().copied().filter(|v| v.is_finite()).fold(0.0, f64::max) * 1.15;
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, (FONT_FAMILY, 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((0..medians.len() as i32 - 1).into_segmented(), 0.0..top.max(1e-9))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc("median seconds (lower is faster)")
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    names.get(*i as usize).copied().unwrap_or("").to_string()
                }
                SegmentValue::Last => String::new(),
            })
            .label_style((FONT_FAMILY, 15))
            .draw()?;
        for (i, &m) in medians.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let i = i as i32;
            let mut bar = Rectangle::new(
                [(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), m)],
                color.filled(),
            );
            bar.set_margin(0, 0, 40, 40);
            chart.draw_series(std::iter::once(bar))?;
            let style =
                TextStyle::from((FONT_FAMILY, 15).into_font()).pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Bottom,
                ));
            chart.draw_series(std::iter::once(Text::new(
                format!("{m:.4} s"),
                (SegmentValue::CenterOf(i), m),
                style,
            )))?;
        }
        root.present()?;
        Ok(())
    }
    crate::error::create_parent(path)?;
    let size = (720, 480);
    let r = match format {
        plot::Format::Svg => on(SVGBackend::new(path, size).into_drawing_area(), caption, names, medians),
        plot::Format::Png => on(BitMapBackend::new(path, size).into_drawing_area(), caption, names, medians),
    };
    r.map_err(|e| CliError::Plot { path: path.to_path_buf(), message: e.to_string() })
}
