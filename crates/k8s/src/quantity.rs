//! Kubernetes resource quantities (`500m`, `1Gi`, `1024Mi`, `2`), parsed to exact values.
//!
//! Follows `k8s.io/apimachinery/pkg/api/resource/quantity.go`: a signed decimal number, then a
//! binary-SI suffix (`Ki`…`Ei`), a decimal-SI suffix (`n u m k M G T P E`) or a decimal exponent
//! (`e3`, `E-2`). Values are held exactly in nano-units, so `1Gi == 1024Mi` and `0.5 == 500m`.
//! Like upstream, precision below `1n` is rounded up.

use std::{cmp::Ordering, fmt, str::FromStr};

/// Errors from parsing a quantity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The text is not in Kubernetes quantity syntax. Upstream says the same words.
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {0:?}"
    )]
    Syntax(String),
    /// The value does not fit the exact representation (above about 10^29).
    #[error("quantity {0:?} is too large")]
    TooLarge(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

const NANO: i128 = 1_000_000_000;

/// An exact quantity, stored as a count of nano-units.
///
/// ```
/// use lab_runner_k8s::quantity::Quantity;
/// let a: Quantity = "1Gi".parse().unwrap();
/// let b: Quantity = "1024Mi".parse().unwrap();
/// assert_eq!(a, b);
/// assert!("500m".parse::<Quantity>().unwrap() < "1".parse().unwrap());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Quantity {
    nanos: i128,
}

impl Quantity {
    /// The zero quantity.
    pub const ZERO: Quantity = Quantity { nanos: 0 };

    /// A whole-number quantity (`nvidia.com/gpu: 4`).
    pub fn from_units(units: i64) -> Self {
        Quantity { nanos: i128::from(units) * NANO }
    }

    /// A quantity given in milli-units (`cpu: 500m`).
    pub fn from_millis(millis: i64) -> Self {
        Quantity { nanos: i128::from(millis) * 1_000_000 }
    }

    /// The exact value in nano-units.
    pub fn nanos(self) -> i128 {
        self.nanos
    }

    /// The value in milli-units, rounded up as upstream's `MilliValue` does.
    pub fn millis_ceil(self) -> i128 {
        div_ceil(self.nanos, 1_000_000)
    }

    /// The value in whole units, rounded up as upstream's `Value` does.
    pub fn units_ceil(self) -> i128 {
        div_ceil(self.nanos, NANO)
    }

    /// True when the value is a whole number of units (extended resources must be).
    pub fn is_integer(self) -> bool {
        self.nanos % NANO == 0
    }

    /// Sum, or `None` on overflow.
    pub fn checked_add(self, other: Quantity) -> Option<Quantity> {
        self.nanos.checked_add(other.nanos).map(|nanos| Quantity { nanos })
    }

    /// Difference, or `None` on overflow.
    pub fn checked_sub(self, other: Quantity) -> Option<Quantity> {
        self.nanos.checked_sub(other.nanos).map(|nanos| Quantity { nanos })
    }

    /// Parses the value of a JSON field that holds a quantity: a string, or a number as kubectl
    /// forwards YAML numbers (`"nvidia.com/gpu": 1`).
    pub fn from_json(value: &serde_json::Value) -> Result<Quantity> {
        match value {
            serde_json::Value::String(text) => text.parse(),
            serde_json::Value::Number(number) => number.to_string().parse(),
            other => Err(Error::Syntax(other.to_string())),
        }
    }
}

fn div_ceil(value: i128, by: i128) -> i128 {
    let quotient = value / by;
    if value % by > 0 { quotient + 1 } else { quotient }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// How a suffix scales the number: `base^exponent`.
enum Scale {
    Binary(u32),
    Decimal(i32),
}

fn suffix_scale(suffix: &str) -> Option<Scale> {
    Some(match suffix {
        "" => Scale::Decimal(0),
        "Ki" => Scale::Binary(10),
        "Mi" => Scale::Binary(20),
        "Gi" => Scale::Binary(30),
        "Ti" => Scale::Binary(40),
        "Pi" => Scale::Binary(50),
        "Ei" => Scale::Binary(60),
        "n" => Scale::Decimal(-9),
        "u" => Scale::Decimal(-6),
        "m" => Scale::Decimal(-3),
        "k" => Scale::Decimal(3),
        "M" => Scale::Decimal(6),
        "G" => Scale::Decimal(9),
        "T" => Scale::Decimal(12),
        "P" => Scale::Decimal(15),
        "E" => Scale::Decimal(18),
        _ => {
            let exponent = suffix.strip_prefix(['e', 'E'])?;
            let digits = exponent.trim_start_matches(['+', '-']);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Scale::Decimal(exponent.parse().ok()?)
        }
    })
}

impl FromStr for Quantity {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let syntax = || Error::Syntax(text.to_string());
        let too_large = || Error::TooLarge(text.to_string());
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let number_len = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
        let (number, suffix) = rest.split_at(number_len);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
            return Err(syntax());
        }
        let scale = suffix_scale(suffix).ok_or_else(syntax)?;
        // The number as an integer `mantissa` times 10^-fraction.len(), exactly.
        let digits = format!("{whole}{fraction}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 30 {
            return Err(too_large());
        }
        let mantissa: i128 = if digits.is_empty() { 0 } else { digits.parse().map_err(|_| syntax())? };
        let mut exponent10 = 9 - fraction.len() as i32; // into nano-units
        let mut nanos = mantissa;
        if let Scale::Binary(shift) = scale {
            nanos = nanos.checked_mul(1i128 << shift).ok_or_else(too_large)?;
        } else if let Scale::Decimal(power) = scale {
            exponent10 += power;
        }
        if exponent10 >= 0 {
            let factor = 10i128.checked_pow(exponent10 as u32).ok_or_else(too_large)?;
            nanos = nanos.checked_mul(factor).ok_or_else(too_large)?;
        } else {
            let divisor = 10i128.checked_pow(exponent10.unsigned_abs()).unwrap_or(i128::MAX);
            nanos = div_ceil(nanos, divisor);
        }
        Ok(Quantity { nanos: if negative { -nanos } else { nanos } })
    }
}

impl fmt::Display for Quantity {
    /// A plain decimal rendering (`1073741824`, `0.5`); not upstream's canonical form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.nanos < 0 { "-" } else { "" };
        let abs = self.nanos.unsigned_abs();
        let (whole, fraction) = (abs / NANO as u128, abs % NANO as u128);
        if fraction == 0 {
            write!(f, "{sign}{whole}")
        } else {
            let fraction = format!("{fraction:09}");
            write!(f, "{sign}{whole}.{}", fraction.trim_end_matches('0'))
        }
    }
}

/// How a quantity was written; its canonical spelling keeps it (upstream `resource.Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// No suffix or a decimal SI suffix (`500m`, `2`, `1G`).
    DecimalSi,
    /// A binary SI suffix (`64Mi`).
    BinarySi,
    /// A decimal exponent (`1e3`).
    DecimalExponent,
}

/// The spelling the API server stores for a quantity written as `text` (`0.5` → `500m`,
/// `1000m` → `1`, `1024Mi` → `1Gi`, `2000` → `2k`), following apimachinery
/// `resource/quantity.go` `CanonicalizeBytes`: the written format is kept; trailing zeros move
/// into a suffix whose exponent is a multiple of 3 (of 1024 for binary SI); binary SI below 1024
/// or with a fraction falls back to decimal SI.
///
/// ```
/// use lab_runner_k8s::quantity::canonical;
/// assert_eq!(canonical("0.5").unwrap(), "500m");
/// assert_eq!(canonical("1536Mi").unwrap(), "1536Mi");
/// ```
pub fn canonical(text: &str) -> Result<String> {
    let quantity: Quantity = text.parse()?;
    let unsigned = text.trim_start_matches(['+', '-']);
    let suffix = &unsigned[unsigned.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count()..];
    let format = if suffix.len() > 1 && suffix.starts_with(['e', 'E']) {
        Format::DecimalExponent
    } else if suffix.ends_with('i') {
        Format::BinarySi
    } else {
        Format::DecimalSi
    };
    Ok(quantity.canonical_string(format))
}

/// A quantity sent as a JSON number (`"nvidia.com/gpu": 1` from YAML) as the API server stores
/// it: decoded into a `resource.Quantity` and serialised in canonical form (`1000` → `1k`,
/// `0.5` → `500m`); a number that is no quantity keeps its JSON spelling.
///
/// ```
/// use lab_runner_k8s::quantity::json_number_text;
/// assert_eq!(json_number_text(&serde_json::Number::from_f64(0.5).unwrap()), "500m");
/// assert_eq!(json_number_text(&serde_json::Number::from(2000)), "2k");
/// ```
pub fn json_number_text(number: &serde_json::Number) -> String {
    let text = number.to_string();
    canonical(&text).unwrap_or(text)
}

impl Quantity {
    fn canonical_string(self, format: Format) -> String {
        if self.nanos == 0 {
            return "0".to_string();
        }
        let sign = if self.nanos < 0 { "-" } else { "" };
        let abs = self.nanos.unsigned_abs();
        let nano = NANO as u128;
        let binary = format == Format::BinarySi && abs >= 1024 * nano && abs.is_multiple_of(nano);
        if binary {
            let (mut units, mut power) = (abs / nano, 0);
            while units.is_multiple_of(1024) && power < 6 {
                units /= 1024;
                power += 1;
            }
            return format!("{sign}{units}{}", ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power]);
        }
        // Decimal: mantissa × 10^exponent with no trailing zeros, then the exponent lowered to a
        // multiple of 3 (`int64Amount.AsCanonicalBytes`).
        let (mut mantissa, mut exponent) = (abs, -9i32);
        while mantissa.is_multiple_of(10) {
            mantissa /= 10;
            exponent += 1;
        }
        match exponent.rem_euclid(3) {
            1 => (mantissa, exponent) = (mantissa * 10, exponent - 1),
            2 => (mantissa, exponent) = (mantissa * 100, exponent - 2),
            _ => {}
        }
        let suffix = match (format, exponent) {
            (_, 0) => String::new(),
            (Format::DecimalExponent, _) => format!("e{exponent}"),
            (_, -9) => "n".into(),
            (_, -6) => "u".into(),
            (_, -3) => "m".into(),
            (_, 3) => "k".into(),
            (_, 6) => "M".into(),
            (_, 9) => "G".into(),
            (_, 12) => "T".into(),
            (_, 15) => "P".into(),
            (_, 18) => "E".into(),
            _ => format!("e{exponent}"),
        };
        format!("{sign}{mantissa}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> Quantity {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn binary_and_decimal_suffixes_compare_exactly() {
        assert_eq!(q("1Gi"), q("1024Mi"));
        assert_eq!(q("1Ki"), q("1024"));
        assert_eq!(q("1k"), q("1000"));
        assert_eq!(q("0.5"), q("500m"));
        assert_eq!(q("1e3"), q("1k"));
        assert_eq!(q("1E-3"), q("1m"));
        assert_eq!(q("40Gi").units_ceil(), 42_949_672_960);
        assert!(q("1G") < q("1Gi"));
        assert_eq!(q("-2"), Quantity::from_units(-2));
        assert_eq!(q("+3"), Quantity::from_units(3));
    }

    #[test]
    fn rounds_up_below_a_nano_and_reports_integers() {
        assert_eq!(q("0.1n").nanos(), 1);
        assert_eq!(q("1500m").units_ceil(), 2);
        assert!(q("4").is_integer());
        assert!(!q("4500m").is_integer());
        assert_eq!(q("250m").millis_ceil(), 250);
    }

    #[test]
    fn rejects_what_upstream_rejects() {
        for bad in ["", "abc", "1.2.3", "1Gb", "Gi", "1e", "1 Gi", "."] {
            assert!(bad.parse::<Quantity>().is_err(), "{bad:?} should not parse");
        }
        assert!(matches!("1e40".parse::<Quantity>(), Err(Error::TooLarge(_))));
    }

    #[test]
    fn json_numbers_are_quantities() {
        assert_eq!(Quantity::from_json(&serde_json::json!(1)).unwrap(), q("1"));
        assert_eq!(Quantity::from_json(&serde_json::json!("2Gi")).unwrap(), q("2Gi"));
        assert!(Quantity::from_json(&serde_json::json!(true)).is_err());
    }

    #[test]
    fn canonical_spellings_are_upstreams() {
        // apimachinery resource/quantity_test.go `TestQuantityCanonicalize` and friends.
        for (written, stored) in [
            ("0.5", "500m"),
            ("1000m", "1"),
            ("1.2", "1200m"),
            ("1200m", "1200m"),
            ("2000", "2k"),
            ("1500", "1500"),
            ("1", "1"),
            ("0", "0"),
            ("0Mi", "0"),
            ("100m", "100m"),
            ("1000M", "1G"),
            ("1G", "1G"),
            ("1024Mi", "1Gi"),
            ("1536Mi", "1536Mi"),
            ("0.5Gi", "512Mi"),
            ("0.5Ki", "512"),
            ("1000Ki", "1000Ki"),
            ("1e3", "1e3"),
            ("1.5e3", "1500"),
            ("1E-3", "1e-3"),
            ("10", "10"),
            ("-250m", "-250m"),
            ("0.1n", "1n"),
            ("1E", "1E"),
        ] {
            assert_eq!(canonical(written).unwrap(), stored, "{written}");
        }
        assert!(canonical("1Gb").is_err());
    }

    #[test]
    fn displays_plain_decimals() {
        assert_eq!(q("1Ki").to_string(), "1024");
        assert_eq!(q("1500m").to_string(), "1.5");
        assert_eq!(q("-250m").to_string(), "-0.25");
    }
}
