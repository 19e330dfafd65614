//! The webview stays on the app's own pages: a navigation anywhere else (a link, a script
//! setting `location`) is refused before any request leaves, whatever its origin. The CSP
//! does not govern navigation; this does.

/// Whether the main webview may load `url`: the bundled UI (`tauri://localhost`, or
/// `http(s)://tauri.localhost` where the platform serves custom protocols that way), and in a
/// development build the Vite dev server the configuration names.
pub fn allowed(url: &tauri::Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    match url.scheme() {
        "tauri" => host == "localhost",
        "http" | "https" if host == "tauri.localhost" => true,
        "http" if cfg!(dev) => url.as_str().starts_with("http://127.0.0.1:5173/"),
        _ => false,
    }
}

/// A plugin with no commands whose only job is the navigation check above.
pub fn guard<R: tauri::Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri::plugin::Builder::new("navigation-guard")
        .on_navigation(|_webview, url| {
            let ok = allowed(url);
            if !ok {
                tracing::warn!(url = %url, "refused a navigation away from the app");
            }
            ok
        })
        .build()
}

#[cfg(test)]
mod tests {
    use super::allowed;

    #[test]
    fn only_the_apps_own_pages_load() {
        for ok in [
            "tauri://localhost/",
            "tauri://localhost/index.html#/dlq",
            "http://tauri.localhost/",
            "https://tauri.localhost/assets/x.js",
        ] {
            assert!(allowed(&ok.parse().unwrap()), "{ok}");
        }
        for refused in [
            "http://127.0.0.1:8080/",
            "https://example.com/",
            "tauri://evil/",
            "http://tauri.localhost.example.com/",
            "file:///etc/passwd",
            "data:text/html,hi",
            "javascript:alert(1)",
        ] {
            assert!(!allowed(&refused.parse().unwrap()), "{refused}");
        }
    }
}
