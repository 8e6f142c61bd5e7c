//! The tray icon: the pending-approvals count (a red dot on the icon, the number beside it
//! where the tray shows labels, and the first menu line) and the menu: open the window, open
//! the inbox, pause schedules, quit.
//!
//! On Linux the tray is an AppIndicator (libayatana-appindicator): it has no click events and
//! no tooltip, only the menu and a label, so everything is reachable from the menu.

use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{App, AppHandle, Manager, Wry};

use crate::Console;

const TRAY: &str = "main";
const ICON: &[u8] = include_bytes!("../../icons/128x128.png");

/// The menu items whose text or state changes.
struct Items {
    pending: MenuItem<Wry>,
}

/// Creates the tray icon and its menu.
pub fn create(app: &App) -> tauri::Result<()> {
    let open = MenuItem::with_id(app, "open", "Open Sextant", true, None::<&str>)?;
    let pending = MenuItem::with_id(app, "inbox", pending_text(0), true, None::<&str>)?;
    let scheduler = app.state::<Console>().scheduler.clone();
    let pause = CheckMenuItem::with_id(
        app,
        "pause",
        "Pause schedules",
        true,
        scheduler.is_paused(),
        None::<&str>,
    )?;
    // The pause is one stored flag: a change from the web console shows here too.
    let mut changes = scheduler.pause_changes();
    let mark = pause.clone();
    tauri::async_runtime::spawn(async move {
        while changes.changed().await.is_ok() {
            let paused = *changes.borrow_and_update();
            if let Err(e) = mark.set_checked(paused) {
                tracing::warn!(error = %e, "could not update the tray's pause mark");
            }
        }
    });
    let quit = MenuItem::with_id(app, "quit", "Quit Sextant", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &open,
            &pending,
            &PredefinedMenuItem::separator(app)?,
            &pause,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    TrayIconBuilder::with_id(TRAY)
        .icon(icon(0)?)
        .tooltip("Sextant")
        .menu(&menu)
        .show_menu_on_left_click(false)
        .on_menu_event(move |app, event| match event.id().as_ref() {
            "open" => crate::show_window(app),
            "inbox" => crate::open_path(app, "/inbox"),
            "pause" => {
                let paused = pause.is_checked().unwrap_or(false);
                let scheduler = app.state::<Console>().scheduler.clone();
                tauri::async_runtime::spawn(async move {
                    match scheduler.set_paused(paused).await {
                        Ok(()) => tracing::info!(paused, "schedules paused from the tray"),
                        Err(e) => tracing::error!(error = %e, "could not pause schedules"),
                    }
                });
            }
            "quit" => app.exit(0),
            _ => {}
        })
        .on_tray_icon_event(|tray, event| {
            // Windows and macOS: a left click opens the window (Linux trays send no clicks).
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                crate::show_window(tray.app_handle());
            }
        })
        .build(app)?;
    app.manage(Items { pending });
    Ok(())
}

/// Shows `n` pending approvals on the tray.
pub fn set_pending(app: &AppHandle, n: usize) {
    let Some(tray) = app.tray_by_id(TRAY) else {
        return;
    };
    let label = (n > 0).then(|| n.to_string());
    let result = icon(n)
        .and_then(|i| tray.set_icon(Some(i)))
        .and_then(|()| tray.set_title(label.as_deref()))
        .and_then(|()| tray.set_tooltip(Some(format!("Sextant: {}", pending_text(n)))))
        .and_then(|()| match app.try_state::<Items>() {
            Some(items) => items.pending.set_text(pending_text(n)),
            None => Ok(()),
        });
    if let Err(e) = result {
        tracing::warn!(error = %e, "tray: cannot show the pending count");
    }
}

fn pending_text(n: usize) -> String {
    match n {
        0 => "No approvals waiting".into(),
        1 => "1 approval waiting…".into(),
        n => format!("{n} approvals waiting…"),
    }
}

/// The app icon, with a red dot in its top-right corner when something is pending.
fn icon(pending: usize) -> tauri::Result<Image<'static>> {
    let base = Image::from_bytes(ICON)?;
    let (w, h) = (base.width(), base.height());
    let mut rgba = base.rgba().to_vec();
    if pending > 0 {
        badge(&mut rgba, w, h);
    }
    Ok(Image::new_owned(rgba, w, h))
}

/// Draws the badge: a red disc with a white ring, a third of the icon wide.
fn badge(rgba: &mut [u8], w: u32, h: u32) {
    let r = w.min(h) as f32 / 6.0;
    let (cx, cy) = (w as f32 - r - 1.0, r + 1.0);
    let ring = r.max(4.0) / 4.0;
    for y in 0..h {
        for x in 0..w {
            let d = ((x as f32 + 0.5 - cx).powi(2) + (y as f32 + 0.5 - cy).powi(2)).sqrt();
            let px = match d {
                d if d <= r - ring => [0xe5, 0x38, 0x35, 0xff],
                d if d <= r => [0xff, 0xff, 0xff, 0xff],
                _ => continue,
            };
            let i = ((y * w + x) * 4) as usize;
            rgba[i..i + 4].copy_from_slice(&px);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_badge_is_drawn_only_when_something_is_pending() {
        let plain = icon(0).unwrap();
        let badged = icon(3).unwrap();
        assert_eq!(
            (plain.width(), plain.height()),
            (badged.width(), badged.height())
        );
        let w = plain.width() as usize;
        // The badge's centre, top right: red only on the badged icon.
        let r = w / 6;
        let i = ((r + 1) * w + (w - r - 1)) * 4;
        assert_eq!(&badged.rgba()[i..i + 4], &[0xe5, 0x38, 0x35, 0xff]);
        assert_ne!(&plain.rgba()[i..i + 4], &[0xe5, 0x38, 0x35, 0xff]);
    }

    #[test]
    fn the_menu_line_counts_in_words() {
        assert_eq!(pending_text(0), "No approvals waiting");
        assert_eq!(pending_text(1), "1 approval waiting…");
        assert_eq!(pending_text(4), "4 approvals waiting…");
    }
}
