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
#[derive(Debug)]
pub struct Row<'a, S> {
    values: *const S,
    targets: &'a [i32],
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
        Row { values, targets }
    }

    /// Number of targets.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Whether the element has no targets.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// The targets' values, in map order.
    #[inline(always)]
    pub fn iter(&self) -> RowIter<'a, S> {
        RowIter {
            values: self.values,
            targets: self.targets.iter(),
        }
    }
}

impl<S> Index<usize> for Row<'_, S> {
    type Output = S;

    /// The `k`th target's value; panics if `k >= len()`, as a slice does.
    #[inline(always)]
    fn index(&self, k: usize) -> &S {
        let t = self.targets[k];
        // SAFETY: `new`'s contract: every target indexes `values`.
        unsafe { &*self.values.add(t as usize) }
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
    values: *const S,
    targets: std::slice::Iter<'a, i32>,
}

impl<'a, S: 'a> Iterator for RowIter<'a, S> {
    type Item = &'a S;
    #[inline(always)]
    fn next(&mut self) -> Option<&'a S> {
        let &t = self.targets.next()?;
        // SAFETY: as in `Index`; the values outlive the row ('a).
        Some(unsafe { &*self.values.add(t as usize) })
    }
    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.targets.size_hint()
    }
}

impl<'a, S: 'a> DoubleEndedIterator for RowIter<'a, S> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<Self::Item> {
        let &t = self.targets.next_back()?;
        // SAFETY: as in `next`.
        Some(unsafe { &*self.values.add(t as usize) })
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
