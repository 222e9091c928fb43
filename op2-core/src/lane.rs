//! Lane staging: `par_loop!`'s lane path runs a kernel on [`LANES`]
//! elements at once, each argument staged component-major (component `c`
//! of lane `l` at `c * LANES + l`), so that one component of all lanes is
//! one vector, as `jit`'s C stages them. The kernel's lane copy
//! (`#[op2::kernel]`) takes each parameter as a [`LaneRef`] or [`LaneMut`]:
//! the same body, indexing lane `l`'s values at a stride of `LANES`, which
//! the compiler turns into vector instructions across the lanes.
//!
//! Staging holds exactly what the scalar path stages (gathered values,
//! zeros for WRITE and INC), and rows are scattered back in element order,
//! so the lane path gives the scalar path's results bit for bit.

#[cfg(target_arch = "x86_64")]
use std::any::Any;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut, Index, IndexMut};

use crate::{Scalar, Stage};

/// Elements per lane group: one AVX2 register of `f64`.
pub const LANES: usize = 4;

/// One argument's staging for [`LANES`] elements.
pub trait LaneStage: Copy {
    /// The element type.
    type T: Scalar;
    /// One element's staging value, as the scalar path stages it.
    type Row: Stage<Self::T>;
    /// All lanes zero.
    fn zero() -> Self;
    /// Zero rows, for a group's gather to fill.
    #[inline(always)]
    fn zero_rows() -> [Self::Row; LANES] {
        [<Self::Row as Stage<Self::T>>::zero(); LANES]
    }
    /// The staging of `rows`: lane `l` holds `rows[l]`.
    fn from_rows(rows: &[Self::Row; LANES]) -> Self;
    /// Every lane's values, lane `l` at `l`.
    fn rows(&self) -> [Self::Row; LANES];
}

/// The staging of a `&[T; D]` (or `&mut`) parameter.
#[derive(Clone, Copy)]
pub struct LaneArray<T, const D: usize>([[T; LANES]; D]);

/// The staging of a `&T` (or `&mut`) parameter.
#[derive(Clone, Copy)]
pub struct LaneScalar<T>([T; LANES]);

impl<T: Scalar, const D: usize> LaneStage for LaneArray<T, D> {
    type T = T;
    type Row = [T; D];
    #[inline(always)]
    fn zero() -> Self {
        LaneArray([[T::ZERO; LANES]; D])
    }
    #[inline(always)]
    fn from_rows(rows: &[[T; D]; LANES]) -> Self {
        LaneArray(transpose(rows))
    }
    #[inline(always)]
    fn rows(&self) -> [[T; D]; LANES] {
        transpose(&self.0)
    }
}

impl<T: Scalar + Stage<T>> LaneStage for LaneScalar<T> {
    type T = T;
    type Row = T;
    #[inline(always)]
    fn zero() -> Self {
        LaneScalar([T::ZERO; LANES])
    }
    #[inline(always)]
    fn from_rows(rows: &[T; LANES]) -> Self {
        LaneScalar(*rows)
    }
    #[inline(always)]
    fn rows(&self) -> [T; LANES] {
        self.0
    }
}

impl<T: Scalar, const D: usize> LaneArray<T, D> {
    /// Lane `l`, as the kernel's lane copy reads it.
    #[inline(always)]
    pub fn lane(&self, l: usize) -> LaneRef<'_, T, D> {
        assert!(l < LANES);
        // Wrapping: for D = 0 the staging is empty and nothing is read
        // through the view (`check_index`).
        LaneRef::new(self.0.as_ptr().cast::<T>().wrapping_add(l))
    }

    /// Lane `l`, as the kernel's lane copy writes it.
    #[inline(always)]
    pub fn lane_mut(&mut self, l: usize) -> LaneMut<'_, T, D> {
        assert!(l < LANES);
        // Wrapping: as for `lane`.
        LaneMut::new(self.0.as_mut_ptr().cast::<T>().wrapping_add(l))
    }
}

impl<T: Scalar> LaneScalar<T> {
    /// Lane `l`, as the kernel's lane copy reads it.
    #[inline(always)]
    pub fn lane(&self, l: usize) -> LaneRef<'_, T, 1> {
        LaneRef::new(&self.0[l])
    }

    /// Lane `l`, as the kernel's lane copy writes it.
    #[inline(always)]
    pub fn lane_mut(&mut self, l: usize) -> LaneMut<'_, T, 1> {
        LaneMut::new(&mut self.0[l])
    }
}

/// A kernel parameter's values in one lane, read: `p[c]` is component `c`
/// (`&[T; D]` parameters), `*p` the value (`&T` parameters).
#[derive(Clone, Copy)]
pub struct LaneRef<'a, T, const D: usize> {
    first: *const T,
    _staging: PhantomData<&'a T>,
}

/// A kernel parameter's values in one lane, written: as [`LaneRef`], and
/// assignable.
pub struct LaneMut<'a, T, const D: usize> {
    first: *mut T,
    _staging: PhantomData<&'a mut T>,
}

impl<T, const D: usize> LaneRef<'_, T, D> {
    /// Component 0 of a lane; component `c` is `c * LANES` further.
    #[inline(always)]
    fn new(first: *const T) -> Self {
        LaneRef {
            first,
            _staging: PhantomData,
        }
    }
}

impl<T, const D: usize> LaneMut<'_, T, D> {
    /// As `LaneRef::new`.
    #[inline(always)]
    fn new(first: *mut T) -> Self {
        LaneMut {
            first,
            _staging: PhantomData,
        }
    }
}

/// The same check, and message, as an array's index.
#[inline(always)]
fn check_index<const D: usize>(c: usize) {
    if c >= D {
        panic!("index out of bounds: the len is {D} but the index is {c}");
    }
}

impl<T, const D: usize> Index<usize> for LaneRef<'_, T, D> {
    type Output = T;
    #[inline(always)]
    fn index(&self, c: usize) -> &T {
        check_index::<D>(c);
        // SAFETY: component `c < D` of a lane of `[[T; LANES]; D]` staging,
        // borrowed for the view's lifetime.
        unsafe { &*self.first.add(c * LANES) }
    }
}

impl<T, const D: usize> Index<usize> for LaneMut<'_, T, D> {
    type Output = T;
    #[inline(always)]
    fn index(&self, c: usize) -> &T {
        check_index::<D>(c);
        // SAFETY: as for `LaneRef`.
        unsafe { &*self.first.add(c * LANES) }
    }
}

impl<T, const D: usize> IndexMut<usize> for LaneMut<'_, T, D> {
    #[inline(always)]
    fn index_mut(&mut self, c: usize) -> &mut T {
        check_index::<D>(c);
        // SAFETY: as for `LaneRef`, borrowed mutably for the view's lifetime.
        unsafe { &mut *self.first.add(c * LANES) }
    }
}

impl<T, const D: usize> Deref for LaneRef<'_, T, D> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self[0]
    }
}

impl<T, const D: usize> Deref for LaneMut<'_, T, D> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self[0]
    }
}

impl<T, const D: usize> DerefMut for LaneMut<'_, T, D> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self[0]
    }
}

/// The lane staging of a kernel's parameter at loop position `K`
/// (`#[op2::kernel]` implements it for kernels with a lane copy):
/// `LaneArray<T, D>` for `&[T; D]`, `LaneScalar<T>` for `&T`, and the view
/// the lane copy takes, `LaneRef` or `LaneMut` as the parameter is `&` or
/// `&mut`. The loop body asks the kernel for the view, so that an argument
/// given the wrong mutability is reported once, by the scalar path and
/// `par_loop!`'s argument check, not again in terms of lane views.
pub trait LaneParam<const K: usize> {
    /// The staging type.
    type Soa: LaneStage;
    /// The view of one lane the lane copy takes.
    type View<'a>;
    /// Lane `l` of `soa`, as the lane copy takes it.
    fn view(soa: &mut Self::Soa, l: usize) -> Self::View<'_>;
}

/// `m` transposed: `out[c][r] = m[r][c]`, between rows and staging.
#[inline(always)]
fn transpose<T: Scalar, const R: usize, const C: usize>(m: &[[T; C]; R]) -> [[T; R]; C] {
    // f64 by its type: the downcasts are resolved at compile time.
    #[cfg(target_arch = "x86_64")]
    if let Some(m) = (m as &dyn Any).downcast_ref::<[[f64; C]; R]>() {
        let out = transpose_f64(m);
        if let Some(out) = (&out as &dyn Any).downcast_ref::<[[T; R]; C]>() {
            return *out;
        }
    }
    let mut out = [[T::ZERO; R]; C];
    for (r, row) in m.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            out[c][r] = *v;
        }
    }
    out
}

/// [`transpose`] for `f64`: two by two blocks with SSE2 unpacks (every
/// x86-64 has SSE2), then an odd last row or column one value at a time.
/// Written with scalar moves, the lane path's transpositions were spilled
/// to the stack and read back across the spills' boundaries, which stalls
/// store forwarding.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn transpose_f64<const R: usize, const C: usize>(m: &[[f64; C]; R]) -> [[f64; R]; C] {
    use std::arch::x86_64::{_mm_loadu_pd, _mm_storeu_pd, _mm_unpackhi_pd, _mm_unpacklo_pd};
    let mut out = [[0.0; R]; C];
    let (even_r, even_c) = (R - R % 2, C - C % 2);
    for r in (0..even_r).step_by(2) {
        for c in (0..even_c).step_by(2) {
            // SAFETY: r + 1 < R and c + 1 < C: every access is in bounds.
            unsafe {
                let a = _mm_loadu_pd(m[r].as_ptr().add(c));
                let b = _mm_loadu_pd(m[r + 1].as_ptr().add(c));
                _mm_storeu_pd(out[c].as_mut_ptr().add(r), _mm_unpacklo_pd(a, b));
                _mm_storeu_pd(out[c + 1].as_mut_ptr().add(r), _mm_unpackhi_pd(a, b));
            }
        }
    }
    for (r, row) in m.iter().enumerate() {
        for c in even_c..C {
            out[c][r] = row[c];
        }
    }
    for r in even_r..R {
        for c in 0..even_c {
            out[c][r] = m[r][c];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_hold_rows_component_major() {
        let rows: [[f64; 3]; LANES] = std::array::from_fn(|l| [l as f64, 10.0 + l as f64, 20.0 + l as f64]);
        let mut s = LaneArray::from_rows(&rows);
        assert_eq!(s.0[1], [10.0, 11.0, 12.0, 13.0]);
        assert_eq!(s.rows(), rows);
        let view = s.lane(3);
        assert_eq!((view[0], view[2]), (3.0, 23.0));
        assert_eq!([view[0], view[1], view[2]], [3.0, 13.0, 23.0]);
        let mut m = s.lane_mut(1);
        m[1] += 0.5;
        m[2] = -1.0;
        assert_eq!(s.rows()[1], [1.0, 11.5, -1.0]);
        assert_eq!(s.rows()[0], [0.0, 10.0, 20.0]);
    }

    /// Rows of `D` components through staging and back, with every value
    /// distinct, so a misplaced one shows.
    fn round_trip<T: Scalar + std::fmt::Debug, const D: usize>(value: impl Fn(usize) -> T) {
        let rows: [[T; D]; LANES] = std::array::from_fn(|l| std::array::from_fn(|c| value(c * LANES + l)));
        let s = LaneArray::<T, D>::from_rows(&rows);
        for (c, col) in s.0.iter().enumerate() {
            assert_eq!(
                *col,
                std::array::from_fn(|l| value(c * LANES + l)),
                "D = {D}, component {c}"
            );
        }
        assert_eq!(s.rows(), rows, "D = {D}");
        assert_eq!(
            LaneArray::<T, D>::zero_rows(),
            LaneArray::<T, D>::zero().rows(),
            "D = {D}"
        );
    }

    #[test]
    fn rows_go_through_staging_and_back_for_every_width() {
        // f64 takes the SSE2 transposition on x86-64 (pairs of components,
        // then a last odd one); the other types take the plain loops.
        let f = |i: usize| i as f64 + 0.25;
        round_trip::<f64, 0>(f);
        round_trip::<f64, 1>(f);
        round_trip::<f64, 2>(f);
        round_trip::<f64, 3>(f);
        round_trip::<f64, 4>(f);
        round_trip::<f64, 5>(f);
        round_trip::<f64, 8>(f);
        round_trip::<f32, 3>(|i| i as f32 - 0.5);
        round_trip::<i32, 4>(|i| i as i32 - 7);
        round_trip::<u32, 1>(|i| i as u32 * 3);
    }

    #[test]
    fn scalar_lanes_deref_to_their_value() {
        let mut s = LaneScalar::<i32>::from_rows(&[0, 0, 7, 0]);
        *s.lane_mut(1) += 3;
        assert_eq!((*s.lane(2), s.rows()), (7, [0, 3, 7, 0]));
    }

    #[test]
    fn empty_staging_has_lanes_with_nothing_in_them() {
        let mut s = LaneArray::<f64, 0>::zero();
        let _ = s.lane_mut(2);
        assert!(std::panic::catch_unwind(|| s.lane(1)[0]).is_err());
        assert!(std::panic::catch_unwind(|| *s.lane(3)).is_err());
    }

    #[test]
    fn a_component_past_the_end_panics_as_an_array_does() {
        let s = LaneArray::<f32, 2>::zero();
        let caught = std::panic::catch_unwind(|| s.lane(0)[2]).unwrap_err();
        let message = caught.downcast_ref::<String>().unwrap();
        assert_eq!(message, "index out of bounds: the len is 2 but the index is 2");
        let past = std::panic::catch_unwind(|| {
            s.lane(LANES);
        });
        assert!(past.is_err());
    }
}
