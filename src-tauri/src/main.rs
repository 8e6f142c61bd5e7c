//! The Sextant desktop app. Everything is in the library: see `sextant_app::run`.

// No console window next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    sextant_app::run()
}
