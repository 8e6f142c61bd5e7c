// Migrations are embedded with include_str!; rebuild when one is added or edited.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
