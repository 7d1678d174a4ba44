//! The page's files, compiled into the binary: the server needs nothing on disk or online.

/// `(content type, body)` of the asset called `name`.
pub fn get(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "index.html" => (
            "text/html; charset=utf-8",
            include_str!("../assets/index.html"),
        ),
        "app.js" => (
            "text/javascript; charset=utf-8",
            include_str!("../assets/app.js"),
        ),
        "style.css" => (
            "text/css; charset=utf-8",
            include_str!("../assets/style.css"),
        ),
        _ => return None,
    })
}
