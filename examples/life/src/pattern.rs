//! A Game of Life pattern: the live cells of a rectangle, and its files.

use std::path::Path;

use op2_core::Result;

use crate::input::{input_error, read_text};

/// The most cells a pattern's rectangle may have: a board is an op2 Set, and
/// a Set holds at most `i32::MAX` elements (map entries are 32-bit).
pub const MAX_CELLS: usize = i32::MAX as usize;

/// The live cells of a `width` x `height` rectangle of Conway's Life.
///
/// A cell is `(x, y)`: `x` the column from 0 at the left, `y` the row from 0
/// at the top (y grows downwards, as files are written). Every live cell lies
/// inside the rectangle, and [`Pattern::alive`] lists each once in reading
/// order (by row, then by column), so two patterns are equal exactly when
/// their rectangles and live cells are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    width: usize,
    height: usize,
    alive: Vec<(usize, usize)>,
}

impl Pattern {
    /// The `width` x `height` rectangle whose live cells are those for which
    /// `is_alive(x, y)` is true, e.g. a board's state to be written with
    /// [`Pattern::to_cells`].
    pub fn from_fn(width: usize, height: usize, mut is_alive: impl FnMut(usize, usize) -> bool) -> Pattern {
        let mut alive = Vec::new();
        for y in 0..height {
            for x in 0..width {
                if is_alive(x, y) {
                    alive.push((x, y));
                }
            }
        }
        Pattern { width, height, alive }
    }

    /// A pattern from a reader, which produces the cells in reading order,
    /// each once and inside the rectangle.
    pub(crate) fn from_parts(width: usize, height: usize, alive: Vec<(usize, usize)>) -> Pattern {
        debug_assert!(alive.iter().all(|&(x, y)| x < width && y < height));
        debug_assert!(alive.windows(2).all(|w| (w[0].1, w[0].0) < (w[1].1, w[1].0)));
        Pattern { width, height, alive }
    }

    /// Reads the pattern file at `path`, in the format its extension names:
    /// `.cells` ([`Pattern::parse_cells`]) or `.rle` ([`Pattern::parse_rle`]),
    /// in any case.
    ///
    /// # Errors
    ///
    /// [`op2_core::Error::InputFile`]: at line 0 when the extension is
    /// neither or the file cannot be read; at the line of the first byte that
    /// is not UTF-8; otherwise as the format's parser says.
    pub fn read(path: impl AsRef<Path>) -> Result<Pattern> {
        let path = path.as_ref();
        let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("cells") => Pattern::parse_cells(&read_text(path)?, path),
            Some("rle") => Pattern::parse_rle(&read_text(path)?, path),
            other => {
                let found = match other {
                    Some(extension) => format!("the extension `.{extension}`"),
                    None => "a name without an extension".to_string(),
                };
                let reason = format!(
                    "cannot tell the pattern's format from {found}; expected a `.cells` (plaintext) or `.rle` file"
                );
                Err(input_error(path, 0, reason))
            }
        }
    }

    /// The rectangle's width in cells.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The rectangle's height in cells.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The live cells `(x, y)`, in reading order: by row, then by column.
    pub fn alive(&self) -> &[(usize, usize)] {
        &self.alive
    }

    /// Whether cell `(x, y)` is alive; cells outside the rectangle are dead.
    pub fn is_alive(&self, x: usize, y: usize) -> bool {
        self.alive.binary_search_by_key(&(y, x), |&(x, y)| (y, x)).is_ok()
    }

    /// The pattern as `.cells` text: exactly [`height`](Pattern::height)
    /// lines of [`width`](Pattern::width) characters, `O` alive and `.`
    /// dead, each ending in a newline, and no comments.
    ///
    /// [`Pattern::parse_cells`] reads it back as the same pattern, except
    /// for a rectangle without cells (0 wide or 0 high): its text is empty
    /// lines or nothing, which read back as a pattern 0 x 0.
    pub fn to_cells(&self) -> String {
        let mut text = String::with_capacity(self.width.saturating_add(1).saturating_mul(self.height));
        let mut alive = self.alive.iter().peekable();
        for y in 0..self.height {
            for x in 0..self.width {
                let live = alive.next_if(|&&cell| cell == (x, y)).is_some();
                text.push(if live { 'O' } else { '.' });
            }
            text.push('\n');
        }
        text
    }
}

/// Why a `width` x `height` rectangle cannot be a board, if it cannot.
pub(crate) fn check_size(width: usize, height: usize) -> Result<(), String> {
    match width.checked_mul(height) {
        Some(cells) if cells <= MAX_CELLS => Ok(()),
        _ => Err(format!(
            "a pattern {width} x {height} has more cells than a board can hold ({MAX_CELLS}, an op2 Set's limit)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_fn_lists_live_cells_in_reading_order() {
        let p = Pattern::from_fn(3, 2, |x, y| x != y);
        assert_eq!(p.alive(), [(1, 0), (2, 0), (0, 1), (2, 1)]);
        assert_eq!((p.width(), p.height()), (3, 2));
        assert!(p.is_alive(2, 1));
        assert!(!p.is_alive(1, 1));
        assert!(!p.is_alive(5, 0), "outside the rectangle is dead");
    }

    #[test]
    fn to_cells_writes_every_row_in_full() {
        let p = Pattern::from_fn(4, 3, |x, y| (x, y) == (1, 0) || (x, y) == (3, 2));
        assert_eq!(p.to_cells(), ".O..\n....\n...O\n");
        assert_eq!(Pattern::from_fn(0, 0, |_, _| true).to_cells(), "");
        assert_eq!(Pattern::from_fn(2, 1, |_, _| false).to_cells(), "..\n");
    }

    #[test]
    fn sizes_beyond_an_op2_set_are_refused() {
        assert!(check_size(46340, 46340).is_ok());
        assert!(check_size(0, usize::MAX).is_ok());
        assert_eq!(
            check_size(65536, 65536).unwrap_err(),
            "a pattern 65536 x 65536 has more cells than a board can hold (2147483647, an op2 Set's limit)"
        );
        assert!(check_size(usize::MAX, 2).is_err());
    }
}
