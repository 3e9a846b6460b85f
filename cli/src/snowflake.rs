//! `shardline snowflake`: print Snowflake ids, from a configured worker id or from one
//! reserved (and fenced) through a worker-id backend.

use std::io::Write;

use shardline_core::workerid::snowflake::{next_blocking, Layout, Snowflake, DEFAULT_EPOCH_MS};

use crate::workerid::{acquire, failed_exit, HoldArgs, SystemClock};
use crate::EXIT_INVALID_INPUT;

#[derive(clap::Args)]
pub struct Args {
    /// How many ids to print, one per line.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    count: u64,
    /// Use this worker id as configured instead of reserving one.
    #[arg(long)]
    worker_id: Option<u64>,
    /// Id epoch, Unix milliseconds (UTC).
    #[arg(long, default_value_t = DEFAULT_EPOCH_MS)]
    epoch_ms: u64,
    #[arg(long, default_value_t = 41, value_parser = clap::value_parser!(u8).range(32..=63))]
    timestamp_bits: u8,
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u8).range(0..=16))]
    worker_bits: u8,
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u8).range(1..=31))]
    sequence_bits: u8,
    #[command(flatten)]
    hold: HoldArgs,
}

pub fn run(args: Args) -> Result<(), (u8, String)> {
    let layout = Layout::new(
        args.timestamp_bits,
        args.worker_bits,
        args.sequence_bits,
        args.epoch_ms,
    )
    .map_err(|e| {
        (
            EXIT_INVALID_INPUT,
            format!("--timestamp-bits/--worker-bits/--sequence-bits: {e}"),
        )
    })?;
    let mut clock = SystemClock::new();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut emit = |id: u64| writeln!(out, "{id}").map_err(|e| failed_exit(format!("stdout: {e}")));
    match args.worker_id {
        Some(worker) => {
            let mut generator = Snowflake::new(layout, worker)
                .map_err(|e| (EXIT_INVALID_INPUT, format!("--worker-id: {e}")))?;
            for _ in 0..args.count {
                emit(next_blocking(&mut generator, &mut clock).map_err(failed_exit)?)?;
            }
        }
        None => {
            if args.hold.backend.bits > args.worker_bits {
                return Err((
                    EXIT_INVALID_INPUT,
                    format!(
                        "--bits {} does not fit --worker-bits {}",
                        args.hold.backend.bits, args.worker_bits
                    ),
                ));
            }
            let mut holder = acquire(&args.hold, layout, &mut clock)?;
            let result = (0..args.count).try_for_each(|_| {
                let id = holder.next_id(&mut clock).map_err(failed_exit)?;
                emit(id)
            });
            let _ = holder.release(&mut clock);
            result?;
        }
    }
    out.flush().map_err(|e| failed_exit(format!("stdout: {e}")))
}
