//! The Sextant desktop app: a thin Tauri 2 shell around the same core as `sextant serve`.
//!
//! What it does, and nothing more:
//! - starts the core in-process ([`sextant::start_with_owner_token`]) on `127.0.0.1`, port 0
//!   (a fresh port each launch), with a fresh owner token each launch;
//! - opens one window on the embedded server's own URL, so the console page is the same page a
//!   browser gets from `sextant serve` (same origin, same CSP) and its only data path is HTTP +
//!   SSE to that server. The page learns the address and token from the one command
//!   [`commands::bootstrap`], which only that origin may call;
//! - desktop-only work: the tray ([`tray`]: pending-approvals count, open, pause schedules,
//!   quit), native notifications for new interactions whose click opens the inbox
//!   ([`notify`]), a single instance, the window's size and place remembered, and a clean
//!   shutdown (the core drains running turns and everything accepted is in the journal).
//!
//! Not here: anything the server or the UI decides. The tray count and the notifications come
//! from the server's HTTP API ([`watch`]), read like any other client reads it.
//!
//! Start-up order matters: the single-instance check runs while the Tauri app is built, so a
//! second launch hands over to the first (which shows its window) and exits before it could
//! open the journal; only then does the core start. Closing the window hides it (the app keeps
//! running in the tray: schedules fire, notifications arrive); Quit in the tray menu, SIGTERM
//! or Ctrl-C end the app.
//!
//! One line on stdout announces the server (`sextant-app: listening on http://…`), and one
//! the end of a clean shutdown (`sextant-app: stopped`); scripts wait for them. The token is
//! never printed.

mod commands;
mod notify;
mod tray;
mod watch;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use sextant_scheduler::Scheduler;
use tauri::ipc::CapabilityBuilder;
use tauri::{
    App, AppHandle, Emitter, Manager, RunEvent, WebviewUrl, WebviewWindowBuilder, WindowEvent,
};
use tauri_plugin_window_state::StateFlags;
use tokio_util::sync::CancellationToken;

/// The console window's label.
pub const WINDOW: &str = "main";

/// Emitted to the console window with a path to show (e.g. `/inbox#<interaction id>`);
/// `ui/src/host/desktop.ts` navigates there without reloading the page.
pub const OPEN_EVENT: &str = "sextant://open";

/// What the shell keeps about the running core (Tauri managed state).
pub(crate) struct Console {
    /// `http://127.0.0.1:PORT`.
    pub(crate) url: String,
    /// This launch's owner token.
    pub(crate) token: String,
    /// For "Pause schedules" in the tray.
    pub(crate) scheduler: Scheduler,
    /// Stops the shell's own background work ([`watch`]) before the core shuts down.
    pub(crate) stop: CancellationToken,
}

/// Runs the app until it quits; the process's exit code.
pub fn run() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match run_app() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            eprintln!("sextant-app: {e:#}");
            notify::start_failed(&format!("{e:#}"));
            ExitCode::FAILURE
        }
    }
}

fn run_app() -> Result<i32> {
    let config = config_from_env();
    let app = tauri::Builder::default()
        // First: a second launch forwards to this one and exits inside `build` below.
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            show_window(app)
        }))
        // Size, place, maximised; not visibility (a window hidden to the tray at quit would
        // otherwise come back hidden).
        .plugin(
            tauri_plugin_window_state::Builder::default()
                .with_state_flags(StateFlags::all() - StateFlags::VISIBLE)
                .build(),
        )
        .invoke_handler(tauri::generate_handler![commands::bootstrap])
        .setup(|app| Ok(setup(app)?))
        .build(tauri::generate_context!())
        .context("cannot start the desktop shell")?;

    let data_dir = config.data_dir.clone();
    let token = sextant::new_token();
    let running =
        tauri::async_runtime::block_on(sextant::start_with_owner_token(config, token.clone()))?;
    let url = running.url();
    tracing::info!(data_dir = %data_dir.display(), "journal in the data dir");
    let stop = CancellationToken::new();
    app.manage(Console {
        url: url.clone(),
        token,
        scheduler: running.scheduler.clone(),
        stop: stop.clone(),
    });
    announce(&format!("listening on {url}"));

    let code = app.run_return(on_event);

    // The window and the tray are gone; now the core drains.
    stop.cancel();
    tracing::info!("shutting down: draining running turns");
    tauri::async_runtime::block_on(running.shutdown())?;
    announce("stopped");
    Ok(code)
}

/// The data dir (`SEXTANT_DATA_DIR`, else the platform's, as for `sextant serve`); always
/// loopback and a fresh port.
fn config_from_env() -> sextant::Config {
    let data_dir = std::env::var_os("SEXTANT_DATA_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(sextant::default_data_dir);
    sextant::Config {
        data_dir,
        host: "127.0.0.1".into(),
        port: 0,
        public_url: None,
        conformance: false,
        turns: sextant::TurnSettings::default(),
    }
}

/// One machine-readable line on stdout.
fn announce(what: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "sextant-app: {what}");
    let _ = out.flush();
}

/// Runs once the event loop is up: the window, the tray, the watcher, signals.
fn setup(app: &mut App) -> Result<()> {
    let (url, token, stop) = {
        let c = app.state::<Console>();
        (c.url.clone(), c.token.clone(), c.stop.clone())
    };
    // The page is a remote origin to Tauri: grant exactly this launch's origin, in the console
    // window only, the bootstrap command and event listening (for OPEN_EVENT).
    app.add_capability(
        CapabilityBuilder::new("console")
            .remote(format!("{url}/*"))
            .local(false)
            .window(WINDOW)
            .permission("allow-bootstrap")
            .permission("core:event:allow-listen")
            .permission("core:event:allow-unlisten"),
    )?;
    let home: tauri::Url = format!("{url}/").parse()?;
    let origin = home.origin();
    WebviewWindowBuilder::new(app, WINDOW, WebviewUrl::External(home))
        .title("Sextant")
        .inner_size(1280.0, 820.0)
        .min_inner_size(720.0, 480.0)
        // The console never leaves its origin; a link elsewhere does nothing here.
        .on_navigation(move |to| {
            let ok = to.origin() == origin;
            if !ok {
                tracing::warn!(url = %to, "navigation away from the console refused");
            }
            ok
        })
        // The page's title carries the pending count: the window's title follows it.
        .on_document_title_changed(|window, title| {
            let _ = window.set_title(&title);
        })
        .build()?;
    if let Err(e) = tray::create(app) {
        tracing::warn!(error = %e, "no tray icon");
    }
    watch::spawn(app.handle().clone(), url, token, stop);
    quit_on_signals(app.handle().clone());
    Ok(())
}

fn on_event(app: &AppHandle, event: RunEvent) {
    if let RunEvent::WindowEvent {
        label,
        event: WindowEvent::CloseRequested { api, .. },
        ..
    } = &event
        && label == WINDOW
    {
        // Keep running in the tray; Quit is in its menu.
        api.prevent_close();
        if let Some(w) = app.get_webview_window(WINDOW) {
            let _ = w.hide();
        }
    }
}

/// SIGTERM and Ctrl-C quit the app the same way as Quit in the tray (a clean shutdown).
fn quit_on_signals(app: AppHandle) {
    tauri::async_runtime::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            match signal(SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {}
                        _ = term.recv() => {}
                    }
                }
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("signal received: quitting");
        app.exit(0);
    });
}

/// Shows, un-minimises and focuses the console window.
pub(crate) fn show_window(app: &AppHandle) {
    if let Some(w) = app.get_webview_window(WINDOW) {
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
    }
}

/// Shows the window on `path` (a console route, e.g. `/inbox#<id>`).
pub(crate) fn open_path(app: &AppHandle, path: &str) {
    show_window(app);
    if let Err(e) = app.emit_to(WINDOW, OPEN_EVENT, path) {
        tracing::warn!(error = %e, path, "cannot open the console page");
    }
}
