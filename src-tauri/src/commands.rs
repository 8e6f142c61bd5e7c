//! The app's only Tauri command. Everything else the console page does goes over HTTP to the
//! embedded server, exactly as in a browser against `sextant serve`.

use serde::Serialize;
use tauri::State;

use crate::Console;

/// What the page needs to reach the server: its address and this launch's owner token.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bootstrap {
    /// `http://127.0.0.1:PORT`, no trailing slash: the page's own origin.
    pub server_address: String,
    /// The per-launch bearer token (`Authorization: Bearer …`).
    pub token: String,
}

/// `invoke('bootstrap')` from `ui/src/host/desktop.ts`. Only the console window, on the
/// embedded server's exact origin, may call it: the capability is granted at start-up for that
/// origin alone (`lib.rs`).
#[tauri::command]
pub fn bootstrap(console: State<'_, Console>) -> Bootstrap {
    Bootstrap {
        server_address: console.url.clone(),
        token: console.token.clone(),
    }
}
