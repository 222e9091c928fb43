//! Classic patterns in both formats, the file reader, and round trips.

use std::path::{Path, PathBuf};

use op2_core::Error;
use op2_life::Pattern;
use proptest::prelude::*;

const BLINKER_RLE: &str = "#N Blinker\n#O John Conway\nx = 3, y = 1, rule = B3/S23\n3o!\n";
const BLINKER_CELLS: &str = "!Name: Blinker\n!\nOOO\n";

const GLIDER_RLE: &str = "#N Glider\n#C The smallest spaceship.\nx = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n";
const GLIDER_CELLS: &str = "!Name: Glider\n.O\n..O\nOOO\n";

// Written over several lines, as long patterns are.
const GOSPER_GUN_RLE: &str = "#N Gosper glider gun
#C The first known gun, found by Bill Gosper in 1970.
x = 36, y = 9, rule = B3/S23
24bo$22bobo$12b2o6b2o12b2o$11bo3bo4b2o12b2o$2o8bo5bo3b2o$2o8bo3bob2o4b
obo$10bo5bo7bo$11bo3bo$12b2o!
";
// Trailing dead cells left out, as .cells files usually do.
const GOSPER_GUN_CELLS: &str = "!Name: Gosper glider gun
!
........................O
......................O.O
............OO......OO............OO
...........O...O....OO............OO
OO........O.....O...OO
OO........O...O.OO....O.O
..........O.....O.......O
...........O...O
............OO
";

fn both(rle: &str, cells: &str) -> (Pattern, Pattern) {
    (
        Pattern::parse_rle(rle, "p.rle").unwrap(),
        Pattern::parse_cells(cells, "p.cells").unwrap(),
    )
}

#[test]
fn the_blinker_is_the_same_in_both_formats() {
    let (rle, cells) = both(BLINKER_RLE, BLINKER_CELLS);
    assert_eq!(rle, cells);
    assert_eq!(rle.alive(), [(0, 0), (1, 0), (2, 0)]);
}

#[test]
fn the_glider_is_the_same_in_both_formats() {
    let (rle, cells) = both(GLIDER_RLE, GLIDER_CELLS);
    assert_eq!(rle, cells);
    assert_eq!((rle.width(), rle.height()), (3, 3));
    assert_eq!(rle.alive(), [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]);
}

#[test]
fn the_gosper_gun_is_the_same_in_both_formats() {
    let (rle, cells) = both(GOSPER_GUN_RLE, GOSPER_GUN_CELLS);
    assert_eq!(rle, cells);
    assert_eq!((rle.width(), rle.height()), (36, 9));
    assert_eq!(rle.alive().len(), 36);
    // The two blocks at either end of the gun.
    for cell in [(0, 4), (1, 4), (0, 5), (1, 5), (34, 2), (35, 2), (34, 3), (35, 3)] {
        assert!(rle.is_alive(cell.0, cell.1), "{cell:?}");
    }
}

#[test]
fn written_cells_read_back_as_the_same_pattern() {
    for (rle, _) in [
        both(BLINKER_RLE, BLINKER_CELLS),
        both(GLIDER_RLE, GLIDER_CELLS),
        both(GOSPER_GUN_RLE, GOSPER_GUN_CELLS),
    ] {
        let text = rle.to_cells();
        assert_eq!(text.lines().count(), rle.height());
        assert!(text.lines().all(|line| line.len() == rle.width()));
        assert_eq!(Pattern::parse_cells(&text, "written.cells").unwrap(), rle);
    }
}

/// `contents` written to a file of its own under the test's scratch directory.
fn file(name: &str, contents: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("op2-life-patterns");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn read_chooses_the_format_by_extension() {
    let glider = Pattern::parse_rle(GLIDER_RLE, "g.rle").unwrap();
    assert_eq!(
        Pattern::read(file("glider.rle", GLIDER_RLE.as_bytes())).unwrap(),
        glider
    );
    assert_eq!(
        Pattern::read(file("glider.cells", GLIDER_CELLS.as_bytes())).unwrap(),
        glider
    );
    assert_eq!(
        Pattern::read(file("GLIDER.RLE", GLIDER_RLE.as_bytes())).unwrap(),
        glider
    );
}

#[test]
fn other_extensions_are_refused_at_line_0() {
    for (name, found) in [
        ("glider.lif", "the extension `.lif`"),
        ("glider", "a name without an extension"),
    ] {
        let path = file(name, GLIDER_RLE.as_bytes());
        let e = Pattern::read(&path).unwrap_err();
        let Error::InputFile { path: at, line, reason } = &e else {
            panic!("{e:?}")
        };
        assert_eq!((at, *line), (&path, 0));
        assert_eq!(
            reason,
            &format!("cannot tell the pattern's format from {found}; expected a `.cells` (plaintext) or `.rle` file")
        );
    }
}

#[test]
fn errors_in_a_file_name_the_file_and_the_line() {
    let path = file("bad.cells", b"!c\n.O.\n.o.\n");
    let e = Pattern::read(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3: column 2: expected `.` (dead) or `O` (alive), found 'o'",
            path.display()
        )
    );
    let path = file("bad.rle", b"x = 2, y = 1\n3o!\n");
    let e = Pattern::read(&path).unwrap_err();
    let Error::InputFile { path: at, line, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!((at, *line), (&path, 2));
}

#[test]
fn a_missing_file_is_an_error_at_line_0() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("op2-life-patterns/missing.rle");
    let e = Pattern::read(&path).unwrap_err();
    let Error::InputFile { path: at, line, reason } = &e else {
        panic!("{e:?}")
    };
    assert_eq!((at, *line), (&path, 0));
    assert!(reason.starts_with("cannot read the file: "), "{reason}");
}

#[test]
fn a_file_that_is_not_text_is_an_error_at_the_line() {
    let path = file("binary.cells", b"!ok\n.O.\nO\xffO\n");
    let e = Pattern::read(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}:3: the line is not UTF-8 text", path.display())
    );
}

/// `pattern` as RLE, its items split over lines after every `split`-th one
/// (a test writer: runs of equal cells, trailing dead cells left out).
fn to_rle(pattern: &Pattern, split: usize) -> String {
    let mut items = Vec::new();
    let mut rows_ended = 0;
    for y in 0..pattern.height() {
        let row: Vec<bool> = (0..pattern.width()).map(|x| pattern.is_alive(x, y)).collect();
        let Some(last) = row.iter().rposition(|&alive| alive) else {
            rows_ended += 1;
            continue;
        };
        if y > 0 {
            items.push(run(rows_ended, '$'));
        }
        rows_ended = 1;
        let mut x = 0;
        while x <= last {
            let len = row[x..=last].iter().take_while(|&&alive| alive == row[x]).count();
            items.push(run(len, if row[x] { 'o' } else { 'b' }));
            x += len;
        }
    }
    let mut text = format!(
        "#C written by the test\nx = {}, y = {}, rule = B3/S23\n",
        pattern.width(),
        pattern.height()
    );
    for (k, item) in items.iter().enumerate() {
        text.push_str(item);
        if (k + 1) % split == 0 {
            text.push('\n');
        }
    }
    text.push_str("!\n");
    text
}

fn run(n: usize, tag: char) -> String {
    if n == 1 {
        tag.to_string()
    } else {
        format!("{n}{tag}")
    }
}

fn patterns() -> impl Strategy<Value = Pattern> {
    (
        1usize..24,
        1usize..24,
        proptest::collection::vec(any::<bool>(), 24 * 24),
    )
        .prop_map(|(width, height, cells)| Pattern::from_fn(width, height, |x, y| cells[y * 24 + x]))
}

proptest! {
    // Failures are reported, not saved into the source tree.
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    /// Any pattern with cells reads back from its `.cells` text.
    #[test]
    fn cells_round_trip(pattern in patterns()) {
        prop_assert_eq!(Pattern::parse_cells(&pattern.to_cells(), "p.cells").unwrap(), pattern);
    }

    /// Any pattern with cells reads back from RLE, however its runs are split over lines.
    #[test]
    fn rle_round_trip(pattern in patterns(), split in 1usize..8) {
        let text = to_rle(&pattern, split);
        prop_assert_eq!(Pattern::parse_rle(&text, "p.rle").unwrap(), pattern);
    }
}
