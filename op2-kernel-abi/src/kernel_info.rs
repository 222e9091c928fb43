//! What `#[op2::kernel]` records about a kernel function and `par_loop!`
//! checks its arguments against: each parameter's type, shape and
//! mutability (`ParamInfo`), the C translation, and what that translation
//! uses (`KernelUses`), which tells the code generators what to define
//! around it. The `Kernel` trait carries the record on a type named like the
//! function.

use crate::{Access, NearKind, ScalarType, GRID_PARAMS};

/// The shape of a kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamForm {
    /// `&T` / `&mut T`: dim 1.
    Scalar,
    /// `&[T; D]` / `&mut [T; D]`.
    Array,
    /// `&[[T; D]; A]` / `&mut [[T; D]; A]`: all `A` entries of a map.
    Table {
        /// Map entries (the map's arity).
        arity: usize,
    },
    /// `&[T]` / `&[[T; D]]` (`&mut` for INC): the targets of a ragged map,
    /// as many as the element has.
    Ragged {
        /// Written `&[[T; D]]` (true) rather than `&[T]` (false).
        nested: bool,
    },
}

/// One kernel parameter, as `#[op2::kernel]` recorded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// Parameter name.
    pub name: &'static str,
    /// Element type.
    pub scalar: ScalarType,
    /// Values per element (`D`; 1 for `&T`).
    pub dim: usize,
    /// Shape.
    pub form: ParamForm,
    /// `&mut` (true) or `&` (false).
    pub mutable: bool,
    /// One of the two hidden parameters a `&mut Philox` kernel parameter
    /// becomes (the element's global id, then the seed and loop counter):
    /// the loop argument is random streams, `s(DRAW)`.
    pub random: bool,
    /// One of the two hidden parameters a `Spatial2d`/`Spatial3d`/
    /// `Discrete2d` kernel parameter becomes (the bins' offsets, then the
    /// grid): which of the three; `None` for every other parameter. The
    /// loop argument is a spatial message list, `list(NEAR)`.
    pub near: Option<NearKind>,
    /// The hidden parameter a `&mut Fate` kernel parameter becomes (the
    /// agent's flags, `&mut i32`): the loop argument is a
    /// `Lifecycle`, `life(FATE)`.
    pub fate: bool,
}

impl ParamInfo {
    /// A `&T` / `&mut T` parameter of element type `scalar`.
    pub const fn scalar(name: &'static str, scalar: ScalarType, mutable: bool) -> ParamInfo {
        ParamInfo {
            name,
            scalar,
            dim: 1,
            form: ParamForm::Scalar,
            mutable,
            random: false,
            near: None,
            fate: false,
        }
    }

    /// A `&[T; D]` / `&mut [T; D]` parameter (`scalar` is `T`, `dim` is
    /// `D`).
    pub const fn array(name: &'static str, scalar: ScalarType, dim: usize, mutable: bool) -> ParamInfo {
        ParamInfo {
            name,
            scalar,
            dim,
            form: ParamForm::Array,
            mutable,
            random: false,
            near: None,
            fate: false,
        }
    }

    /// A `&[[T; D]; A]` / `&mut [[T; D]; A]` parameter (`scalar` is `T`,
    /// `dim` is `D`, `arity` is `A`).
    pub const fn table(name: &'static str, scalar: ScalarType, dim: usize, arity: usize, mutable: bool) -> ParamInfo {
        ParamInfo {
            name,
            scalar,
            dim,
            form: ParamForm::Table { arity },
            mutable,
            random: false,
            near: None,
            fate: false,
        }
    }

    /// A `&[T]` (`nested` false, `dim` 1) or `&[[T; D]]` parameter
    /// (`dim` is `D`), `&mut` for INC: the targets of a ragged map.
    pub const fn ragged(name: &'static str, scalar: ScalarType, dim: usize, mutable: bool, nested: bool) -> ParamInfo {
        ParamInfo {
            name,
            scalar,
            dim,
            form: ParamForm::Ragged { nested },
            mutable,
            random: false,
            near: None,
            fate: false,
        }
    }

    /// The first hidden parameter of a `&mut Philox` parameter `name`: the
    /// element's global id (`&i64`, from the random streams' id Dat).
    pub const fn random_id(name: &'static str) -> ParamInfo {
        ParamInfo {
            random: true,
            ..ParamInfo::scalar(name, ScalarType::I64, false)
        }
    }

    /// The second hidden parameter of a `&mut Philox` parameter `name`: the
    /// streams' seed and the loop's counter (`&[i64; 2]`, a READ Global).
    pub const fn random_key(name: &'static str) -> ParamInfo {
        ParamInfo {
            random: true,
            ..ParamInfo::array(name, ScalarType::I64, 2, false)
        }
    }

    /// The hidden parameter of a `&mut Fate` parameter `name`: the agent's
    /// flags (`&mut i32`, a direct WRITE of the lifecycle's fates).
    pub const fn fate(name: &'static str) -> ParamInfo {
        ParamInfo {
            fate: true,
            ..ParamInfo::scalar(name, ScalarType::I32, true)
        }
    }

    /// The first hidden parameter of a `kind` parameter `name`: the bins'
    /// offsets (`&[i32]`, read whole).
    pub const fn near_bins(name: &'static str, kind: NearKind) -> ParamInfo {
        ParamInfo {
            near: Some(kind),
            ..ParamInfo::ragged(name, ScalarType::I32, 1, false, false)
        }
    }

    /// The second hidden parameter of a `kind` parameter `name`: the grid
    /// (`&[f64; 8]`, a READ Global).
    pub const fn near_grid(name: &'static str, kind: NearKind) -> ParamInfo {
        ParamInfo {
            near: Some(kind),
            ..ParamInfo::array(name, ScalarType::F64, GRID_PARAMS, false)
        }
    }

    /// The Rust type of the parameter, for messages (`&mut [f64; 4]`).
    pub fn rust_type(&self) -> String {
        if self.fate {
            return "&mut Fate".to_string();
        }
        if self.random {
            return "&mut Philox".to_string();
        }
        if let Some(kind) = self.near {
            return format!("&{}", kind.type_name());
        }
        let m = if self.mutable { "&mut " } else { "&" };
        let t = self.scalar.rust_name();
        match self.form {
            ParamForm::Scalar => format!("{m}{t}"),
            ParamForm::Array => format!("{m}[{t}; {}]", self.dim),
            ParamForm::Table { arity } => format!("{m}[[{t}; {}]; {arity}]", self.dim),
            ParamForm::Ragged { nested: false } => format!("{m}[{t}]"),
            ParamForm::Ragged { nested: true } => format!("{m}[[{t}; {}]]", self.dim),
        }
    }
}

/// What `#[op2::kernel]` records about a kernel function.
#[derive(Clone, Copy, Debug)]
pub struct KernelInfo {
    /// The function's name (also the loop's name in timings and errors).
    pub name: &'static str,
    /// Its parameters, in order.
    pub params: &'static [ParamInfo],
    /// The kernel translated to C: `void op2_kernel_<name>(...) { ... }`
    /// (single-precision math as C99 `sqrtf` etc., integer min/max/abs as
    /// `op2_min_i32`-style helpers the backend's prelude defines).
    pub c_source: &'static str,
    /// What `c_source` uses from the code around it.
    pub uses: KernelUses,
}

/// What a kernel's C translation needs the code around it to define,
/// recorded by `#[op2::kernel]` while it translates, so that the code
/// generators define exactly that without reading the C.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelUses {
    /// It makes random streams (`Philox::new`): the generator
    /// (`op2_philox_new` and its draws) must precede it.
    pub random_streams: bool,
    /// It walks a spatial message list: the bins' search
    /// (`op2_spatial_new` and its iterators) must precede it.
    pub spatial_queries: bool,
    /// Parameters whose dim is written as a named constant: the kernel
    /// reads it as [`dim_macro`](crate::c_interface::dim_macro).
    pub named_dims: &'static [&'static str],
    /// Parameters whose arity is written as a named constant: the kernel
    /// reads it as [`arity_macro`](crate::c_interface::arity_macro).
    pub named_arities: &'static [&'static str],
    /// Slice parameters, whose `j`th element's index the kernel reads as
    /// [`targets_macro`](crate::c_interface::targets_macro).
    pub slices: &'static [&'static str],
    /// It is marked `#[op2::kernel(portable_math)]`: its math calls are
    /// op2's own functions (`op2_pm_*`, [`PORTABLE_MATH_C`](crate::PORTABLE_MATH_C)),
    /// which must precede it, and its code must not contract `a * b + c`.
    pub portable_math: bool,
}

impl KernelUses {
    /// A kernel that needs nothing defined around it.
    pub const NOTHING: KernelUses = KernelUses {
        random_streams: false,
        spatial_queries: false,
        named_dims: &[],
        named_arities: &[],
        slices: &[],
        portable_math: false,
    };
}

/// Implemented by `#[op2::kernel]` on a type named like the kernel function.
///
/// # Safety
/// `INFO` must describe the function's real signature: the native backends
/// trust it for strides and arities.
pub unsafe trait Kernel {
    /// The kernel's metadata.
    const INFO: KernelInfo;
    /// The kernel's function-pointer type. `par_loop!` coerces the function it
    /// calls to this type, so the metadata and the function called always
    /// belong to the same signature, whatever the imports in scope.
    #[doc(hidden)]
    type Fn: Copy;
}

/// How an argument is written in `par_loop!`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgForm {
    /// `d(ACCESS)`: a direct Dat or a Global.
    Direct,
    /// `d(ACCESS, m[i])`.
    MapEntry,
    /// `d(ACCESS, m)`.
    MapAll,
    /// `d(ACCESS, r[..])`: all targets of a ragged map, or every message of
    /// a message list.
    Ragged,
    /// `s(DRAW)`: random streams, for a `&mut Philox` parameter (checked
    /// at the first of its two hidden parameters).
    Draw,
    /// `list(NEAR)`: a spatial message list, for a `Spatial2d`/`Spatial3d`
    /// parameter (checked at the first of its two hidden parameters).
    Near,
    /// `life(FATE)`: births and deaths, for a `&mut Fate` parameter.
    Fate,
}

impl KernelInfo {
    /// Compile-time check of the number of arguments (used by `par_loop!` in a
    /// `const` item, so a mismatch is a compile error at the call).
    #[doc(hidden)]
    pub const fn check_count(&self, count: usize) {
        if count < self.params.len() {
            panic!("par_loop!: fewer arguments than the kernel has parameters");
        }
        if count > self.params.len() {
            panic!("par_loop!: more arguments than the kernel has parameters");
        }
    }

    /// Compile-time check of one argument's form and access against the
    /// kernel parameter at `index`.
    #[doc(hidden)]
    pub const fn check_arg(&self, index: usize, form: ArgForm, access: Access) {
        if index >= self.params.len() {
            return; // reported by check_count
        }
        let p = &self.params[index];
        match (form, p.near.is_some()) {
            (ArgForm::Near, false) => {
                panic!("par_loop!: a spatial message list `list(NEAR)` needs a `&Spatial2d`, `&Spatial3d` or `&Discrete2d` kernel parameter")
            }
            (ArgForm::Near, true) => return,
            (_, true) => panic!(
                "par_loop!: a `&Spatial2d`/`&Spatial3d`/`&Discrete2d` kernel parameter reads a spatial message list: pass it as `list(NEAR)`"
            ),
            (_, false) => {}
        }
        match (form, p.fate) {
            (ArgForm::Fate, false) => {
                panic!("par_loop!: births and deaths `life(FATE)` need a `&mut Fate` kernel parameter")
            }
            (ArgForm::Fate, true) => return,
            (_, true) => panic!(
                "par_loop!: a `&mut Fate` kernel parameter decides births and deaths: pass an `op2::Lifecycle` as `life(FATE)`"
            ),
            (_, false) => {}
        }
        match (form, p.random) {
            (ArgForm::Draw, false) => {
                panic!("par_loop!: random streams `s(DRAW)` need a `&mut Philox` kernel parameter")
            }
            (ArgForm::Draw, true) => return,
            (_, true) => panic!(
                "par_loop!: a `&mut Philox` kernel parameter draws from random streams: pass an `op2::RandomStreams` as `s(DRAW)`"
            ),
            (_, false) => {}
        }
        match (access, p.mutable) {
            (Access::Read, true) => {
                panic!("par_loop!: a READ argument needs a `&` kernel parameter, not `&mut`; make the parameter `&`, or pass the argument as WRITE, RW, INC, MIN or MAX")
            }
            (Access::Read, false) => {}
            (_, false) => panic!(
                "par_loop!: a WRITE, RW, INC, MIN or MAX argument needs a `&mut` kernel parameter; make the parameter `&mut`, or pass the argument as READ"
            ),
            (_, true) => {}
        }
        let table = matches!(p.form, ParamForm::Table { .. });
        let ragged = matches!(p.form, ParamForm::Ragged { .. });
        match form {
            ArgForm::Direct | ArgForm::MapEntry => {
                if table {
                    panic!("par_loop!: a direct or `m[i]` argument needs a `&T` or `&[T; D]` kernel parameter; `&[[T; D]; A]` is for a whole map: `d(ACCESS, m)`")
                }
                if ragged {
                    panic!("par_loop!: a direct or `m[i]` argument needs a `&T` or `&[T; D]` kernel parameter; a slice `&[T]` is for a ragged map: `d(ACCESS, r[..])`")
                }
            }
            ArgForm::MapAll => {
                if !table {
                    panic!("par_loop!: a whole-map argument `d(ACCESS, m)` needs a `&[[T; D]; A]` kernel parameter; for one entry write `d(ACCESS, m[i])`, for a ragged map `d(ACCESS, r[..])`")
                }
            }
            ArgForm::Draw | ArgForm::Near | ArgForm::Fate => {}
            ArgForm::Ragged => {
                if !ragged {
                    panic!("par_loop!: a ragged-map argument `d(ACCESS, r[..])` needs a slice kernel parameter: `&[T]` or `&[[T; D]]` (`&mut` for INC)")
                }
                if !matches!(access, Access::Read | Access::Inc) {
                    panic!("par_loop!: a ragged-map argument `d(ACCESS, r[..])` is READ or INC")
                }
            }
        }
    }
}
