//! Names and scopes: the C name each Rust name gets (reserved words and
//! shadowed bindings are renamed) and what each name in scope is.

use std::collections::HashSet;

use op2_kernel_abi::c_interface;
use op2_kernel_abi::{c_float_name, c_math_functions};
use syn::Block;

use super::types::{ETy, Ty};
use super::Translator;

/// What a name in scope refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// `&T` / `&mut T` parameter: a C pointer read as `(*p)`.
    ParamScalar,
    /// `&[T; D]` or `&[[T; D]; A]` parameter: a C pointer indexed directly.
    ParamArray,
    /// `&[T]` or `&[[T; D]]` parameter, the targets of a ragged map: the
    /// whole Dat's data, indexed through the element's targets
    /// ([`Var::ragged`] holds their C names).
    ParamRagged,
    /// A local variable or array.
    Local,
    /// A `const` item.
    Const,
}

/// A name in scope: its Rust and C names, type and kind.
#[derive(Clone)]
pub(super) struct Var {
    pub(super) rust: String,
    pub(super) c: String,
    pub(super) ty: ETy,
    pub(super) kind: Kind,
    /// C text of each array length, outermost first (empty for scalars):
    /// what checked mode compares indices against.
    pub(super) dims: Vec<String>,
    /// For a ragged parameter: its targets and whether it is `&mut` (INC).
    pub(super) ragged: Option<Ragged>,
    /// For a local whose type comes from literals alone (`let mut acc =
    /// 0.0;`, `for i in 0..3`): its number among them, by which later uses
    /// fix its type as Rust's inference does (see `Translator::note`).
    pub(super) soft: Option<usize>,
}

/// The C side of a ragged parameter `c`: besides the Dat's data `c`, the
/// element's targets `<c>_targets` and their number `<c>_len` (also `dims[0]`
/// of its [`Var`]).
#[derive(Clone)]
pub(super) struct Ragged {
    /// The parameter's name, which names the wrapper's macro for target
    /// `j`'s index (`Translator::targets_macro`).
    pub(super) param: String,
    pub(super) targets: String,
    pub(super) len: String,
    /// `&[[T; D]]`: a target is a row of D values, `x[j]` a row pointer.
    pub(super) rows: bool,
    /// `&mut`: an INC argument, only added to.
    pub(super) mutable: bool,
}

/// Every identifier in the body, so fresh C names never collide with them.
pub(super) fn collect_idents(block: &Block, used: &mut HashSet<String>) {
    struct V<'a>(&'a mut HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
            self.0.insert(i.to_string());
        }
    }
    syn::visit::Visit::visit_block(&mut V(used), block);
}

impl Translator {
    /// The wrapper's macro for target `j`'s index of slice parameter
    /// `param` (`targets[j]` through a ragged map, `j` for a Dat read
    /// whole), recorded as used.
    pub(super) fn targets_macro(&mut self, param: &str) -> String {
        if !self.uses.slices.iter().any(|p| p == param) {
            self.uses.slices.push(param.to_string());
        }
        c_interface::targets_macro(param)
    }

    /// A C name for a Rust name: the name itself, or `op2_name` for C, OpenCL
    /// and CUDA reserved words; a fresh variant when it shadows a live binding
    /// (C forbids redeclaring in one scope).
    pub(super) fn declare_name(&mut self, rust: &str) -> String {
        let base = if is_reserved(rust) || rust.starts_with("op2_") {
            format!("op2_{rust}")
        } else {
            rust.to_string()
        };
        let shadowing = self.scopes.iter().flatten().any(|v| v.rust == rust);
        if !shadowing && (base == rust || !self.used.contains(&base)) {
            self.used.insert(base.clone());
            base
        } else {
            self.fresh(&base)
        }
    }

    pub(super) fn fresh(&mut self, base: &str) -> String {
        let mut c = base.to_string();
        let mut k = 1;
        while self.used.contains(&c) {
            c = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(c.clone());
        c
    }

    pub(super) fn bind(&mut self, rust: &str, c: String, ty: ETy, kind: Kind) {
        self.bind_array(rust, c, ty, kind, Vec::new());
    }

    pub(super) fn bind_array(&mut self, rust: &str, c: String, ty: ETy, kind: Kind, dims: Vec<String>) {
        self.scopes.last_mut().expect("a scope").push(Var {
            rust: rust.to_string(),
            c,
            ty,
            kind,
            dims,
            ragged: None,
            soft: None,
        });
    }

    pub(super) fn bind_ragged(&mut self, rust: &str, c: String, ty: ETy, dims: Vec<String>, ragged: Ragged) {
        self.scopes.last_mut().expect("a scope").push(Var {
            rust: rust.to_string(),
            c,
            ty,
            kind: Kind::ParamRagged,
            dims,
            ragged: Some(ragged),
            soft: None,
        });
    }

    /// Binds a scalar local whose type literals gave: soft local `k`.
    pub(super) fn bind_soft(&mut self, rust: &str, c: String, ty: Ty, k: usize) {
        self.scopes.last_mut().expect("a scope").push(Var {
            rust: rust.to_string(),
            c,
            ty: ETy::Scalar(ty),
            kind: Kind::Local,
            dims: Vec::new(),
            ragged: None,
            soft: Some(k),
        });
    }

    pub(super) fn lookup(&self, rust: &str) -> Option<&Var> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|v| v.rust == rust)
    }
}

/// Identifiers that are keywords or built-in names in C, OpenCL C, C++ or CUDA (or
/// names the generated code uses), and so are renamed when a kernel uses them.
const RESERVED: &[&str] = &[
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
    // OpenCL and CUDA built-in overloads (C math functions: see `is_reserved`)
    "abs",
    "min",
    "max",
    "clamp",
];

/// Whether `name` must be renamed in C: a keyword or built-in name, or a C
/// math function that translated kernels may call (`double` and `float`
/// spellings).
fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name) || c_math_functions().any(|c| name == c || name == c_float_name(c))
}
