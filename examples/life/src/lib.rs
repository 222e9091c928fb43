//! Conway's Game of Life (rule B3/S23) for op2: the model on op2's carriers
//! ([`Life`]: cells, the Moore neighbourhood as a map, double-buffered
//! state), the same step written by hand as the baselines ([`step_by_hand`];
//! [`step_by_hand_parallel`], its rows on rayon's threads), and the patterns
//! users bring.
//!
//! A [`Pattern`] is the live cells of a rectangle, read from the plaintext
//! `.cells` format ([`Pattern::parse_cells`]) or from RLE
//! ([`Pattern::parse_rle`]), or from a file by its extension
//! ([`Pattern::read`]), and written as `.cells` text ([`Pattern::to_cells`]).
//! A malformed file is an [`op2_core::Error::InputFile`] naming the file, the
//! line and what was expected there, never a panic.
//!
//! ```
//! use op2_life::Pattern;
//!
//! let glider = Pattern::parse_rle("x = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n", "glider.rle")?;
//! assert_eq!(glider.alive(), [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]);
//! assert_eq!(glider.to_cells(), ".O.\n..O\nOOO\n");
//! # Ok::<(), op2_core::Error>(())
//! ```
#![deny(missing_docs)]

mod cells;
mod input;
mod model;
mod pattern;
mod rle;

pub use model::{count_alive, life_rule, step_by_hand, step_by_hand_parallel, Life};
pub use pattern::{Pattern, MAX_CELLS};
