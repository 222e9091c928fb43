//! The example's files: positions in (`x,y,z` lines) and numbers out as C's
//! `%.9g` writes them (nine significant digits, enough to give an `f32`
//! back exactly).

/// Reads `x,y,z` lines (blank lines and `#` comments skipped).
///
/// # Errors
/// A message naming the line that is not three numbers.
pub fn read_positions(text: &str) -> Result<Vec<[f32; 3]>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let v: Vec<&str> = line.split(',').map(str::trim).collect();
        let parse = |s: &str| s.parse::<f32>().ok().filter(|x| x.is_finite());
        match v.as_slice() {
            [x, y, z] => match (parse(x), parse(y), parse(z)) {
                (Some(x), Some(y), Some(z)) => out.push([x, y, z]),
                _ => return Err(format!("line {}: `{line}` is not three finite numbers", i + 1)),
            },
            _ => return Err(format!("line {}: expected `x,y,z`, found `{line}`", i + 1)),
        }
    }
    Ok(out)
}

/// `x` as `%.9g` writes it: nine significant digits, fixed notation for
/// exponents -4..9 and scientific otherwise, trailing zeros dropped.
pub fn format_g9(x: f32) -> String {
    let x = x as f64;
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 && x.is_sign_negative() {
            "-0".into()
        } else {
            format!("{x}")
        };
    }
    let sci = format!("{x:.8e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} writes an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-4..9).contains(&exp) {
        trim(&format!("{x:.*}", (8 - exp) as usize))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g9_matches_c() {
        // The expected strings are what C's printf("%.9g") writes.
        assert_eq!(format_g9(1.0), "1");
        assert_eq!(format_g9(0.1), "0.100000001");
        assert_eq!(format_g9(-2.5), "-2.5");
        assert_eq!(format_g9(123456.79), "123456.789");
        assert_eq!(format_g9(1.0e-7), "1.00000001e-07");
        assert_eq!(format_g9(3.0e12), "3.00000005e+12");
        assert_eq!(format_g9(0.0001), "9.99999975e-05");
        for x in [0.1f32, 1.0 / 3.0, 7.25e-3, 99.999, 1e30] {
            assert_eq!(format_g9(x).parse::<f32>().unwrap(), x);
        }
    }

    #[test]
    fn positions_are_read_with_line_numbers_in_errors() {
        assert_eq!(
            read_positions("# p\n1,2,3\n\n 4 , 5,6.5\n").unwrap(),
            [[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]]
        );
        assert!(read_positions("1,2\n").unwrap_err().contains("line 1"));
        assert!(read_positions("1,2,3\n1,x,3\n").unwrap_err().contains("line 2"));
        assert!(read_positions("1,nan,3\n").unwrap_err().contains("finite"));
    }
}
