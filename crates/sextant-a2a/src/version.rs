//! The `A2A-Version` service parameter.
//!
//! Policy: any `1.x` is served (patch ignored); any other explicit version is refused with
//! -32009. A request **without** the header is served as 1.0 when it uses a 1.0 method name
//! (the spec says "treat as 0.3", the TCK accepts either, the ACTS draft expects success, and
//! refusing would break curl users for no gain); 0.3 method names are served as 0.3 whatever
//! the header says, because 0.3 clients never send it.

/// What a header value asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requested {
    /// No header, or an empty one.
    Absent,
    /// A `1.x` version.
    V1,
    /// Anything else (kept for the error message).
    Other(String),
}

/// Reads an `A2A-Version` value.
pub fn parse(value: Option<&str>) -> Requested {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Requested::Absent;
    };
    let major = v.split('.').next().unwrap_or("");
    if major == "1" {
        Requested::V1
    } else {
        Requested::Other(v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majors_are_compared() {
        assert_eq!(parse(None), Requested::Absent);
        assert_eq!(parse(Some(" ")), Requested::Absent);
        assert_eq!(parse(Some("1.0")), Requested::V1);
        assert_eq!(parse(Some("1.2.3")), Requested::V1);
        assert_eq!(parse(Some("0.3")), Requested::Other("0.3".into()));
        assert_eq!(parse(Some("99.0")), Requested::Other("99.0".into()));
        assert_eq!(parse(Some("10.0")), Requested::Other("10.0".into()));
    }
}
