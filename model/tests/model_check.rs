//! The short form of the model check, run by the test command: every reachable state of
//! 2-region, 2-coordinator, 2-shard clusters within small horizons, under message loss,
//! duplication and reordering, lease expiry and a coordinator crash (`Bounds::short_runs`).

use shardline_model::{check_all, Bounds};

#[test]
fn every_reachable_state_keeps_the_invariants() {
    let report = check_all(Bounds::short_runs());
    println!("{}", report.json());
    for (name, trace) in report.violations() {
        println!("VIOLATED: {name}\n{trace}");
    }
    assert_eq!(report.violations().count(), 0, "see the traces above");
    assert!(
        report.unreached().is_empty(),
        "never reached (the bounds are too tight to show them): {:?}",
        report.unreached()
    );
    for run in &report.runs {
        assert!(run.states_explored > 1, "{run:?}");
    }
}
