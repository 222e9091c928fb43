//! What a model's names may hold. Names become keys of files: groups of a
//! checkpoint (`agents/<type>/variables/<name>`), columns of CSV and JSON
//! lines, lines of a checkpoint's layout. A name with a separator of one
//! of those in it could stand for two things (agent type `a/variables`
//! beside type `a`) or break the file it is written to.

/// Characters no name may hold: path, list and quoting separators.
const SEPARATORS: &[char] = &['/', '\\', ',', '"', '[', ']', '{', '}'];

/// Why `name`, the name of a `what` (e.g. "agent type"), cannot be one,
/// or `None` if it can.
pub(crate) fn name_problem(what: &str, name: &str) -> Option<String> {
    let why = if name.is_empty() {
        "is empty".to_string()
    } else if name.trim() != name {
        "begins or ends with white space".to_string()
    } else if name == "." || name == ".." {
        "is a path's dot".to_string()
    } else if let Some(c) = name.chars().find(|c| SEPARATORS.contains(c) || c.is_control()) {
        format!("holds {c:?}, which names may not (nor {SEPARATORS:?} or control characters)")
    } else {
        return None;
    };
    Some(format!("the {what} name {name:?} {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_stand_for_two_things_are_refused() {
        for good in ["circle", "pos", "home_2", "a.b", "Zustand-1", "x y"] {
            assert_eq!(name_problem("variable", good), None, "{good}");
        }
        for (bad, why) in [
            ("", "is empty"),
            (" a", "white space"),
            ("a/variables", "holds '/'"),
            ("x,y", "holds ','"),
            ("q\"", "holds '\"'"),
            ("n[0]", "holds '['"),
            ("a\nb", "holds '\\n'"),
            ("..", "dot"),
        ] {
            let p = name_problem("agent type", bad).unwrap_or_default();
            assert!(p.contains("the agent type name") && p.contains(why), "{bad:?}: {p}");
        }
    }
}
