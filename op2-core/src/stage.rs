//! The `Stage` trait: a kernel-local copy of one argument, a scalar `T` or a `[T; D]`,
//! with the load, store, add, min and max that native backends need. Code made by
//! `par_loop!` gathers each argument into a `Stage`, calls the kernel on it and scatters
//! what the kernel may change. `DIM` is a constant, so gathers unroll.
use crate::Scalar;

/// A kernel-local staging value for one argument: a scalar `T` (dim 1) or `[T; D]`.
///
/// Native backends gather each argument into a `Stage`, call the kernel with a
/// reference to it and scatter what the kernel may change
/// (docs/ARCHITECTURE.md, Semantics every backend shares).
/// The stride of the data is `DIM`, a compile-time constant, so gathers unroll.
///
/// # Safety
/// `DIM` must be the number of `T` values `load`/`store` touch.
#[diagnostic::on_unimplemented(
    message = "kernel parameter type `{Self}` does not fit data holding `{T}`",
    label = "the Dat or Global here holds `{T}`",
    note = "a kernel parameter for data of `{T}` must be `&{T}`, `&[{T}; D]` or, through a whole map, `&[[{T}; D]; A]`, or through a ragged map `&[{T}]` / `&[[{T}; D]]` (with `&mut` for anything but READ)"
)]
pub unsafe trait Stage<T: Scalar>: Copy {
    /// Number of values.
    const DIM: usize;
    /// All components zero.
    fn zero() -> Self;
    /// Reads `DIM` values from `src`.
    ///
    /// # Safety
    /// `src` must be valid for reading `DIM` values.
    unsafe fn load(src: *const T) -> Self;
    /// Writes `DIM` values to `dst`.
    ///
    /// # Safety
    /// `dst` must be valid for writing `DIM` values, with no other live reference.
    unsafe fn store(&self, dst: *mut T);
    /// Adds the components to `dst`.
    ///
    /// # Safety
    /// As for [`Stage::store`].
    unsafe fn add_to(&self, dst: *mut T);
    /// Replaces `dst` by the component-wise minimum.
    ///
    /// # Safety
    /// As for [`Stage::store`].
    unsafe fn min_to(&self, dst: *mut T);
    /// Replaces `dst` by the component-wise maximum.
    ///
    /// # Safety
    /// As for [`Stage::store`].
    unsafe fn max_to(&self, dst: *mut T);
}

macro_rules! scalar_stage {
    ($($t:ty),*) => {$(
        // SAFETY: a scalar stage loads and stores exactly one value.
        unsafe impl Stage<$t> for $t {
            const DIM: usize = 1;
            #[inline(always)]
            fn zero() -> Self {
                <$t as Scalar>::ZERO
            }
            #[inline(always)]
            unsafe fn load(src: *const $t) -> Self {
                *src
            }
            #[inline(always)]
            unsafe fn store(&self, dst: *mut $t) {
                *dst = *self;
            }
            #[inline(always)]
            unsafe fn add_to(&self, dst: *mut $t) {
                *dst += *self;
            }
            #[inline(always)]
            unsafe fn min_to(&self, dst: *mut $t) {
                *dst = (*dst).min_of(*self);
            }
            #[inline(always)]
            unsafe fn max_to(&self, dst: *mut $t) {
                *dst = (*dst).max_of(*self);
            }
        }
    )*};
}

scalar_stage!(f64, f32, i32, i64, u32);

// SAFETY: an array stage loads and stores exactly its D values.
unsafe impl<T: Scalar, const D: usize> Stage<T> for [T; D] {
    const DIM: usize = D;
    #[inline(always)]
    fn zero() -> Self {
        [T::ZERO; D]
    }
    #[inline(always)]
    unsafe fn load(src: *const T) -> Self {
        std::ptr::read(src as *const [T; D])
    }
    #[inline(always)]
    unsafe fn store(&self, dst: *mut T) {
        std::ptr::write(dst as *mut [T; D], *self);
    }
    #[inline(always)]
    unsafe fn add_to(&self, dst: *mut T) {
        for (k, v) in self.iter().enumerate() {
            *dst.add(k) = *dst.add(k) + *v;
        }
    }
    #[inline(always)]
    unsafe fn min_to(&self, dst: *mut T) {
        for (k, v) in self.iter().enumerate() {
            *dst.add(k) = (*dst.add(k)).min_of(*v);
        }
    }
    #[inline(always)]
    unsafe fn max_to(&self, dst: *mut T) {
        for (k, v) in self.iter().enumerate() {
            *dst.add(k) = (*dst.add(k)).max_of(*v);
        }
    }
}
