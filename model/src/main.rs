//! `shardline-model [--long]`, or one run: `shardline-model --start fresh|unbalanced
//! [--horizon-ms N] [--regions N] [--depth N] ...`. Prints the summary as one JSON line and,
//! for each violated property, a shortest trace on standard error; exits 1 on a violation.

use std::process::ExitCode;

use shardline_model::{check_all, Bounds, Start};

fn usage(why: &str) -> ExitCode {
    eprintln!("shardline-model: {why}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs = match args.first().map(String::as_str) {
        None => Bounds::short_runs(),
        Some("--long") if args.len() == 1 => Bounds::long_runs(),
        Some(_) => match one_run(&args) {
            Ok(b) => vec![b],
            Err(why) => return usage(&why),
        },
    };
    let report = check_all(runs);
    for (name, trace) in report.violations() {
        eprintln!("VIOLATED: {name}\n{trace}");
    }
    println!("{}", report.json());
    if report.violations().next().is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn one_run(args: &[String]) -> Result<Bounds, String> {
    let mut bounds = Bounds::small(Start::Fresh, 1_000);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        if flag == "--start" {
            bounds.start = match value.as_str() {
                "fresh" => Start::Fresh,
                "unbalanced" => Start::Unbalanced,
                _ => return Err(format!("--start is fresh or unbalanced, got {value:?}")),
            };
            continue;
        }
        let n: u64 = value
            .parse()
            .map_err(|_| format!("{flag} takes a whole number, got {value:?}"))?;
        let small = u32::try_from(n).map_err(|_| format!("{flag} {n} is too large"))?;
        match flag.as_str() {
            "--depth" => bounds.depth = Some(small as usize),
            "--regions" => bounds.regions = small as usize,
            "--coordinators" => bounds.coordinators = small as usize,
            "--shards" => bounds.shards = small as usize,
            "--messages" => bounds.messages = small,
            "--crashes" => bounds.crashes = small,
            "--drops" => bounds.drops = small,
            "--duplicates" => bounds.duplicates = small,
            "--max-in-flight" => bounds.max_in_flight = small as usize,
            "--horizon-ms" => bounds.horizon_ms = n,
            "--lease-ttl-ms" => bounds.lease_ttl_ms = n,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if bounds.regions == 0 || bounds.coordinators == 0 || bounds.shards == 0 {
        return Err("regions, coordinators and shards must be at least 1".into());
    }
    Ok(bounds)
}
