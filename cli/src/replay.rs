//! `shardline replay FILE`: a recorded trace in, the verdict of fresh machines out.

use std::io::{Read, Write};
use std::path::PathBuf;

use shardline_core::replay::replay;

use crate::EXIT_INVALID_INPUT;

/// Exit code when a replayed output differs from the recorded one.
const EXIT_MISMATCH: u8 = 1;

#[derive(clap::Args)]
pub struct Args {
    /// The trace (JSON lines, as `shardline sim --record` writes it); `-` reads stdin.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Pretty-print the result.
    #[arg(long)]
    pretty: bool,
}

pub fn run(args: Args) -> Result<(), (u8, String)> {
    let text = if args.file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| (EXIT_INVALID_INPUT, format!("reading stdin: {e}")))?;
        text
    } else {
        std::fs::read_to_string(&args.file)
            .map_err(|e| (EXIT_INVALID_INPUT, format!("{}: {e}", args.file.display())))?
    };
    let result =
        replay(&text).map_err(|e| (EXIT_INVALID_INPUT, format!("{}: {e}", args.file.display())))?;
    let rendered = if args.pretty {
        serde_json::to_string_pretty(&result)
    } else {
        serde_json::to_string(&result)
    }
    .expect("results serialize");
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{rendered}").map_err(|e| (1, format!("writing stdout: {e}")))?;
    match &result.first {
        None => Ok(()),
        Some(first) => Err((
            EXIT_MISMATCH,
            format!(
                "{} of {} step(s) differ; the first is step {} (line {}, machine {})",
                result.mismatches, result.steps, first.step, first.line, first.machine
            ),
        )),
    }
}
