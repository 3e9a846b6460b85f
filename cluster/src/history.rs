//! The recorded history: one JSON line per thing a process saw or did, stamped with the
//! machine's real time in microseconds. Every process of a campaign runs on this machine and
//! reads the same clock, so lines from different files can be ordered against each other.
//!
//! Each line is one `write` on a file opened for appending, with no buffer in between: a line
//! that returned is in the kernel and survives a `kill -9` of the writer.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// The machine's real time, in microseconds since the Unix epoch, read with the system call
/// itself rather than through the C library: a process whose clock the campaign skews (with
/// libfaketime, which replaces the library call) still stamps its history with true time, so
/// the checker can order everything.
pub fn true_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    let r = unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_REALTIME, &mut ts) };
    if r != 0 {
        return wall_us();
    }
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000
}

/// The process's own idea of the time (skewed when the campaign skews it).
pub fn wall_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

pub struct History {
    file: Mutex<File>,
    /// Who writes: a region id, or `client`, or `campaign`.
    by: String,
}

impl History {
    pub fn open(path: &Path, by: &str) -> std::io::Result<History> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(History {
            file: Mutex::new(file),
            by: by.to_owned(),
        })
    }

    /// Appends `{"t": now, "by": .., "k": kind, ..fields}`. A failed write is reported on
    /// stderr: the history would be incomplete, which the checker cannot tell from a fault,
    /// so the process says so where the campaign log shows it.
    pub fn record(&self, kind: &str, fields: Value) {
        let mut line = json!({"t": true_us(), "by": self.by, "k": kind});
        if let (Some(line), Value::Object(fields)) = (line.as_object_mut(), fields) {
            line.extend(fields);
        }
        let mut text = line.to_string();
        text.push('\n');
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = f.write_all(text.as_bytes()) {
            eprintln!("history: cannot append to the history of {}: {e}", self.by);
        }
    }
}

/// Every line of every `*.jsonl` file in `dir`, parsed; unparsable lines (a writer killed
/// mid-line) are skipped and counted.
pub fn read_dir(dir: &Path) -> std::io::Result<(Vec<Value>, usize)> {
    let mut lines = Vec::new();
    let mut torn = 0;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            for line in std::fs::read_to_string(&path)?.lines() {
                match serde_json::from_str::<Value>(line) {
                    Ok(v) => lines.push(v),
                    Err(_) => torn += 1,
                }
            }
        }
    }
    lines.sort_by_key(|v| v["t"].as_u64().unwrap_or(0));
    Ok((lines, torn))
}
