//! Tauri's build step: reads tauri.conf.json and declares the app's one command, so the ACL
//! can grant it to the console page (a remote origin for Tauri: the embedded server's URL).

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(&["bootstrap"])),
    )
    .expect("tauri-build failed");
}
