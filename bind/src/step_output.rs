//! The outputs of both step machines, as a binding carries them out: a `send` output's
//! envelope goes by the binding's fast path for envelopes (Node's flat fields), every other
//! output by its serde form. One trait, so a binding writes that choice once for the
//! coordinator's outputs and the region's.

use shardline_core::coordinator::CoordinatorOutput;
use shardline_core::protocol::Envelope;
use shardline_core::region::RegionOutput;

pub trait StepOutput: serde::Serialize {
    /// The envelope of a `send` output.
    fn sent(&self) -> Option<&Envelope>;
}

impl StepOutput for CoordinatorOutput {
    fn sent(&self) -> Option<&Envelope> {
        match self {
            CoordinatorOutput::Send(e) => Some(e),
            _ => None,
        }
    }
}

impl StepOutput for RegionOutput {
    fn sent(&self) -> Option<&Envelope> {
        match self {
            RegionOutput::Send(e) => Some(e),
            _ => None,
        }
    }
}
