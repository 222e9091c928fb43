//! The RLE format: `#` comment lines, the header
//! `x = <width>, y = <height>[, rule = B3/S23]`, then the cells as runs: an
//! optional count (1 when absent) and a tag, `b` dead cells, `o` live cells,
//! `$` the end of a row (a count ends several), the whole ended by `!`. Runs
//! may be split across lines and spaces may separate them, but a count and
//! its tag are one item and are not split. Cells not written (the rest of a
//! row, rows never reached) are dead; text after `!` is ignored.

use std::path::Path;

use op2_core::{plural, Result};

use crate::input::{end_line, input_error, quoted};
use crate::pattern::{check_size, Pattern};

/// The header's form, for messages.
const HEADER: &str = "`x = <width>, y = <height>[, rule = B3/S23]`";

impl Pattern {
    /// Parses an RLE pattern held in `text`; errors name it `origin`.
    ///
    /// The pattern's rectangle is the header's `x` by `y`. The rule, when
    /// given, must be Conway's Life: `B3/S23` (or its older spelling `23/3`),
    /// in any case.
    ///
    /// # Errors
    ///
    /// [`op2_core::Error::InputFile`] at the first line that is wrong: a
    /// missing or malformed header, a width or height that is not a
    /// non-negative integer, a rectangle of more than [`crate::MAX_CELLS`]
    /// cells, another rule; a character that is not a count or a tag, a count
    /// of 0 or one not followed by its tag; a cell beyond the header's width
    /// or height; no `!` before the end of the file.
    pub fn parse_rle(text: &str, origin: impl AsRef<Path>) -> Result<Pattern> {
        let path = origin.as_ref();
        let mut lines = text.lines().enumerate().map(|(index, line)| (index + 1, line));
        let Some((n, header)) = lines.by_ref().find(|(_, line)| {
            let line = line.trim_start();
            !line.is_empty() && !line.starts_with('#')
        }) else {
            let reason = format!("expected the header {HEADER}, found the end of the file");
            return Err(input_error(path, end_line(text), reason));
        };
        let (width, height) = header_line(header).map_err(|reason| input_error(path, n, reason))?;
        let mut runs = Runs {
            width,
            height,
            x: 0,
            y: 0,
            alive: Vec::new(),
        };
        for (n, line) in lines {
            if runs.line(line).map_err(|reason| input_error(path, n, reason))? {
                return Ok(Pattern::from_parts(width, height, runs.alive));
            }
        }
        let reason = "expected `!` at the end of the pattern, found the end of the file";
        Err(input_error(path, end_line(text), reason))
    }
}

/// The header's width and height, or what is wrong with it.
fn header_line(line: &str) -> Result<(usize, usize), String> {
    let (mut width, mut height) = (None, None);
    for item in line.split(',') {
        let Some((key, value)) = item.split_once('=') else {
            return Err(format!("expected the header {HEADER}, found {}", quoted(line)));
        };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
        let slot = match key.as_str() {
            "x" => &mut width,
            "y" => &mut height,
            "rule" => {
                check_rule(value)?;
                continue;
            }
            _ => return Err(format!("unknown header item {}; expected {HEADER}", quoted(&key))),
        };
        if slot.is_some() {
            return Err(format!("the header gives `{key}` twice"));
        }
        let size = value
            .parse::<usize>()
            .map_err(|_| format!("the header's `{key} = {value}` is not a non-negative integer"))?;
        *slot = Some(size);
    }
    let (Some(width), Some(height)) = (width, height) else {
        let missing = if width.is_none() { "x" } else { "y" };
        return Err(format!("the header lacks `{missing} = ...`; expected {HEADER}"));
    };
    check_size(width, height)?;
    Ok((width, height))
}

/// Whether `rule` is Conway's Life, the one rule of this model.
fn check_rule(rule: &str) -> Result<(), String> {
    if rule.eq_ignore_ascii_case("B3/S23") || rule == "23/3" {
        Ok(())
    } else {
        Err(format!(
            "the rule {} is not supported; this model is Conway's Life, `B3/S23`",
            quoted(rule)
        ))
    }
}

/// Where the runs have got to, and the live cells so far.
struct Runs {
    width: usize,
    height: usize,
    x: usize,
    y: usize,
    alive: Vec<(usize, usize)>,
}

impl Runs {
    /// Reads one line of runs; true when it ends the pattern (`!`).
    fn line(&mut self, line: &str) -> Result<bool, String> {
        // The count being read, and the column where it started.
        let mut count: Option<(usize, usize)> = None;
        for (index, c) in line.chars().enumerate() {
            let column = index + 1;
            match (c, count) {
                ('0'..='9', _) => {
                    let (so_far, start) = count.unwrap_or((0, column));
                    let digit = c as usize - '0' as usize;
                    let value = so_far
                        .checked_mul(10)
                        .and_then(|v| v.checked_add(digit))
                        .ok_or_else(|| format!("column {start}: the run count is larger than {}", usize::MAX))?;
                    count = Some((value, start));
                }
                ('b' | 'o' | '$', _) => {
                    let (n, start) = match count.take() {
                        None => (1, column),
                        Some((0, start)) => return Err(format!("column {start}: a run count must be at least 1, found 0")),
                        Some(counted) => counted,
                    };
                    self.run(n, c, start)?;
                }
                (_, Some((n, start))) => {
                    return Err(format!(
                        "column {column}: expected `b`, `o` or `$` right after the run count {n} (column {start}), found {c:?}"
                    ));
                }
                ('!', None) => return Ok(true),
                (_, None) if c.is_whitespace() => {}
                (_, None) => {
                    return Err(format!(
                        "column {column}: expected a run (an optional count, then `b` dead, `o` alive or `$` end of row) or `!`, found {c:?}"
                    ))
                }
            }
        }
        if let Some((n, start)) = count {
            return Err(format!(
                "column {start}: the line ends after the run count {n}; expected `b`, `o` or `$` right after it"
            ));
        }
        Ok(false)
    }

    /// Applies the run `n` times `tag`, written from `column` on.
    fn run(&mut self, n: usize, tag: char, column: usize) -> Result<(), String> {
        // The run as written, for messages.
        let run = || {
            if n == 1 {
                format!("`{tag}`")
            } else {
                format!("`{n}{tag}`")
            }
        };
        if tag == '$' {
            self.y = self
                .y
                .checked_add(n)
                .ok_or_else(|| format!("column {column}: {} ends more rows than can be counted", run()))?;
            self.x = 0;
            return Ok(());
        }
        if self.y >= self.height {
            return Err(format!(
                "column {column}: {} falls in row {}, but the header's `y = {}` gives the pattern {}",
                run(),
                self.y.saturating_add(1),
                self.height,
                plural(self.height, "row", "rows")
            ));
        }
        let end = self.x.checked_add(n).filter(|&end| end <= self.width).ok_or_else(|| {
            format!(
                "column {column}: {} in row {} ends at cell {}, past the header's width `x = {}`",
                run(),
                self.y + 1,
                self.x.saturating_add(n),
                self.width
            )
        })?;
        if tag == 'o' {
            let y = self.y;
            self.alive.extend((self.x..end).map(|x| (x, y)));
        }
        self.x = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Pattern> {
        Pattern::parse_rle(text, "p.rle")
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn comments_header_and_runs_across_lines() {
        let text = "#N Glider\n#C A comment\n\nx = 3, y = 3, rule = B3/S23\nbo\n$2bo$\n3o!\n";
        let p = parse(text).unwrap();
        assert_eq!((p.width(), p.height()), (3, 3));
        assert_eq!(p.alive(), [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]);
    }

    #[test]
    fn the_rule_may_be_left_out_or_spelled_otherwise() {
        for header in [
            "x=3,y=1",
            "x = 3, y = 1, rule = b3/s23",
            "  x = 3 ,y = 1, rule = 23/3",
            "y = 1, x = 3",
            "X = 3, Y = 1",
        ] {
            let p = parse(&format!("{header}\n3o!\n")).unwrap();
            assert_eq!(p.alive(), [(0, 0), (1, 0), (2, 0)], "{header}");
        }
    }

    #[test]
    fn spaces_between_runs_counted_row_ends_and_text_after_the_end() {
        let p = parse("x = 4, y = 4\no 2b o 2$ 2o\n!\nanything at all, even 0o or x\n").unwrap();
        assert_eq!(p.alive(), [(0, 0), (3, 0), (0, 2), (1, 2)]);
        assert_eq!(p.to_cells(), "O..O\n....\nOO..\n....\n");
    }

    #[test]
    fn trailing_row_ends_and_an_empty_pattern_are_accepted() {
        assert_eq!(parse("x = 2, y = 2\n2o$$!").unwrap().alive(), [(0, 0), (1, 0)]);
        let empty = parse("x = 0, y = 0\n!").unwrap();
        assert_eq!((empty.width(), empty.height(), empty.alive().len()), (0, 0, 0));
    }

    #[test]
    fn a_missing_or_malformed_header_is_refused() {
        assert_eq!(
            error("#C only comments\n\n"),
            "p.rle:3: expected the header `x = <width>, y = <height>[, rule = B3/S23]`, found the end of the file"
        );
        assert_eq!(
            error("#N headless\nbo$2bo$3o!\n"),
            "p.rle:2: expected the header `x = <width>, y = <height>[, rule = B3/S23]`, found `bo$2bo$3o!`"
        );
        assert_eq!(
            error("x = 3\n3o!"),
            "p.rle:1: the header lacks `y = ...`; expected `x = <width>, y = <height>[, rule = B3/S23]`"
        );
        assert_eq!(
            error("y = 3\n3o!"),
            "p.rle:1: the header lacks `x = ...`; expected `x = <width>, y = <height>[, rule = B3/S23]`"
        );
        assert_eq!(
            error("x = 3, y = -1\n!"),
            "p.rle:1: the header's `y = -1` is not a non-negative integer"
        );
        assert_eq!(
            error("x = three, y = 1\n!"),
            "p.rle:1: the header's `x = three` is not a non-negative integer"
        );
        assert_eq!(error("x = 3, x = 4, y = 1\n!"), "p.rle:1: the header gives `x` twice");
        assert_eq!(
            error("x = 3, y = 1, z = 2\n!"),
            "p.rle:1: unknown header item `z`; expected `x = <width>, y = <height>[, rule = B3/S23]`"
        );
        assert_eq!(
            error("x = 100000, y = 100000\n!"),
            "p.rle:1: a pattern 100000 x 100000 has more cells than a board can hold (2147483647, an op2 Set's limit)"
        );
    }

    #[test]
    fn other_rules_are_refused() {
        assert_eq!(
            error("x = 1, y = 1, rule = B36/S23\no!"),
            "p.rle:1: the rule `B36/S23` is not supported; this model is Conway's Life, `B3/S23`"
        );
        assert_eq!(
            error("x = 1, y = 1, rule = B3/S23:T10,10\no!"),
            "p.rle:1: the rule `B3/S23:T10` is not supported; this model is Conway's Life, `B3/S23`"
        );
    }

    #[test]
    fn cells_beyond_the_header_are_refused() {
        assert_eq!(
            error("x = 3, y = 2\n3o$\n2b2o!"),
            "p.rle:3: column 3: `2o` in row 2 ends at cell 4, past the header's width `x = 3`"
        );
        assert_eq!(
            error("x = 3, y = 2\n4b!"),
            "p.rle:2: column 1: `4b` in row 1 ends at cell 4, past the header's width `x = 3`"
        );
        assert_eq!(
            error("x = 3, y = 2\no$o$o!"),
            "p.rle:2: column 5: `o` falls in row 3, but the header's `y = 2` gives the pattern 2 rows"
        );
        assert_eq!(
            error("x = 3, y = 1\n3o2$\n  2o!"),
            "p.rle:3: column 3: `2o` falls in row 3, but the header's `y = 1` gives the pattern 1 row"
        );
        assert_eq!(
            error("x = 3, y = 2\n18446744073709551615o!"),
            "p.rle:2: column 1: `18446744073709551615o` in row 1 ends at cell 18446744073709551615, past the header's width `x = 3`"
        );
    }

    #[test]
    fn malformed_runs_are_refused() {
        assert_eq!(
            error("x = 3, y = 1\nbxo!"),
            "p.rle:2: column 2: expected a run (an optional count, then `b` dead, `o` alive or `$` end of row) or `!`, found 'x'"
        );
        assert_eq!(
            error("x = 3, y = 1\n0o!"),
            "p.rle:2: column 1: a run count must be at least 1, found 0"
        );
        assert_eq!(
            error("x = 3, y = 1\n2 o!"),
            "p.rle:2: column 2: expected `b`, `o` or `$` right after the run count 2 (column 1), found ' '"
        );
        assert_eq!(
            error("x = 3, y = 1\n3!"),
            "p.rle:2: column 2: expected `b`, `o` or `$` right after the run count 3 (column 1), found '!'"
        );
        assert_eq!(
            error("x = 3, y = 1\nb12\no!"),
            "p.rle:2: column 2: the line ends after the run count 12; expected `b`, `o` or `$` right after it"
        );
        assert_eq!(
            error("x = 3, y = 1\n99999999999999999999o!"),
            "p.rle:2: column 1: the run count is larger than 18446744073709551615"
        );
        assert_eq!(
            error("x = 3, y = 1\n#C a comment after the header\n3o!"),
            "p.rle:2: column 1: expected a run (an optional count, then `b` dead, `o` alive or `$` end of row) or `!`, found '#'"
        );
    }

    #[test]
    fn a_missing_end_is_refused() {
        assert_eq!(
            error("x = 3, y = 1\n3o\n"),
            "p.rle:3: expected `!` at the end of the pattern, found the end of the file"
        );
        assert_eq!(
            error("x = 3, y = 1"),
            "p.rle:2: expected `!` at the end of the pattern, found the end of the file"
        );
    }
}
