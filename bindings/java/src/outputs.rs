//! State-machine outputs (`CoordinatorOutput`, `RegionOutput`, `Notice`) as rows of one buffer
//! per drain (`shardline_bind::rows`), which `org.shardline.Rows` reads back into records.
//!
//! One buffer per drain rather than one Java object made from Rust per output: a call from Rust
//! into Java and a `String` per field cost several times the step itself, while Java decodes
//! short UTF-8 fields faster than JNI can make strings. The rows go into the calling thread's
//! scratch memory (`Rows.Scratch`) when they fit, so a step makes no JNI array call.

use std::cell::Cell;

use jni::sys::{jbyteArray, jint, jlong};
use jni::JNIEnv;
use shardline_bind::rows::Rows;

use crate::boundary::Result;
use crate::convert::fill;

/// `items` written as rows by `write` (`Rows::coordinator`, `Rows::region`, `Rows::notice`)
/// behind their length, into the caller's scratch memory (`at`, `cap` bytes; answers null) when
/// they fit, else into a new array.
pub fn rows<T>(
    env: &mut JNIEnv,
    at: jlong,
    cap: jint,
    items: &[T],
    write: fn(&mut Rows, &T),
) -> Result<jbyteArray> {
    let mut rows = Rows(SCRATCH.take());
    rows.0.clear();
    rows.framed(|r| items.iter().for_each(|o| write(r, o)));
    let answer = match fill(at, cap, &rows.0) {
        true => std::ptr::null_mut(),
        false => env.byte_array_from_slice(&rows.0)?.into_raw(),
    };
    // Kept for the thread's next drain, unless a rare huge one grew it.
    if rows.0.capacity() <= 1 << 16 {
        SCRATCH.set(rows.0);
    }
    Ok(answer)
}

thread_local! {
    /// Where a drain writes its rows before the copy to Java, so a step allocates none here.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}
