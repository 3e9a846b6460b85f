//! A bit-for-bit reproduction of `java.util.Arrays.sort(T[], Comparator)` (JDK 17), which is
//! `java.util.TimSort`.
//!
//! Apache Pekko sorts shard regions with `Vector.sorted(ShardSuitabilityOrdering)`, which ends in
//! `java.util.Arrays.sort(Object[], Comparator)`. Pekko's ordering is not transitive in a corner
//! case (members of different statuses that are both "not leaving" compare as equal, while
//! members of the same status are ordered by app version), so the result of the sort depends on
//! the exact sequence of comparisons and moves TimSort makes. Rust's `sort_by` is also a stable
//! merge sort, but it compares different pairs, so with an inconsistent comparator it can produce
//! a different order. This module replays TimSort's decisions exactly:
//!
//! * fewer than `MIN_MERGE` (32) elements: one natural run (`count_run_and_make_ascending`,
//!   strictly descending prefixes are reversed) extended by binary insertion sort;
//! * otherwise runs of at least `min_run_length(n)` elements, pushed on a run stack that is kept
//!   balanced by `merge_collapse` (the corrected rule that also looks at the run below the
//!   top three) and finally `merge_force_collapse`;
//! * merges trim their inputs with `gallop_right` / `gallop_left`, then run `merge_lo` or
//!   `merge_hi`, which switch between one-at-a-time and galloping mode with the adaptive
//!   `min_gallop` threshold (initially `MIN_GALLOP` = 7, shared across merges of one sort);
//! * where the JDK throws `IllegalArgumentException("Comparison method violates its general
//!   contract!")`, [`sort_by`] returns [`ContractViolation`].
//!
//! The comparator is always called with the same arguments, in the same order, as the JDK calls
//! `Comparator.compare`, so even asymmetric comparators behave identically.
//!
//! The sort runs on a vector of indices and only permutes `v` at the end, so the elements are
//! never lost or duplicated and nothing here panics, whatever the comparator returns (a panic in
//! the comparator itself leaves `v` untouched).

use std::cmp::Ordering;

/// Error raised where java.util.TimSort throws
/// `IllegalArgumentException("Comparison method violates its general contract!")`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractViolation;

impl std::fmt::Display for ContractViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Comparison method violates its general contract!")
    }
}

impl std::error::Error for ContractViolation {}

/// Arrays shorter than this are sorted with binary insertion sort alone.
const MIN_MERGE: usize = 32;

/// Initial threshold for entering galloping mode in a merge.
const MIN_GALLOP: usize = 7;

/// Sorts `v` exactly as `java.util.Arrays.sort(T[], Comparator)` on JDK 17 would, for any
/// comparator, including inconsistent ones.
///
/// `cmp(a, b)` plays the part of `Comparator.compare(a, b)`: `Less` for a negative result,
/// `Equal` for zero, `Greater` for a positive one. The sort is stable for consistent
/// comparators.
///
/// On a contract violation `v` is left in some permutation of its elements (the one the JDK
/// leaves its array in) and `Err(ContractViolation)` is returned.
pub fn sort_by<T, F: FnMut(&T, &T) -> Ordering>(
    v: &mut [T],
    mut cmp: F,
) -> Result<(), ContractViolation> {
    let n = v.len();
    if n < 2 {
        return Ok(());
    }
    let mut idx: Vec<usize> = (0..n).collect();
    let result = {
        let items: &[T] = v;
        let mut c = |a: usize, b: usize| cmp(&items[a], &items[b]);
        sort_indices(&mut idx, &mut c)
    };
    apply_permutation(v, &mut idx);
    result
}

/// Sorts `0..n` indices in place with TimSort; `c(i, j)` compares the elements at original
/// positions `i` and `j`.
fn sort_indices<C: FnMut(usize, usize) -> Ordering>(
    a: &mut [usize],
    c: &mut C,
) -> Result<(), ContractViolation> {
    let hi = a.len();
    let mut lo = 0usize;
    let mut n_remaining = hi;
    if n_remaining < 2 {
        return Ok(());
    }

    // Small arrays: a single "mini-TimSort" with no merges.
    if n_remaining < MIN_MERGE {
        let init_run_len = count_run_and_make_ascending(a, lo, hi, c);
        binary_sort(a, lo, hi, lo + init_run_len, c);
        return Ok(());
    }

    let mut ts = TimSort {
        a,
        tmp: Vec::new(),
        min_gallop: MIN_GALLOP,
        run_base: Vec::new(),
        run_len: Vec::new(),
    };
    let min_run = min_run_length(n_remaining);
    loop {
        // Identify the next run.
        let mut run_len = count_run_and_make_ascending(ts.a, lo, hi, c);

        // If the run is short, extend it to min(min_run, n_remaining).
        if run_len < min_run {
            let force = if n_remaining <= min_run {
                n_remaining
            } else {
                min_run
            };
            binary_sort(ts.a, lo, lo + force, lo + run_len, c);
            run_len = force;
        }

        ts.push_run(lo, run_len);
        ts.merge_collapse(c)?;

        lo += run_len;
        n_remaining -= run_len;
        if n_remaining == 0 {
            break;
        }
    }
    ts.merge_force_collapse(c)?;
    Ok(())
}

/// Applies the permutation `perm` (where `perm[k]` is the original position of the element that
/// must end up at position `k`) to `v`, in place, by following cycles. `perm` is consumed
/// (overwritten). Entries that do not form a valid permutation are left alone rather than
/// causing a panic (they cannot occur: TimSort only ever moves indices around).
fn apply_permutation<T>(v: &mut [T], perm: &mut [usize]) {
    let n = v.len().min(perm.len());
    const DONE: usize = usize::MAX;
    for start in 0..n {
        if perm[start] == DONE {
            continue;
        }
        // Element for position `pos` comes from `perm[pos]`; walk the cycle swapping forward.
        let mut pos = start;
        loop {
            let src = perm[pos];
            perm[pos] = DONE;
            if src == start || src >= n || perm[src] == DONE {
                break;
            }
            v.swap(pos, src);
            pos = src;
        }
    }
}

/// Returns the length of the run beginning at `lo` in `a[lo..hi]`, reversing it first if it is
/// strictly descending (so that the sort stays stable).
///
/// A run is either a non-descending sequence `a[lo] <= a[lo+1] <= ...` or a strictly descending
/// one `a[lo] > a[lo+1] > ...`. Requires `lo < hi`.
fn count_run_and_make_ascending<C: FnMut(usize, usize) -> Ordering>(
    a: &mut [usize],
    lo: usize,
    hi: usize,
    c: &mut C,
) -> usize {
    let mut run_hi = lo + 1;
    if run_hi == hi {
        return 1;
    }
    // Compare the second element with the first.
    let descending = c(a[run_hi], a[lo]) == Ordering::Less;
    run_hi += 1;
    if descending {
        while run_hi < hi && c(a[run_hi], a[run_hi - 1]) == Ordering::Less {
            run_hi += 1;
        }
        a[lo..run_hi].reverse();
    } else {
        while run_hi < hi && c(a[run_hi], a[run_hi - 1]) != Ordering::Less {
            run_hi += 1;
        }
    }
    run_hi - lo
}

/// Binary insertion sort of `a[lo..hi]`, where `a[lo..start]` is already sorted.
fn binary_sort<C: FnMut(usize, usize) -> Ordering>(
    a: &mut [usize],
    lo: usize,
    hi: usize,
    mut start: usize,
    c: &mut C,
) {
    if start == lo {
        start += 1;
    }
    while start < hi {
        let pivot = a[start];
        // Find the insertion point: after every element that is not greater than the pivot,
        // as seen by the binary search.
        let mut left = lo;
        let mut right = start;
        while left < right {
            let mid = (left + right) >> 1;
            if c(pivot, a[mid]) == Ordering::Less {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        a.copy_within(left..start, left + 1);
        a[left] = pivot;
        start += 1;
    }
}

/// Minimum acceptable run length for an array of `n` elements (`n >= MIN_MERGE`): `n` itself
/// when smaller than `MIN_MERGE`, otherwise a value `k` with `MIN_MERGE/2 <= k <= MIN_MERGE`
/// such that `n / k` is close to, but strictly less than, a power of two.
fn min_run_length(mut n: usize) -> usize {
    let mut r = 0usize;
    while n >= MIN_MERGE {
        r |= n & 1;
        n >>= 1;
    }
    n + r
}

/// Locates the position at which to insert `key` into the sorted range `a[base..base+len]`;
/// with equal elements, returns the index of the leftmost one. `hint` (`0 <= hint < len`) is
/// where the search starts. The result `k` satisfies `a[base+k-1] < key <= a[base+k]` when the
/// comparator is consistent, and `0 <= k <= len` always.
fn gallop_left<C: FnMut(usize, usize) -> Ordering>(
    key: usize,
    a: &[usize],
    base: usize,
    len: usize,
    hint: usize,
    c: &mut C,
) -> usize {
    // Offsets are signed as in the JDK: `last_ofs` may become -1 before being incremented.
    let mut last_ofs: isize;
    let mut ofs: isize;
    let hint_i = hint as isize;
    if c(key, a[base + hint]) == Ordering::Greater {
        // Gallop right until a[base+hint+last_ofs] < key <= a[base+hint+ofs].
        let max_ofs = (len - hint) as isize;
        last_ofs = 0;
        ofs = 1;
        while ofs < max_ofs && c(key, a[base + hint + ofs as usize]) == Ordering::Greater {
            last_ofs = ofs;
            ofs = (ofs << 1) + 1;
        }
        if ofs > max_ofs {
            ofs = max_ofs;
        }
        last_ofs += hint_i;
        ofs += hint_i;
    } else {
        // key <= a[base+hint]: gallop left until a[base+hint-ofs] < key <= a[base+hint-last_ofs].
        let max_ofs = hint_i + 1;
        last_ofs = 0;
        ofs = 1;
        while ofs < max_ofs && c(key, a[base + hint - ofs as usize]) != Ordering::Greater {
            last_ofs = ofs;
            ofs = (ofs << 1) + 1;
        }
        if ofs > max_ofs {
            ofs = max_ofs;
        }
        let tmp = last_ofs;
        last_ofs = hint_i - ofs;
        ofs = hint_i - tmp;
    }

    // Now a[base+last_ofs] < key <= a[base+ofs], with -1 <= last_ofs < ofs <= len.
    // Binary search for the answer in a[base+last_ofs+1 .. base+ofs].
    last_ofs += 1;
    while last_ofs < ofs {
        let m = last_ofs + ((ofs - last_ofs) >> 1);
        if c(key, a[base + m as usize]) == Ordering::Greater {
            last_ofs = m + 1;
        } else {
            ofs = m;
        }
    }
    ofs as usize
}

/// Like [`gallop_left`], except that with equal elements it returns the index just after the
/// rightmost one: `a[base+k-1] <= key < a[base+k]` for a consistent comparator.
fn gallop_right<C: FnMut(usize, usize) -> Ordering>(
    key: usize,
    a: &[usize],
    base: usize,
    len: usize,
    hint: usize,
    c: &mut C,
) -> usize {
    let mut last_ofs: isize;
    let mut ofs: isize;
    let hint_i = hint as isize;
    if c(key, a[base + hint]) == Ordering::Less {
        // Gallop left until a[base+hint-ofs] <= key < a[base+hint-last_ofs].
        let max_ofs = hint_i + 1;
        last_ofs = 0;
        ofs = 1;
        while ofs < max_ofs && c(key, a[base + hint - ofs as usize]) == Ordering::Less {
            last_ofs = ofs;
            ofs = (ofs << 1) + 1;
        }
        if ofs > max_ofs {
            ofs = max_ofs;
        }
        let tmp = last_ofs;
        last_ofs = hint_i - ofs;
        ofs = hint_i - tmp;
    } else {
        // a[base+hint] <= key: gallop right until a[base+hint+last_ofs] <= key < a[base+hint+ofs].
        let max_ofs = (len - hint) as isize;
        last_ofs = 0;
        ofs = 1;
        while ofs < max_ofs && c(key, a[base + hint + ofs as usize]) != Ordering::Less {
            last_ofs = ofs;
            ofs = (ofs << 1) + 1;
        }
        if ofs > max_ofs {
            ofs = max_ofs;
        }
        last_ofs += hint_i;
        ofs += hint_i;
    }

    // Now a[base+last_ofs] <= key < a[base+ofs]; binary search in between.
    last_ofs += 1;
    while last_ofs < ofs {
        let m = last_ofs + ((ofs - last_ofs) >> 1);
        if c(key, a[base + m as usize]) == Ordering::Less {
            ofs = m;
        } else {
            last_ofs = m + 1;
        }
    }
    ofs as usize
}

/// State of one TimSort over an array of indices.
struct TimSort<'a> {
    a: &'a mut [usize],
    /// Temporary storage for merges (holds the shorter run).
    tmp: Vec<usize>,
    /// Adaptive galloping threshold, carried from one merge to the next.
    min_gallop: usize,
    /// Stack of pending runs: run `i` is `a[run_base[i] .. run_base[i] + run_len[i]]`.
    run_base: Vec<usize>,
    run_len: Vec<usize>,
}

impl TimSort<'_> {
    fn push_run(&mut self, base: usize, len: usize) {
        self.run_base.push(base);
        self.run_len.push(len);
    }

    /// Merges adjacent runs until the stack invariants hold again:
    ///
    /// 1. `run_len[i - 3] > run_len[i - 2] + run_len[i - 1]`
    /// 2. `run_len[i - 2] > run_len[i - 1]`
    ///
    /// This is the corrected rule (JDK 11+, also in later JDK 8 updates) that checks the
    /// invariant for the top four runs, not just the top three.
    fn merge_collapse<C: FnMut(usize, usize) -> Ordering>(
        &mut self,
        c: &mut C,
    ) -> Result<(), ContractViolation> {
        while self.run_len.len() > 1 {
            let rl = &self.run_len;
            let mut n = rl.len() - 2;
            if (n > 0 && rl[n - 1] <= rl[n] + rl[n + 1])
                || (n > 1 && rl[n - 2] <= rl[n] + rl[n - 1])
            {
                if rl[n - 1] < rl[n + 1] {
                    n -= 1;
                }
            } else if rl[n] > rl[n + 1] {
                break; // Invariant is established.
            }
            self.merge_at(n, c)?;
        }
        Ok(())
    }

    /// Merges all runs on the stack until only one remains.
    fn merge_force_collapse<C: FnMut(usize, usize) -> Ordering>(
        &mut self,
        c: &mut C,
    ) -> Result<(), ContractViolation> {
        while self.run_len.len() > 1 {
            let rl = &self.run_len;
            let mut n = rl.len() - 2;
            if n > 0 && rl[n - 1] < rl[n + 1] {
                n -= 1;
            }
            self.merge_at(n, c)?;
        }
        Ok(())
    }

    /// Merges the two runs at stack indices `i` and `i + 1`; `i` is the second-last or
    /// third-last run on the stack.
    fn merge_at<C: FnMut(usize, usize) -> Ordering>(
        &mut self,
        i: usize,
        c: &mut C,
    ) -> Result<(), ContractViolation> {
        let mut base1 = self.run_base[i];
        let mut len1 = self.run_len[i];
        let base2 = self.run_base[i + 1];
        let mut len2 = self.run_len[i + 1];

        // Record the combined run; if i is the third-last run, slide the last run over.
        self.run_len[i] = len1 + len2;
        self.run_base.remove(i + 1);
        self.run_len.remove(i + 1);

        // Elements of run1 that are <= run2's first element are already in place.
        let k = gallop_right(self.a[base2], self.a, base1, len1, 0, c);
        base1 += k;
        len1 -= k;
        if len1 == 0 {
            return Ok(());
        }

        // Elements of run2 that are >= run1's last element are already in place.
        len2 = gallop_left(self.a[base1 + len1 - 1], self.a, base2, len2, len2 - 1, c);
        if len2 == 0 {
            return Ok(());
        }

        if len1 <= len2 {
            self.merge_lo(base1, len1, base2, len2, c)
        } else {
            self.merge_hi(base1, len1, base2, len2, c)
        }
    }

    /// Merges two adjacent runs in place, left to right, with `len1 <= len2`. Copies the first
    /// run into `tmp`. Assumes (for a consistent comparator) that run2's first element is smaller
    /// than run1's first and run1's last is larger than every element of run2.
    fn merge_lo<C: FnMut(usize, usize) -> Ordering>(
        &mut self,
        base1: usize,
        mut len1: usize,
        base2: usize,
        mut len2: usize,
        c: &mut C,
    ) -> Result<(), ContractViolation> {
        let a = &mut *self.a;
        let tmp = &mut self.tmp;
        tmp.clear();
        tmp.extend_from_slice(&a[base1..base1 + len1]);

        let mut cursor1 = 0usize; // index into tmp
        let mut cursor2 = base2; // index into a
        let mut dest = base1; // index into a

        // Move the first element of run2 and deal with the degenerate cases.
        a[dest] = a[cursor2];
        dest += 1;
        cursor2 += 1;
        len2 -= 1;
        if len2 == 0 {
            a[dest..dest + len1].copy_from_slice(&tmp[cursor1..cursor1 + len1]);
            return Ok(());
        }
        if len1 == 1 {
            a.copy_within(cursor2..cursor2 + len2, dest);
            a[dest + len2] = tmp[cursor1]; // Last element of run1 to the end of the merge.
            return Ok(());
        }

        let mut min_gallop = self.min_gallop as isize;
        'outer: loop {
            let mut count1 = 0usize; // times in a row run1 won
            let mut count2 = 0usize; // times in a row run2 won

            // One pair at a time until one run starts winning consistently.
            loop {
                if c(a[cursor2], tmp[cursor1]) == Ordering::Less {
                    a[dest] = a[cursor2];
                    dest += 1;
                    cursor2 += 1;
                    count2 += 1;
                    count1 = 0;
                    len2 -= 1;
                    if len2 == 0 {
                        break 'outer;
                    }
                } else {
                    a[dest] = tmp[cursor1];
                    dest += 1;
                    cursor1 += 1;
                    count1 += 1;
                    count2 = 0;
                    len1 -= 1;
                    if len1 == 1 {
                        break 'outer;
                    }
                }
                if ((count1 | count2) as isize) >= min_gallop {
                    break;
                }
            }

            // Galloping until neither run is winning consistently any more.
            loop {
                count1 = gallop_right(a[cursor2], tmp, cursor1, len1, 0, c);
                if count1 != 0 {
                    a[dest..dest + count1].copy_from_slice(&tmp[cursor1..cursor1 + count1]);
                    dest += count1;
                    cursor1 += count1;
                    len1 -= count1;
                    if len1 <= 1 {
                        // len1 == 0 is only possible with an inconsistent comparator.
                        break 'outer;
                    }
                }
                a[dest] = a[cursor2];
                dest += 1;
                cursor2 += 1;
                len2 -= 1;
                if len2 == 0 {
                    break 'outer;
                }

                count2 = gallop_left(tmp[cursor1], a, cursor2, len2, 0, c);
                if count2 != 0 {
                    a.copy_within(cursor2..cursor2 + count2, dest);
                    dest += count2;
                    cursor2 += count2;
                    len2 -= count2;
                    if len2 == 0 {
                        break 'outer;
                    }
                }
                a[dest] = tmp[cursor1];
                dest += 1;
                cursor1 += 1;
                len1 -= 1;
                if len1 == 1 {
                    break 'outer;
                }
                min_gallop -= 1;
                if !(count1 >= MIN_GALLOP || count2 >= MIN_GALLOP) {
                    break;
                }
            }
            if min_gallop < 0 {
                min_gallop = 0;
            }
            min_gallop += 2; // Penalize for leaving gallop mode.
        }
        self.min_gallop = if min_gallop < 1 {
            1
        } else {
            min_gallop as usize
        };

        if len1 == 1 {
            a.copy_within(cursor2..cursor2 + len2, dest);
            a[dest + len2] = tmp[cursor1];
            Ok(())
        } else if len1 == 0 {
            // Every index is still in `a` exactly once here (the hole is empty).
            Err(ContractViolation)
        } else {
            a[dest..dest + len1].copy_from_slice(&tmp[cursor1..cursor1 + len1]);
            Ok(())
        }
    }

    /// Like [`Self::merge_lo`], but right to left, for `len1 >= len2`. Copies the second run
    /// into `tmp`.
    fn merge_hi<C: FnMut(usize, usize) -> Ordering>(
        &mut self,
        base1: usize,
        mut len1: usize,
        base2: usize,
        mut len2: usize,
        c: &mut C,
    ) -> Result<(), ContractViolation> {
        let a = &mut *self.a;
        let tmp = &mut self.tmp;
        tmp.clear();
        tmp.extend_from_slice(&a[base2..base2 + len2]);

        // Cursors point at the next element to move; they can step to "one before the start"
        // of their range, so they are kept signed (as in the JDK).
        let mut cursor1 = (base1 + len1) as isize - 1; // index into a
        let mut cursor2 = len2 as isize - 1; // index into tmp
        let mut dest = (base2 + len2) as isize - 1; // index into a
        let tmp_base: usize = 0;

        // Move the last element of run1 and deal with the degenerate cases.
        a[dest as usize] = a[cursor1 as usize];
        dest -= 1;
        cursor1 -= 1;
        len1 -= 1;
        if len1 == 0 {
            let start = (dest - (len2 as isize - 1)) as usize;
            a[start..start + len2].copy_from_slice(&tmp[tmp_base..tmp_base + len2]);
            return Ok(());
        }
        if len2 == 1 {
            dest -= len1 as isize;
            cursor1 -= len1 as isize;
            let from = (cursor1 + 1) as usize;
            a.copy_within(from..from + len1, (dest + 1) as usize);
            a[dest as usize] = tmp[cursor2 as usize];
            return Ok(());
        }

        let mut min_gallop = self.min_gallop as isize;
        'outer: loop {
            let mut count1 = 0usize; // times in a row run1 won
            let mut count2 = 0usize; // times in a row run2 won

            loop {
                if c(tmp[cursor2 as usize], a[cursor1 as usize]) == Ordering::Less {
                    a[dest as usize] = a[cursor1 as usize];
                    dest -= 1;
                    cursor1 -= 1;
                    count1 += 1;
                    count2 = 0;
                    len1 -= 1;
                    if len1 == 0 {
                        break 'outer;
                    }
                } else {
                    a[dest as usize] = tmp[cursor2 as usize];
                    dest -= 1;
                    cursor2 -= 1;
                    count2 += 1;
                    count1 = 0;
                    len2 -= 1;
                    if len2 == 1 {
                        break 'outer;
                    }
                }
                if ((count1 | count2) as isize) >= min_gallop {
                    break;
                }
            }

            loop {
                count1 = len1 - gallop_right(tmp[cursor2 as usize], a, base1, len1, len1 - 1, c);
                if count1 != 0 {
                    dest -= count1 as isize;
                    cursor1 -= count1 as isize;
                    len1 -= count1;
                    let from = (cursor1 + 1) as usize;
                    a.copy_within(from..from + count1, (dest + 1) as usize);
                    if len1 == 0 {
                        break 'outer;
                    }
                }
                a[dest as usize] = tmp[cursor2 as usize];
                dest -= 1;
                cursor2 -= 1;
                len2 -= 1;
                if len2 == 1 {
                    break 'outer;
                }

                count2 = len2 - gallop_left(a[cursor1 as usize], tmp, tmp_base, len2, len2 - 1, c);
                if count2 != 0 {
                    dest -= count2 as isize;
                    cursor2 -= count2 as isize;
                    len2 -= count2;
                    let from = (cursor2 + 1) as usize;
                    a[(dest + 1) as usize..(dest + 1) as usize + count2]
                        .copy_from_slice(&tmp[from..from + count2]);
                    if len2 <= 1 {
                        // len2 == 0 is only possible with an inconsistent comparator.
                        break 'outer;
                    }
                }
                a[dest as usize] = a[cursor1 as usize];
                dest -= 1;
                cursor1 -= 1;
                len1 -= 1;
                if len1 == 0 {
                    break 'outer;
                }
                min_gallop -= 1;
                if !(count1 >= MIN_GALLOP || count2 >= MIN_GALLOP) {
                    break;
                }
            }
            if min_gallop < 0 {
                min_gallop = 0;
            }
            min_gallop += 2; // Penalize for leaving gallop mode.
        }
        self.min_gallop = if min_gallop < 1 {
            1
        } else {
            min_gallop as usize
        };

        if len2 == 1 {
            dest -= len1 as isize;
            cursor1 -= len1 as isize;
            let from = (cursor1 + 1) as usize;
            a.copy_within(from..from + len1, (dest + 1) as usize);
            a[dest as usize] = tmp[cursor2 as usize];
            Ok(())
        } else if len2 == 0 {
            // Every index is still in `a` exactly once here (the hole is empty).
            Err(ContractViolation)
        } else {
            let start = (dest - (len2 as isize - 1)) as usize;
            a[start..start + len2].copy_from_slice(&tmp[tmp_base..tmp_base + len2]);
            Ok(())
        }
    }
}
