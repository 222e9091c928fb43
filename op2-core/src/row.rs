//! A READ ragged argument as the native backends pass it: the element's
//! targets read in place through the map, not copied.
//!
//! A kernel declares `neighbours: &[T]` (or `&[[T; D]]`), and the function the
//! user wrote keeps that signature. `#[op2::kernel]` also emits a twin of the
//! kernel, for `par_loop!` only, whose READ ragged parameters are [`Row`]s:
//! the same body then reads `data[targets[k]]` when it asks for entry `k`, as
//! the generated C does. A kernel that looks at its neighbours only
//! sometimes (an SIR node that is not susceptible, a dead cell) then pays
//! for the neighbours it reads, not for all of them.

use std::ops::Index;

/// The values of one element's targets, read through a ragged map: entry `k`
/// is the value (`S` = `T`, or `[T; D]`) at the element's `k`th target. It
/// offers what a kernel may do with a `&[T]` ragged parameter: `len`,
/// `is_empty`, `iter`, `for v in row`, and `row[k]`.
///
/// A message list's variable is a row too: every message, in order
/// ([`Row::whole`]).
#[derive(Debug)]
pub struct Row<'a, S> {
    values: *const S,
    /// The targets; null for a whole row (entry `k` is value `k`).
    targets: *const i32,
    len: usize,
    _targets: std::marker::PhantomData<&'a [i32]>,
}

impl<S> Clone for Row<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Row<'_, S> {}

impl<'a, S: 'a> Row<'a, S> {
    /// The row of `targets` into `values`.
    ///
    /// # Safety
    /// Every target is a valid index into `values`, which holds initialised
    /// values that nothing writes while the row lives.
    #[inline(always)]
    pub unsafe fn new(values: *const S, targets: &'a [i32]) -> Row<'a, S> {
        Row {
            values,
            targets: targets.as_ptr(),
            len: targets.len(),
            _targets: std::marker::PhantomData,
        }
    }

    /// The first `len` values, in order.
    ///
    /// # Safety
    /// `values` holds `len` initialised values that nothing writes while the
    /// row lives.
    #[inline(always)]
    pub unsafe fn whole(values: *const S, len: usize) -> Row<'a, S> {
        Row {
            values,
            targets: std::ptr::null(),
            len,
            _targets: std::marker::PhantomData,
        }
    }

    /// Number of targets.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the element has no targets.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The targets' values, in map order.
    #[inline(always)]
    pub fn iter(&self) -> RowIter<'a, S> {
        RowIter { row: *self, at: 0 }
    }

    /// Value `k`, unchecked.
    ///
    /// # Safety
    /// `k < len`.
    #[inline(always)]
    unsafe fn get(&self, k: usize) -> &'a S {
        let t = if self.targets.is_null() {
            k
        } else {
            *self.targets.add(k) as usize
        };
        // SAFETY: `new`'s and `whole`'s contracts: every target indexes `values`.
        &*self.values.add(t)
    }
}

impl<S> Index<usize> for Row<'_, S> {
    type Output = S;

    /// The `k`th target's value; panics if `k >= len()`, as a slice does.
    #[inline(always)]
    fn index(&self, k: usize) -> &S {
        assert!(
            k < self.len,
            "index out of bounds: the len is {} but the index is {k}",
            self.len
        );
        // SAFETY: checked just above.
        unsafe { self.get(k) }
    }
}

impl<'a, S: 'a> IntoIterator for Row<'a, S> {
    type Item = &'a S;
    type IntoIter = RowIter<'a, S>;
    #[inline(always)]
    fn into_iter(self) -> RowIter<'a, S> {
        self.iter()
    }
}

impl<'a, S: 'a> IntoIterator for &Row<'a, S> {
    type Item = &'a S;
    type IntoIter = RowIter<'a, S>;
    #[inline(always)]
    fn into_iter(self) -> RowIter<'a, S> {
        self.iter()
    }
}

/// The iterator over a [`Row`]'s values.
#[derive(Debug)]
pub struct RowIter<'a, S> {
    row: Row<'a, S>,
    at: usize,
}

impl<'a, S: 'a> Iterator for RowIter<'a, S> {
    type Item = &'a S;
    #[inline(always)]
    fn next(&mut self) -> Option<&'a S> {
        if self.at == self.row.len {
            return None;
        }
        self.at += 1;
        // SAFETY: `at - 1 < len`.
        Some(unsafe { self.row.get(self.at - 1) })
    }
    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.row.len - self.at;
        (n, Some(n))
    }
}

impl<'a, S: 'a> DoubleEndedIterator for RowIter<'a, S> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.at == self.row.len {
            return None;
        }
        self.row.len -= 1;
        // SAFETY: the new `len` was below the old one.
        Some(unsafe { self.row.get(self.row.len) })
    }
}

impl<'a, S: 'a> ExactSizeIterator for RowIter<'a, S> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_its_targets_in_map_order() {
        let values = [10, 11, 12, 13, 14];
        let targets = [4, 0, 4, 2];
        // SAFETY: every target indexes `values`.
        let row = unsafe { Row::new(values.as_ptr(), &targets) };
        assert_eq!(row.len(), 4);
        assert!(!row.is_empty());
        assert_eq!(row.iter().copied().collect::<Vec<_>>(), [14, 10, 14, 12]);
        assert_eq!(row.iter().rev().copied().collect::<Vec<_>>(), [12, 14, 10, 14]);
        assert_eq!(row.iter().len(), 4);
        let mut by_loop = Vec::new();
        for &v in row {
            by_loop.push(v);
        }
        assert_eq!(by_loop, [14, 10, 14, 12]);
        assert_eq!((row[0], row[1], row[3]), (14, 10, 12));
        // SAFETY: no targets.
        let empty = unsafe { Row::new(values.as_ptr(), &[]) };
        assert!(empty.is_empty() && empty.iter().next().is_none());
    }

    #[test]
    fn a_whole_row_reads_every_value_in_order() {
        let values = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]];
        // SAFETY: three values, all initialised.
        let row = unsafe { Row::whole(values.as_ptr(), 3) };
        assert_eq!(row.len(), 3);
        assert_eq!(row[2][1], 6.0);
        assert_eq!(row.iter().map(|v| v[0]).collect::<Vec<_>>(), [1.0, 3.0, 5.0]);
        assert_eq!(row.iter().rev().map(|v| v[0]).collect::<Vec<_>>(), [5.0, 3.0, 1.0]);
        assert_eq!(row.iter().len(), 3);
    }

    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn indexing_past_a_whole_row_panics() {
        let values = [1, 2, 3];
        // SAFETY: two values.
        let row = unsafe { Row::whole(values.as_ptr(), 2) };
        let _ = row[2];
    }

    #[test]
    fn a_row_of_arrays_reads_whole_entries() {
        let values = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
        let targets = [2, 1];
        // SAFETY: every target indexes `values`.
        let row = unsafe { Row::new(values.as_ptr(), &targets) };
        assert_eq!(row[0][1], 6.0);
        assert_eq!(row.iter().map(|v| v[0]).sum::<f64>(), 8.0);
    }

    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn indexing_past_the_row_panics_as_a_slice_does() {
        let values = [1, 2, 3];
        // SAFETY: every target indexes `values`.
        let row = unsafe { Row::new(values.as_ptr(), &[0, 1]) };
        let _ = row[2];
    }
}
