//! The scalar types of translated kernels and their C spellings.

/// A scalar type in a translated kernel, or a literal whose type the context
/// has not fixed yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    F64,
    F32,
    I32,
    I64,
    U32,
    U64,
    Usize,
    Isize,
    Bool,
    /// An unsuffixed float literal: `f64` unless the context says `f32`.
    FloatLit,
    /// An unsuffixed integer literal: `i32` unless the context says otherwise.
    IntLit,
}

impl Ty {
    /// The type named by a Rust type identifier.
    pub fn from_rust(name: &str) -> Option<Ty> {
        Some(match name {
            "f64" => Ty::F64,
            "f32" => Ty::F32,
            "i32" => Ty::I32,
            "i64" => Ty::I64,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "usize" => Ty::Usize,
            "isize" => Ty::Isize,
            "bool" => Ty::Bool,
            _ => return None,
        })
    }

    /// The C spelling (LP64: `long` is 64-bit on Linux C, CUDA and OpenCL).
    pub fn c_name(self) -> &'static str {
        match self.concrete() {
            Ty::F64 => "double",
            Ty::F32 => "float",
            Ty::I32 => "int",
            Ty::I64 | Ty::Isize => "long",
            Ty::U32 => "unsigned int",
            Ty::U64 | Ty::Usize => "unsigned long",
            Ty::Bool => "int",
            Ty::FloatLit | Ty::IntLit => unreachable!("concrete() resolves literals"),
        }
    }

    /// Literals take their default type.
    pub fn concrete(self) -> Ty {
        match self {
            Ty::FloatLit => Ty::F64,
            Ty::IntLit => Ty::I32,
            t => t,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F64 | Ty::F32 | Ty::FloatLit)
    }

    pub fn is_int(self) -> bool {
        matches!(
            self,
            Ty::I32 | Ty::I64 | Ty::U32 | Ty::U64 | Ty::Usize | Ty::Isize | Ty::IntLit
        )
    }

    /// The type of a binary arithmetic expression of `self` and `other`: a
    /// concrete side fixes a literal one.
    pub fn unify(self, other: Ty) -> Ty {
        match (self, other) {
            (Ty::FloatLit | Ty::IntLit, t) if t != Ty::FloatLit && t != Ty::IntLit => t,
            (t, _) => t,
        }
    }

    /// Suffix of helper functions (`op2_min_i32`).
    pub fn helper_suffix(self) -> &'static str {
        match self.concrete() {
            Ty::F64 => "f64",
            Ty::F32 => "f32",
            Ty::I32 | Ty::Bool => "i32",
            Ty::I64 | Ty::Isize => "i64",
            Ty::U32 => "u32",
            Ty::U64 | Ty::Usize => "u64",
            Ty::FloatLit | Ty::IntLit => unreachable!(),
        }
    }
}

/// Identifiers that are keywords or built-in names in C, OpenCL C, C++ or CUDA (or
/// names the generated code uses), and so are renamed when a kernel uses them.
pub const RESERVED: &[&str] = &[
    // C
    "auto",
    "case",
    "char",
    "default",
    "do",
    "double",
    "float",
    "goto",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "short",
    "signed",
    "sizeof",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "bool",
    "NULL",
    "main",
    "errno",
    "INFINITY",
    "NAN",
    // OpenCL C
    "kernel",
    "global",
    "local",
    "constant",
    "private",
    "read_only",
    "write_only",
    "read_write",
    "half",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "event_t",
    "sampler_t",
    "image1d_t",
    "image2d_t",
    "image3d_t",
    "get_global_id",
    "get_local_id",
    "barrier",
    "vec_step",
    // C++ (NVRTC compiles CUDA C++)
    "new",
    "delete",
    "this",
    "class",
    "template",
    "typename",
    "namespace",
    "operator",
    "public",
    "protected",
    "friend",
    "virtual",
    "explicit",
    "mutable",
    "using",
    "throw",
    "try",
    "catch",
    "nullptr",
    "decltype",
    "constexpr",
    "noexcept",
    "alignof",
    "alignas",
    "thread_local",
    "export",
    "wchar_t",
    "char16_t",
    "char32_t",
    "and",
    "and_eq",
    "or",
    "or_eq",
    "not",
    "not_eq",
    "xor",
    "xor_eq",
    "bitand",
    "bitor",
    "compl",
    "static_cast",
    "const_cast",
    "dynamic_cast",
    "reinterpret_cast",
    "typeid",
    // CUDA
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "atomicAdd",
    // math functions the translation emits (and their relatives)
    "sqrt",
    "sqrtf",
    "fabs",
    "fabsf",
    "abs",
    "pow",
    "powf",
    "exp",
    "expf",
    "log",
    "logf",
    "log10",
    "log10f",
    "sin",
    "sinf",
    "cos",
    "cosf",
    "tan",
    "tanf",
    "atan2",
    "atan2f",
    "floor",
    "floorf",
    "ceil",
    "ceilf",
    "fmin",
    "fminf",
    "fmax",
    "fmaxf",
    "fma",
    "fmaf",
    "hypot",
    "hypotf",
    "tanh",
    "tanhf",
    "min",
    "max",
    "clamp",
];
