//! Writing a trace while a host drives real machines (the simulator does).
//!
//! A host polls outputs whenever it likes, and may feed a new input before it has polled
//! everything the previous one produced. Outputs still belong to the call that queued them:
//! the recorder notes how many outputs each call queued (the queue only grows at the back and
//! shrinks at the front) and hands each polled output to the call it came from. The recorded
//! host runs every machine in a driver, which takes all a call queued before it returns, so
//! every record holds all its call produced.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;

use crate::Result;

use super::step::StepMachine;
use super::{Header, MachineKind};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Create<'a> {
    create: MachineKind,
    machine: &'a str,
    address: &'a str,
}

#[derive(Serialize)]
struct End<'a> {
    end: &'a str,
}

/// A step, kept as JSON text: inputs and outputs keep their forms' field order.
struct Step {
    machine: String,
    now: u64,
    input: String,
    outputs: Vec<String>,
    deadline: Option<u64>,
    error: Option<String>,
}

impl Step {
    fn write(&self, out: &mut String) {
        use std::fmt::Write;
        let quoted = |s: &str| serde_json::to_string(s).expect("strings serialize");
        let _ = write!(
            out,
            "{{\"machine\":{},\"now\":{},\"input\":{},\"outputs\":[{}]",
            quoted(&self.machine),
            self.now,
            self.input,
            self.outputs.join(",")
        );
        if let Some(d) = self.deadline {
            let _ = write!(out, ",\"deadline\":{d}");
        }
        if let Some(e) = &self.error {
            let _ = write!(out, ",\"error\":{}", quoted(e));
        }
        out.push('}');
    }
}

enum Line {
    Text(String),
    Step(Step),
}

#[derive(Default)]
struct Queue {
    /// Outputs the machine has queued so far, and how many of them were taken.
    queued: usize,
    taken: usize,
    /// Steps still owed outputs: (line, queued count once its outputs are all in).
    owed: VecDeque<(usize, usize)>,
}

/// Collects a trace in memory; [`Recorder::finish`] renders it as JSON lines.
pub(crate) struct Recorder {
    lines: Vec<Line>,
    queues: HashMap<String, Queue>,
}

impl Recorder {
    pub fn new(header: &Header) -> Recorder {
        Recorder {
            lines: vec![Line::Text(
                serde_json::to_string(header).expect("headers serialize"),
            )],
            queues: HashMap::new(),
        }
    }

    fn text(&mut self, value: &impl Serialize) {
        self.lines.push(Line::Text(
            serde_json::to_string(value).expect("records serialize"),
        ));
    }

    pub fn create(&mut self, create: MachineKind, machine: &str, address: &str) {
        self.text(&Create {
            create,
            machine,
            address,
        });
        self.queues.insert(machine.to_owned(), Queue::default());
    }

    fn step(
        &mut self,
        machine: &str,
        now: u64,
        input: String,
        queue_len: usize,
        deadline: Option<u64>,
        error: Option<String>,
    ) {
        let line = self.lines.len();
        self.lines.push(Line::Step(Step {
            machine: machine.to_owned(),
            now,
            input,
            outputs: Vec::new(),
            deadline,
            error,
        }));
        let q = self.queues.entry(machine.to_owned()).or_default();
        let queued = q.taken + queue_len;
        if queued > q.queued {
            q.owed.push_back((line, queued));
        }
        q.queued = queued;
    }

    /// A call a driver made on `machine`, recorded once it returned.
    pub fn called<M: StepMachine>(
        &mut self,
        machine: &str,
        m: &M,
        now: u64,
        step: &M::Step,
        result: &Result<()>,
    ) {
        let error = result.as_ref().err().map(ToString::to_string);
        self.step(
            machine,
            now,
            M::step_json(step),
            m.queued(),
            m.deadline(),
            error,
        );
    }

    /// An output the host took from `machine`, handed to the call that queued it.
    fn taken(&mut self, machine: &str, output: String) {
        let Some(q) = self.queues.get_mut(machine) else {
            return;
        };
        let index = q.taken;
        q.taken += 1;
        while q.owed.front().is_some_and(|&(_, end)| end <= index) {
            q.owed.pop_front();
        }
        if let Some(&(line, _)) = q.owed.front() {
            if let Line::Step(s) = &mut self.lines[line] {
                s.outputs.push(output);
            }
        }
    }

    /// An output the host took from `machine`.
    pub fn output(&mut self, machine: &str, o: &impl Serialize) {
        self.taken(
            machine,
            serde_json::to_string(o).expect("outputs serialize"),
        );
    }

    /// The machine is gone (crashed or removed).
    pub fn end(&mut self, machine: &str) {
        self.queues.remove(machine);
        self.text(&End { end: machine });
    }

    /// The trace as JSON lines. The caller first hands over what live machines still queue.
    pub fn finish(self) -> String {
        let mut out = String::new();
        for line in self.lines {
            match line {
                Line::Text(t) => out.push_str(&t),
                Line::Step(s) => s.write(&mut out),
            }
            out.push('\n');
        }
        out
    }
}
