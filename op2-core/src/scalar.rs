use std::fmt::Debug;
use std::ops::Add;

use crate::kernel_language::KernelScalar;

/// The element types a Dat, Global or kernel parameter may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `f64`
    F64,
    /// `f32`
    F32,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `u32`
    U32,
}

impl ScalarType {
    /// Every element type.
    pub const ALL: [ScalarType; 5] = [
        ScalarType::F64,
        ScalarType::F32,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::U32,
    ];

    /// The Rust name (`f64`, ...).
    pub const fn rust_name(self) -> &'static str {
        KernelScalar::of(self).rust_name()
    }

    /// The C spelling in generated code (`double`, ...).
    pub const fn c_name(self) -> &'static str {
        KernelScalar::of(self).c_name()
    }

    /// Size of one value in bytes.
    pub const fn size(self) -> usize {
        match self {
            ScalarType::F64 | ScalarType::I64 => 8,
            ScalarType::F32 | ScalarType::I32 | ScalarType::U32 => 4,
        }
    }
}

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
