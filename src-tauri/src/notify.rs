//! Native notifications for new interactions and for schedule notices, and what a click on
//! one does: show the console window and open the interaction in the inbox, or the schedule.
//!
//! Linux (and the BSDs) use the XDG notification service over D-Bus (`notify-rust`), whose
//! actions report the click; Tauri's notification plugin reports no clicks on desktop. Without
//! a notification service (a bare X server, CI) showing fails: that is logged once and the tray
//! count still works. Other platforms get no notification from the shell yet.

use tauri::AppHandle;

use crate::watch::{Pending, ScheduleNotice};

/// Shows a notification for `i`; a click opens it in the inbox.
#[cfg(all(unix, not(target_os = "macos")))]
pub fn new_interaction(app: &AppHandle, i: &Pending) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static WARNED: AtomicBool = AtomicBool::new(false);

    let app = app.clone();
    let id = i.interaction_id.clone();
    let (title, body) = (i.title.clone(), i.body());
    // `wait_for_action` blocks until the notification is clicked or closed: one short-lived
    // thread per notification, none of which holds up exit.
    let spawned = std::thread::Builder::new()
        .name("notification".into())
        .spawn(move || {
            let shown = notify_rust::Notification::new()
                .appname("Sextant")
                .summary(&title)
                .body(&body)
                .action("default", "Open in the inbox")
                .hint(notify_rust::Hint::Category("im.received".into()))
                .show();
            match shown {
                Ok(handle) => handle.wait_for_action(|action| {
                    if action == "default" {
                        crate::open_path(&app, &format!("/inbox#{id}"));
                    }
                }),
                Err(e) if !WARNED.swap(true, Ordering::Relaxed) => {
                    tracing::warn!(error = %e, "no desktop notifications (is a notification service running?)");
                }
                Err(e) => tracing::debug!(error = %e, "notification not shown"),
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "notification thread");
    }
}

/// Other platforms: nothing yet (the tray count and the window title still show it).
#[cfg(not(all(unix, not(target_os = "macos"))))]
pub fn new_interaction(_app: &AppHandle, i: &Pending) {
    tracing::info!(interaction_id = %i.interaction_id, "new interaction (no notifications on this platform yet)");
}

/// Shows a schedule notice (failed, recovered, paused); a click opens the schedule.
#[cfg(all(unix, not(target_os = "macos")))]
pub fn schedule_notice(app: &AppHandle, n: &ScheduleNotice) {
    let app = app.clone();
    let path = format!("/schedules/{}", n.schedule_id);
    let (title, body) = (n.title(), n.message.clone());
    let urgency = match n.kind.as_str() {
        "recovered" => notify_rust::Urgency::Low,
        _ => notify_rust::Urgency::Normal,
    };
    // As for interactions: one short-lived thread waits for the click.
    let spawned = std::thread::Builder::new()
        .name("notification".into())
        .spawn(move || {
            let shown = notify_rust::Notification::new()
                .appname("Sextant")
                .summary(title)
                .body(&body)
                .action("default", "Open the schedule")
                .urgency(urgency)
                .show();
            match shown {
                Ok(handle) => handle.wait_for_action(|action| {
                    if action == "default" {
                        crate::open_path(&app, &path);
                    }
                }),
                Err(e) => tracing::debug!(error = %e, "schedule notification not shown"),
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "notification thread");
    }
}

/// Other platforms: nothing yet (the console shows the notice).
#[cfg(not(all(unix, not(target_os = "macos"))))]
pub fn schedule_notice(_app: &AppHandle, n: &ScheduleNotice) {
    tracing::info!(schedule_id = %n.schedule_id, kind = %n.kind, "schedule notice (no notifications on this platform yet)");
}

/// Says why the app could not start (another Sextant holds the data dir, say). A launch from
/// a menu has no terminal for the error and no window yet, so a notification is the one place
/// the person sees it. Best effort: without a notification service only stderr has it.
#[cfg(all(unix, not(target_os = "macos")))]
pub fn start_failed(why: &str) {
    let shown = notify_rust::Notification::new()
        .appname("Sextant")
        .summary("Sextant could not start")
        .body(why)
        .urgency(notify_rust::Urgency::Critical)
        .show();
    if let Err(e) = shown {
        tracing::debug!(error = %e, "start failure not notified");
    }
}

/// Other platforms: stderr only.
#[cfg(not(all(unix, not(target_os = "macos"))))]
pub fn start_failed(_why: &str) {}
