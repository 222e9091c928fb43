//! The spatial message lists a kernel may read (`list(NEAR)` in
//! `par_loop!`): the three parameter types and the grid a kernel receives
//! with them. The Rust original of the grid and its walk is
//! `op2-core/src/messages/grid.rs`; its C twin is `SPATIAL_C` of
//! op2-backends (`codegen/spatial_c.rs`), which repeats it operation for
//! operation.

/// The kernel parameter types that read a spatial message list
/// (`list(NEAR)` in `par_loop!`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NearKind {
    /// `&Spatial2d`: a 2-D grid, the 3 x 3 bins around a point.
    Spatial2d,
    /// `&Spatial3d`: a 3-D grid, the 3 x 3 x 3 bins around a point.
    Spatial3d,
    /// `&Discrete2d`: a discrete 2-D grid, the cells within a radius.
    Discrete2d,
}

impl NearKind {
    /// The parameter's type, as written in kernels.
    pub const fn type_name(self) -> &'static str {
        match self {
            NearKind::Spatial2d => "Spatial2d",
            NearKind::Spatial3d => "Spatial3d",
            NearKind::Discrete2d => "Discrete2d",
        }
    }

    /// What a list must be to reach the parameter, for messages.
    pub const fn list_kind(self) -> &'static str {
        match self {
            NearKind::Spatial2d => "a 2-D spatial list",
            NearKind::Spatial3d => "a 3-D spatial list",
            NearKind::Discrete2d => "a discrete 2-D list",
        }
    }
}

/// Number of `f64`s a kernel receives for the grid: minimum corner (3), the
/// inverse bin width, bins per axis (3), and 1.0 when wrapping.
pub const GRID_PARAMS: usize = 8;
