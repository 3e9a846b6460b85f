//! Which values a binding takes as a host object in a role: a plain function serves a
//! one-method role (`send`, `now_ms`) by itself; any other role needs an object with its
//! methods (checked by [`Role::check`]).

use crate::driver_host::Role;
use crate::{Failure, Status};

/// What kind of value the host passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Given {
    Function,
    Object,
    /// Left out (undefined, null, None).
    Missing,
    Other,
}

/// Whether `given` serves `role` as a plain function (`true`) or as an object whose methods
/// are called (`false`); otherwise the error, naming the option `what`.
pub fn serves(role: &Role, given: Given, what: &str) -> Result<bool, Failure> {
    let one_method = role.required.len() == 1;
    match given {
        Given::Function if one_method => Ok(true),
        Given::Object | Given::Function => Ok(false),
        Given::Missing => Err(Failure::new(
            Status::NullPointer,
            format!("{what} is required"),
        )),
        Given::Other if one_method => Err(Failure::invalid_argument(format!(
            "{what}: expected a function or an object"
        ))),
        Given::Other => Err(Failure::invalid_argument(format!(
            "{what}: expected an object"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver_host::{CLOCK, LEASE};

    #[test]
    fn a_function_serves_only_a_one_method_role() {
        assert_eq!(serves(&CLOCK, Given::Function, "clock"), Ok(true));
        assert_eq!(serves(&LEASE, Given::Function, "lease"), Ok(false));
        assert_eq!(serves(&LEASE, Given::Object, "lease"), Ok(false));
        let e = serves(&LEASE, Given::Missing, "options.lease").unwrap_err();
        assert_eq!(e.status, Status::NullPointer);
        assert_eq!(e.message, "options.lease is required");
        let e = serves(&CLOCK, Given::Other, "options.clock").unwrap_err();
        assert_eq!(e.message, "options.clock: expected a function or an object");
        let e = serves(&LEASE, Given::Other, "options.lease").unwrap_err();
        assert_eq!(e.message, "options.lease: expected an object");
    }
}
