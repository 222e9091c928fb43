//! The kernel language's scalar types: the element types of data
//! (`ScalarType`: what Dats, Globals and kernel parameters hold) and the
//! wider set a kernel body may use locally (`KernelScalar`), each with its
//! Rust and C spelling. The macro checks kernels against this table and the
//! code generators spell types from it, so the two cannot drift apart.

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

/// A scalar type a translated kernel may use: the data types
/// ([`ScalarType`]) and the ones kernels may only use locally (`u64`,
/// `usize`, `isize`, `bool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelScalar {
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
    /// `u64`
    U64,
    /// `usize`
    Usize,
    /// `isize`
    Isize,
    /// `bool`
    Bool,
}

impl KernelScalar {
    /// Every kernel scalar type, data types first.
    pub const ALL: [KernelScalar; 9] = [
        KernelScalar::F64,
        KernelScalar::F32,
        KernelScalar::I32,
        KernelScalar::I64,
        KernelScalar::U32,
        KernelScalar::U64,
        KernelScalar::Usize,
        KernelScalar::Isize,
        KernelScalar::Bool,
    ];

    /// The kernel type of a data type.
    pub const fn of(t: ScalarType) -> KernelScalar {
        match t {
            ScalarType::F64 => KernelScalar::F64,
            ScalarType::F32 => KernelScalar::F32,
            ScalarType::I32 => KernelScalar::I32,
            ScalarType::I64 => KernelScalar::I64,
            ScalarType::U32 => KernelScalar::U32,
        }
    }

    /// The data type this is, if Dats and Globals may hold it.
    pub fn data_type(self) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|&t| KernelScalar::of(t) == self)
    }

    /// The Rust name (`f64`, ...).
    pub const fn rust_name(self) -> &'static str {
        match self {
            KernelScalar::F64 => "f64",
            KernelScalar::F32 => "f32",
            KernelScalar::I32 => "i32",
            KernelScalar::I64 => "i64",
            KernelScalar::U32 => "u32",
            KernelScalar::U64 => "u64",
            KernelScalar::Usize => "usize",
            KernelScalar::Isize => "isize",
            KernelScalar::Bool => "bool",
        }
    }

    /// The type a Rust type name names.
    pub fn from_rust_name(name: &str) -> Option<KernelScalar> {
        KernelScalar::ALL.into_iter().find(|t| t.rust_name() == name)
    }

    /// The C spelling. LP64: `long` is 64-bit in C on Linux, in CUDA and in
    /// OpenCL, so it serves `i64` and `isize` everywhere; `bool` is an `int`.
    pub const fn c_name(self) -> &'static str {
        match self {
            KernelScalar::F64 => "double",
            KernelScalar::F32 => "float",
            KernelScalar::I32 | KernelScalar::Bool => "int",
            KernelScalar::I64 | KernelScalar::Isize => "long",
            KernelScalar::U32 => "unsigned int",
            KernelScalar::U64 | KernelScalar::Usize => "unsigned long",
        }
    }

    /// The suffix of the generated prelude's helpers (`op2_min_i32`): types
    /// of one C type share one helper.
    pub const fn helper_suffix(self) -> &'static str {
        match self {
            KernelScalar::I32 | KernelScalar::Bool => "i32",
            KernelScalar::I64 | KernelScalar::Isize => "i64",
            KernelScalar::U64 | KernelScalar::Usize => "u64",
            t => t.rust_name(),
        }
    }

    /// `f64` or `f32`.
    pub const fn is_float(self) -> bool {
        matches!(self, KernelScalar::F64 | KernelScalar::F32)
    }

    /// An integer type (`bool` is not one).
    pub const fn is_int(self) -> bool {
        !self.is_float() && !matches!(self, KernelScalar::Bool)
    }

    /// A signed integer type: one whose overflow C leaves undefined, so
    /// that generated code adds, subtracts, multiplies and negates it
    /// through the prelude's `op2_wrapping_*` helpers (Rust's release
    /// builds wrap).
    pub const fn is_signed_int(self) -> bool {
        matches!(self, KernelScalar::I32 | KernelScalar::I64 | KernelScalar::Isize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_types_round_trip() {
        for t in ScalarType::ALL {
            assert_eq!(KernelScalar::of(t).data_type(), Some(t));
            assert_eq!(KernelScalar::from_rust_name(t.rust_name()), Some(KernelScalar::of(t)));
        }
        assert_eq!(KernelScalar::Usize.data_type(), None);
    }
}
