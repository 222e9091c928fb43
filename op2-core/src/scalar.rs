//! The element types of op2 data as Rust types: the sealed `Scalar` trait,
//! implemented for `f64`, `f32`, `i32`, `i64` and `u32`, ties each to its
//! runtime tag `ScalarType` (from op2-kernel-abi) and gives the identities
//! and combinations that reductions and staging use.

use std::fmt::Debug;
use std::ops::Add;

use op2_kernel_abi::ScalarType;

/// A scalar element type of op2 data. Sealed: implemented for `f64`, `f32`, `i32`,
/// `i64` and `u32`.
pub trait Scalar:
    Copy + Default + Debug + PartialOrd + Add<Output = Self> + bytemuck::Pod + Send + Sync + 'static + sealed::Sealed
{
    /// The runtime tag of this type.
    const TYPE: ScalarType;
    /// The additive identity.
    const ZERO: Self;
    /// The smaller of two values (IEEE `fmin` for floats: a NaN loses).
    fn min_of(self, other: Self) -> Self;
    /// The larger of two values (IEEE `fmax` for floats: a NaN loses).
    fn max_of(self, other: Self) -> Self;
}

/// Runs `$body` with `$t` the Rust type that the run-time tag `$scalar`
/// (a [`ScalarType`]) names: the bridge from data whose type is known only
/// at run time (a model's variables, a file's tables) to generic code.
///
/// ```
/// use op2_core::{with_scalar, Scalar, ScalarType};
/// let size = with_scalar!(ScalarType::F32, T => std::mem::size_of::<T>());
/// assert_eq!(size, 4);
/// ```
#[macro_export]
macro_rules! with_scalar {
    ($scalar:expr, $t:ident => $body:expr) => {
        match $scalar {
            $crate::ScalarType::F64 => {
                type $t = f64;
                $body
            }
            $crate::ScalarType::F32 => {
                type $t = f32;
                $body
            }
            $crate::ScalarType::I32 => {
                type $t = i32;
                $body
            }
            $crate::ScalarType::I64 => {
                type $t = i64;
                $body
            }
            $crate::ScalarType::U32 => {
                type $t = u32;
                $body
            }
        }
    };
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! float_scalar {
    ($t:ty, $tag:ident) => {
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const TYPE: ScalarType = ScalarType::$tag;
            const ZERO: Self = 0.0;
            #[inline(always)]
            fn min_of(self, other: Self) -> Self {
                self.min(other)
            }
            #[inline(always)]
            fn max_of(self, other: Self) -> Self {
                self.max(other)
            }
        }
    };
}

macro_rules! int_scalar {
    ($t:ty, $tag:ident) => {
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const TYPE: ScalarType = ScalarType::$tag;
            const ZERO: Self = 0;
            #[inline(always)]
            fn min_of(self, other: Self) -> Self {
                Ord::min(self, other)
            }
            #[inline(always)]
            fn max_of(self, other: Self) -> Self {
                Ord::max(self, other)
            }
        }
    };
}

float_scalar!(f64, F64);
float_scalar!(f32, F32);
int_scalar!(i32, I32);
int_scalar!(i64, I64);
int_scalar!(u32, U32);
