//! The flags by which a kernel decides births and deaths (`life(FATE)` in
//! `par_loop!`). The Rust original is `op2_core::Fate`
//! (`op2-core/src/lifecycle.rs`), which sets them; the translated kernel
//! sets the same bits in C (`translate/fate.rs` of op2-macros).

/// The flag a kernel sets to kill its agent.
pub const FATE_DIES: i32 = 1;
/// The flag a kernel sets to have one child.
pub const FATE_SPAWNS: i32 = 2;
