//! `Content-Type` predicates shared by the perimeter, the REST extractors and the A2A
//! bindings, so every surface reads a media type the same way (case, parameters, `+json`).

/// The media type of a `Content-Type` value, lowercase, without its parameters.
pub fn media_type(value: Option<&str>) -> Option<String> {
    let v = value?;
    Some(
        v.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase(),
    )
}

/// Whether a `Content-Type` value is JSON.
pub fn is_json(value: Option<&str>) -> bool {
    let Some(mime) = media_type(value) else {
        return false;
    };
    mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
}

/// Whether a `Content-Type` value is gRPC's (`application/grpc`, `application/grpc+proto`).
pub fn is_grpc_content(value: Option<&str>) -> bool {
    let Some(mime) = media_type(value) else {
        return false;
    };
    mime == "application/grpc" || mime.starts_with("application/grpc+")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_grpc_media_types() {
        assert!(is_json(Some("application/json; charset=utf-8")));
        assert!(is_json(Some("Application/JSON")));
        assert!(is_json(Some("application/merge-patch+json")));
        assert!(!is_json(Some("text/plain")));
        assert!(!is_json(None));
        assert!(is_grpc_content(Some("application/grpc+proto")));
        assert!(is_grpc_content(Some("application/grpc")));
        assert!(!is_grpc_content(Some("application/json")));
        assert!(!is_grpc_content(None));
    }
}
