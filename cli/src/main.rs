//! `shardline`: the command-line front end of shardline-core.

mod decide;
mod replay;
mod sim;
mod snowflake;
mod workerid;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "shardline",
    version,
    about = "Placement brain for sharded actor systems"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decide conformance vectors read from stdin (one object or an array); prints a JSON array.
    Decide(decide::Args),
    /// Reserve, hold and list worker ids (memory or etcd backend).
    #[command(subcommand, name = "worker-id")]
    WorkerId(workerid::Command),
    /// Print Snowflake ids.
    Snowflake(snowflake::Args),
    /// Run a deterministic cluster simulation and check its invariants (see --list).
    Sim(sim::Args),
    /// Replay a trace recorded with `sim --record` on fresh state machines and check that
    /// every output is the same; prints {"steps","mismatches","first"}, exits 1 on a mismatch.
    Replay(replay::Args),
}

/// Exit code for input the command cannot use (bad JSON, bad vector, bad flag value).
pub const EXIT_INVALID_INPUT: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Decide(args) => decide::run(args),
        Command::WorkerId(command) => workerid::run(command),
        Command::Snowflake(args) => snowflake::run(args),
        Command::Sim(args) => sim::run(args),
        Command::Replay(args) => replay::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, message)) => {
            eprintln!("shardline: {message}");
            ExitCode::from(code)
        }
    }
}
