//! The JVM behaviour placement depends on, reproduced bit for bit: `String.hashCode` and
//! `compareTo` over UTF-16 units, and the JDK's object sort (TimSort, contract check
//! included), so a strategy breaks ties as the running Pekko cluster does.

mod sort;
mod string;

pub use sort::{sort_by, ContractViolation};
pub use string::{compare_utf16, sort_distinct_utf16, string_hash_code};
