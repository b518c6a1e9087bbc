//! Floats as Soufflé 2.5 reads, prints and converts them: a `float` is an `f32` whose
//! bits a tuple holds. Reading follows C's `strtof` (which Soufflé's facts reader and
//! `to_float` call), printing follows C++ streams at nine significant digits (`-D`
//! output), `to_string` C's `%f`, and the conversions to integers the x86 instructions
//! Soufflé's casts compile to.

/// The bits of the "not a number" x86 makes of an operation on numbers (`0.0 / 0.0`),
/// which Soufflé prints as `-nan`.
const DEFAULT_NAN: u32 = 0xffc0_0000;

/// The end of the longest prefix of `text` that `strtof` reads as a float, leading white
/// space included: a sign, then `inf`, `infinity` or `nan` (any case, `nan(...)`), hex
/// digits after `0x` with a fraction and a binary exponent `p`, or decimal digits with a
/// fraction and an exponent `e`; none when no prefix is a float.
fn float_prefix(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = bytes.iter().position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))?;
    if matches!(bytes[i], b'+' | b'-') {
        i += 1;
    }
    let rest = &text[i..];
    let lower = rest.get(..8).map(str::to_ascii_lowercase);
    if lower.as_deref() == Some("infinity") {
        return Some(i + 8);
    }
    let lower3 = rest.get(..3).map(str::to_ascii_lowercase);
    match lower3.as_deref() {
        Some("inf") => return Some(i + 3),
        Some("nan") => {
            let after = &rest[3..];
            if let Some(inner) = after.strip_prefix('(') {
                if let Some(close) = inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                    if inner.as_bytes()[close] == b')' {
                        return Some(i + 3 + 1 + close + 1);
                    }
                }
            }
            return Some(i + 3);
        }
        _ => {}
    }
    let hex = rest.len() > 2 && matches!(rest.get(..2), Some("0x" | "0X"));
    let (digit, exponent): (fn(&u8) -> bool, u8) =
        if hex { (u8::is_ascii_hexdigit, b'p') } else { (u8::is_ascii_digit, b'e') };
    let start = if hex { i + 2 } else { i };
    let mut j = start;
    let run = |from: usize| from + bytes[from..].iter().take_while(|b| digit(b)).count();
    j = run(j);
    let mut digits = j - start;
    if bytes.get(j) == Some(&b'.') {
        let end = run(j + 1);
        digits += end - (j + 1);
        j = end;
    }
    if digits == 0 {
        // `0x` without hex digits reads as the `0` before it.
        return hex.then_some(i + 1);
    }
    if bytes.get(j).map(u8::to_ascii_lowercase) == Some(exponent) {
        let mut k = j + 1;
        if matches!(bytes.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let end = k + bytes[k..].iter().take_while(|b| b.is_ascii_digit()).count();
        if end > k {
            j = end;
        }
    }
    Some(j)
}

/// The float a whole float text (as [`float_prefix`] reads it) writes; none when it is
/// out of the range of a float, where `strtof` reports a range error: too large, or
/// so small it would lose precision (no longer a normal float) without being zero.
fn convert(text: &str) -> Option<f32> {
    let text = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = body.to_ascii_lowercase();
    let magnitude: f64 = if lower.starts_with("inf") {
        return Some(if negative { f32::NEG_INFINITY } else { f32::INFINITY });
    } else if lower.starts_with("nan") {
        let nan = f32::NAN.to_bits() & 0x7fff_ffff;
        return Some(f32::from_bits(if negative { nan | 0x8000_0000 } else { nan }));
    } else if let Some(hex) = lower.strip_prefix("0x") {
        let (mantissa, exponent) = hex.split_once('p').unwrap_or((hex, "0"));
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let mut value = 0f64;
        for c in whole.chars().chain(fraction.chars()) {
            value = value * 16.0 + f64::from(c.to_digit(16)?);
        }
        let exponent: i32 = exponent.parse().unwrap_or(if exponent.starts_with('-') { i32::MIN } else { i32::MAX });
        let scale = i32::try_from(fraction.len()).ok()?.checked_mul(4)?;
        value * 2f64.powi(exponent.saturating_sub(scale).clamp(-2000, 2000))
    } else {
        body.parse::<f64>().ok()?
    };
    // Rounded once, from the exact text: a decimal text may round differently through a
    // double, so the float is read from the text itself.
    let float = if lower.starts_with("0x") { magnitude as f32 } else { body.parse::<f32>().ok()? };
    if float.is_infinite() || (magnitude != 0.0 && !float.is_normal()) {
        return None;
    }
    Some(if negative { -float } else { float })
}

/// The float `text` writes, all of it, as Soufflé's facts reader reads a `float` field
/// (C++'s `std::stof`: leading white space, but nothing after the float); none for
/// another text or one out of range.
pub fn parse_float(text: &str) -> Option<f32> {
    (float_prefix(text)? == text.len()).then(|| convert(text)).flatten()
}

/// The float at the start of `text`, as `to_float` reads a symbol (`" 12.5xyz"` is 12.5);
/// none when the text starts with no float or it is out of range.
pub fn leading_float(text: &str) -> Option<f32> {
    convert(&text[..float_prefix(text)?])
}

/// A float as Soufflé prints it in its outputs: C's `%.9g` (nine significant digits,
/// trailing zeros dropped, an exponent below 1e-4 and from 1e9), `inf`, `nan`, with a
/// `-` for a negative value, a negative zero and a negative "not a number".
pub fn float_text(value: f32) -> String {
    float_significant(value, 9)
}

/// A float as Soufflé's JSON writer prints it: C++'s default stream precision, `%.6g`.
pub fn float_json_text(value: f32) -> String {
    float_significant(value, 6)
}

/// C's `%.{digits}g` of `value`, as [`float_text`] describes it.
fn float_significant(value: f32, digits: i32) -> String {
    let sign = if value.is_sign_negative() { "-" } else { "" };
    if value.is_nan() {
        return format!("{sign}nan");
    }
    if value.is_infinite() {
        return format!("{sign}inf");
    }
    if value == 0.0 {
        return format!("{sign}0");
    }
    let scientific = format!("{:.*e}", (digits - 1) as usize, f64::from(value).abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..digits).contains(&exponent) {
        let mantissa = trim(mantissa.to_string());
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{exponent_sign}{:02}", exponent.abs())
    } else {
        let decimals = usize::try_from(digits - 1 - exponent).unwrap_or(0);
        format!("{sign}{}", trim(format!("{:.*}", decimals, f64::from(value).abs())))
    }
}

/// A float as Soufflé's `to_string` writes it: C's `%f` (six decimals).
pub fn float_string(value: f32) -> String {
    if value.is_nan() || value.is_infinite() {
        return float_text(value);
    }
    format!("{:.6}", f64::from(value))
}

/// `to_number` of a float: its integer part, or the least number when it has none in
/// range (not a number, beyond 32 bits), as the x86 conversion gives.
pub fn float_to_number(value: f32) -> i32 {
    // 2^31: the first float a 32-bit integer cannot hold.
    let limit = 2_147_483_648.0;
    if value.is_nan() || value >= limit || value < -limit {
        i32::MIN
    } else {
        value as i32
    }
}

/// `to_unsigned` of a float: its integer part as a 64-bit integer (the least one when it
/// has none in range, as the x86 conversion gives), of which the low 32 bits are kept,
/// so -2.5 gives 4294967294 and infinity 0.
pub fn float_to_unsigned(value: f32) -> u32 {
    // 2^63: the first float a 64-bit integer cannot hold.
    let limit = 9_223_372_036_854_775_808.0;
    let wide = if value.is_nan() || value >= limit || value < -limit { i64::MIN } else { value as i64 };
    wide as u32
}

/// The result of a float operation as x86 gives it: "not a number" made of operands that
/// are numbers is the processor's default one (negative), the same on every machine.
pub fn float_result(result: f32, a: f32, b: f32) -> u32 {
    if result.is_nan() && !a.is_nan() && !b.is_nan() {
        DEFAULT_NAN
    } else {
        result.to_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_floats_as_strtof() {
        for (text, value) in
            [("1.5", 1.5), (" 2.5", 2.5), ("+3", 3.0), (".5", 0.5), ("5.", 5.0), ("1E5", 1e5), ("0x10", 16.0)]
        {
            assert_eq!(parse_float(text), Some(value), "{text}");
        }
        assert_eq!(parse_float("0x1.8p1"), Some(3.0));
        assert_eq!(parse_float("INF"), Some(f32::INFINITY));
        assert_eq!(parse_float("-infinity"), Some(f32::NEG_INFINITY));
        assert!(parse_float("nan").is_some_and(|v| v.is_nan() && v.is_sign_positive()));
        assert!(parse_float("-nan").is_some_and(|v| v.is_nan() && v.is_sign_negative()));
        for text in ["", "abc", "2.5x", "2.5 ", "1e39", "1e-40", "1.5e-50", "1e"] {
            assert_eq!(parse_float(text), None, "{text}");
        }
        assert_eq!(leading_float(" 12.5xyz"), Some(12.5));
        assert_eq!(leading_float("1e3"), Some(1000.0));
        assert_eq!(leading_float("abc"), None);
    }

    #[test]
    fn prints_floats_as_souffle() {
        let cases = [
            (0.1, "0.100000001"),
            (1.0, "1"),
            (1e10, "1e+10"),
            (1e-7, "1.00000001e-07"),
            (std::f32::consts::PI, "3.14159274"),
            (-0.0, "-0"),
            (0.000_025, "2.49999994e-05"),
            (0.001, "0.00100000005"),
            (12345.678, "12345.6777"),
            (123_456_789.0, "123456792"),
            (1.5e38, "1.5e+38"),
            (-0.25, "-0.25"),
            (f32::NEG_INFINITY, "-inf"),
        ];
        for (value, text) in cases {
            assert_eq!(float_text(value), text);
        }
        assert_eq!(float_text(f32::from_bits(DEFAULT_NAN)), "-nan");
        assert_eq!(float_string(12345.678), "12345.677734");
        assert_eq!(float_string(-0.25), "-0.250000");
    }

    #[test]
    fn converts_floats_as_x86() {
        assert_eq!(float_to_number(2.7), 2);
        assert_eq!(float_to_number(-2.7), -2);
        assert_eq!(float_to_number(2_147_483_647.0), i32::MIN);
        assert_eq!(float_to_number(f32::NAN), i32::MIN);
        assert_eq!(float_to_unsigned(-2.5), 4_294_967_294);
        assert_eq!(float_to_unsigned(1e10), 1_410_065_408);
        assert_eq!(float_to_unsigned(f32::INFINITY), 0);
        assert_eq!(float_to_unsigned(1.5e38), 0);
    }
}
