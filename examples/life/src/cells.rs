//! The plaintext `.cells` format: one line per row of the pattern, `.` a dead
//! cell and `O` a live one; lines starting with `!` are comments. A line may
//! be shorter than the widest, its missing cells dead; an empty line is a row
//! of dead cells, except after the last non-empty row, where empty lines are
//! only the end of the file.

use std::path::Path;

use op2_core::Result;

use crate::input::input_error;
use crate::pattern::{check_size, Pattern};

impl Pattern {
    /// Parses a `.cells` pattern held in `text`; errors name it `origin`.
    ///
    /// The pattern is as wide as the longest row and as high as the rows up
    /// to the last non-empty one.
    ///
    /// # Errors
    ///
    /// [`op2_core::Error::InputFile`] at the first line with a character
    /// other than `.` and `O` (outside comments), naming its column, or at
    /// the line where the rectangle grows past [`crate::MAX_CELLS`].
    pub fn parse_cells(text: &str, origin: impl AsRef<Path>) -> Result<Pattern> {
        let path = origin.as_ref();
        let (mut width, mut height) = (0, 0);
        // Empty lines not yet followed by a row: dead rows, or the file's end.
        let mut empty_rows = 0;
        let mut alive = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let n = index + 1;
            if line.starts_with('!') {
                continue;
            }
            if line.is_empty() {
                empty_rows += 1;
                continue;
            }
            let y = height + empty_rows;
            empty_rows = 0;
            let mut row_width = 0;
            for (x, c) in line.chars().enumerate() {
                match c {
                    '.' => {}
                    'O' => alive.push((x, y)),
                    other => {
                        let reason = format!("column {}: expected `.` (dead) or `O` (alive), found {other:?}", x + 1);
                        return Err(input_error(path, n, reason));
                    }
                }
                row_width = x + 1;
            }
            width = width.max(row_width);
            height = y + 1;
            check_size(width, height).map_err(|reason| input_error(path, n, reason))?;
        }
        Ok(Pattern::from_parts(width, height, alive))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Pattern> {
        Pattern::parse_cells(text, "p.cells")
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn comments_are_skipped_and_short_lines_padded_with_dead_cells() {
        let p = parse("!Name: Glider\n!A comment line\n.O\n..O\nOOO\n").unwrap();
        assert_eq!((p.width(), p.height()), (3, 3));
        assert_eq!(p.alive(), [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]);
    }

    #[test]
    fn empty_lines_are_dead_rows_except_at_the_end() {
        let p = parse("\nO\n!comment between rows\n\n.O\n\n\n").unwrap();
        assert_eq!((p.width(), p.height()), (2, 4));
        assert_eq!(p.alive(), [(0, 1), (1, 3)]);
    }

    #[test]
    fn rows_of_dead_cells_keep_their_size() {
        let p = parse("...\n...\r\n").unwrap();
        assert_eq!((p.width(), p.height()), (3, 2));
        assert!(p.alive().is_empty());
    }

    #[test]
    fn an_input_without_rows_is_an_empty_pattern() {
        for text in ["", "!only a comment\n", "\n\n"] {
            let p = parse(text).unwrap();
            assert_eq!((p.width(), p.height(), p.alive().len()), (0, 0, 0), "{text:?}");
        }
    }

    #[test]
    fn other_characters_name_their_line_and_column() {
        assert_eq!(
            error("!c\n.O.\n..x\n"),
            "p.cells:3: column 3: expected `.` (dead) or `O` (alive), found 'x'"
        );
        assert_eq!(
            error("OO \n"),
            "p.cells:1: column 3: expected `.` (dead) or `O` (alive), found ' '"
        );
        assert_eq!(
            error(".\t.\n"),
            "p.cells:1: column 2: expected `.` (dead) or `O` (alive), found '\\t'"
        );
        assert_eq!(
            error("o\n"),
            "p.cells:1: column 1: expected `.` (dead) or `O` (alive), found 'o'"
        );
        assert_eq!(
            error(".O\n.é\n"),
            "p.cells:2: column 2: expected `.` (dead) or `O` (alive), found 'é'"
        );
        assert_eq!(
            error(" !not a comment\n"),
            "p.cells:1: column 1: expected `.` (dead) or `O` (alive), found ' '"
        );
    }
}
