//! Pekko's consistent-hash ring; its operations and the library's functions are
//! `shardline_bind::ops::functions`, named by `shardline.hashing`.

use pyo3::prelude::*;
use shardline_bind::ops::functions::{self, HashRing};

use crate::errors;
use crate::ops::{self, Answer, Rest};

/// The library's functions by name (`shardline_bind::ops::functions::call`).
#[pyfunction]
#[pyo3(signature = (op, *args))]
pub fn _op<'py>(py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
    // The functions reach deep into the core (decisions, replays): a panic there is PanicError.
    errors::guard(|| ops::call(py, "shardline", op, args, functions::call))
}

#[pyclass(
    name = "ConsistentHashRing",
    module = "shardline._native",
    frozen,
    subclass
)]
pub struct ConsistentHashRing {
    ring: HashRing,
}

#[pymethods]
impl ConsistentHashRing {
    #[new]
    #[pyo3(signature = (nodes, virtual_nodes_factor = 10))]
    fn new(nodes: Vec<String>, virtual_nodes_factor: u32) -> Self {
        ConsistentHashRing {
            ring: HashRing::new(nodes, Some(virtual_nodes_factor)),
        }
    }

    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        ops::call(py, "ConsistentHashRing", op, args, |a| self.ring.call(a))
    }
}
