//! `shardline decide`: stdin vectors -> stdout results, one per vector.

use std::io::{Read, Write};

use serde_json::Value;
use shardline_core::decide::decide;

use crate::EXIT_INVALID_INPUT;

#[derive(clap::Args)]
pub struct Args {
    /// Add a structured explanation of each decision.
    #[arg(long)]
    explain: bool,
    /// Pretty-print the output.
    #[arg(long)]
    pretty: bool,
}

pub fn run(args: Args) -> Result<(), (u8, String)> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| (EXIT_INVALID_INPUT, format!("reading stdin: {e}")))?;
    let input: Value = serde_json::from_str(&text)
        .map_err(|e| (EXIT_INVALID_INPUT, format!("stdin is not valid JSON: {e}")))?;
    let single = input.is_object();
    let result = decide(&input, args.explain).map_err(|e| (EXIT_INVALID_INPUT, e.to_string()))?;
    let out = if single {
        Value::Array(vec![result])
    } else {
        result
    };
    let rendered = if args.pretty {
        serde_json::to_string_pretty(&out)
    } else {
        serde_json::to_string(&out)
    }
    .expect("JSON values serialize");
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{rendered}").map_err(|e| (1, format!("writing stdout: {e}")))
}
