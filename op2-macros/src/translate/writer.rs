//! An indenting line writer for generated C.

#[derive(Default)]
pub struct Writer {
    text: String,
    depth: usize,
}

impl Writer {
    pub fn line(&mut self, s: &str) {
        for _ in 0..self.depth {
            self.text.push_str("    ");
        }
        self.text.push_str(s);
        self.text.push('\n');
    }

    /// Writes `head {` and indents.
    pub fn open(&mut self, head: &str) {
        if head.is_empty() {
            self.line("{");
        } else {
            self.line(&format!("{head} {{"));
        }
        self.depth += 1;
    }

    /// Dedents and writes `}` followed by `tail`.
    pub fn close(&mut self, tail: &str) {
        self.depth -= 1;
        self.line(&format!("}}{tail}"));
    }

    pub fn finish(self) -> String {
        self.text
    }
}
