//! Counts in messages, with their noun in the right number.

/// `n` and its noun: `one` when `n` is 1, else `many`, so that messages never
/// say "only 1 devices" (`plural(1, "device", "devices")` is `"1 device"`,
/// `plural(0, "device", "devices")` is `"0 devices"`).
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(plural(1, "device", "devices"), "1 device");
        assert_eq!(plural(0, "device", "devices"), "0 devices");
        assert_eq!(plural(2, "entry", "entries"), "2 entries");
    }
}
