use std::fmt::Debug;
use std::ops::Add;

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
    /// The Rust name (`f64`, ...).
    pub const fn rust_name(self) -> &'static str {
        match self {
            ScalarType::F64 => "f64",
            ScalarType::F32 => "f32",
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::U32 => "u32",
        }
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
    Copy + Default + Debug + PartialOrd + Add<Output = Self> + Send + Sync + 'static + sealed::Sealed
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
