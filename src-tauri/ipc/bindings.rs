//! Generates `ui/src/ipc/bindings.ts`: every IPC type (from ts-rs) and the typed command map.
//! The test `bindings_are_current` fails when the committed file drifts from the Rust types;
//! `UPDATE_BINDINGS=1 cargo test -p switchyard-desktop --lib bindings` rewrites it.

use std::any::TypeId;
use std::collections::BTreeMap;
use std::collections::HashSet;

use ts_rs::{Config, TS, TypeVisitor};

/// Where the generated file lives, relative to the repository root.
pub const BINDINGS_PATH: &str = "ui/src/ipc/bindings.ts";

/// Collects the declaration of every named type reachable from the visited ones.
pub struct DeclCollector<'a> {
    cfg: &'a Config,
    seen: HashSet<TypeId>,
    decls: BTreeMap<String, String>,
}

impl<'a> DeclCollector<'a> {
    pub fn new(cfg: &'a Config) -> Self {
        Self {
            cfg,
            seen: HashSet::new(),
            decls: BTreeMap::new(),
        }
    }
}

impl TypeVisitor for DeclCollector<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        if !self.seen.insert(TypeId::of::<T>()) {
            return;
        }
        if T::output_path().is_some() {
            let decl = T::decl(self.cfg);
            self.decls
                .insert(T::ident(self.cfg), format!("export {decl}"));
        }
        T::visit_dependencies(self);
        T::visit_generics(self);
    }
}

/// Lists the commands: name, arguments (as the UI passes them) and result type. The same list
/// type-checks against the real command functions, so it cannot drift from them.
macro_rules! command_map {
    ($($name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty;)*) => {
        /// Tauri's invoke handler for exactly the commands of the map: the list the UI's
        /// types are generated from is the list that is registered.
        pub fn invoke_handler()
        -> impl Fn(tauri::ipc::Invoke<tauri::Wry>) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$(crate::commands::$name),*]
        }

        pub(crate) fn visit_command_types(v: &mut impl ts_rs::TypeVisitor) {
            $( $( v.visit::<$ty>(); )* v.visit::<$ret>(); )*
        }

        pub(crate) fn command_map_entries(cfg: &ts_rs::Config) -> Vec<String> {
            vec![$(
                format!(
                    "  {}: {{ args: {{ {} }}; result: {} }};",
                    stringify!($name),
                    <[String]>::join(&[$( format!("{}: {}", $crate::ipc::bindings::camel(stringify!($arg)), <$ty as ts_rs::TS>::name(cfg)) ),*], "; "),
                    <$ret as ts_rs::TS>::name(cfg),
                )
            ),*]
        }

        /// Never called: it only compiles when every listed signature matches the command.
        #[allow(dead_code, unreachable_code, unused_variables, clippy::diverging_sub_expression)]
        async fn signatures_match(state: tauri::State<'_, crate::state::AppState>) {
            $( {
                let _result: std::result::Result<$ret, crate::ipc::IpcError> =
                    crate::commands::$name(state.clone() $(, { let $arg: $ty = unreachable!(); $arg })*).await;
            } )*
        }
    };
}

pub fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) use command_map;

/// Renders the whole bindings file.
pub fn render() -> String {
    let cfg = Config::new().with_large_int("number");
    let mut collector = DeclCollector::new(&cfg);
    crate::commands::visit_command_types(&mut collector);
    collector.visit::<crate::ipc::CoreEvent>();
    collector.visit::<crate::ipc::IpcError>();
    let mut out = String::from(
        "// Generated from the Rust IPC types by src-tauri/ipc/bindings.rs. Do not edit.\n\
         // Regenerate: UPDATE_BINDINGS=1 cargo test -p switchyard-desktop --lib bindings\n\n",
    );
    for decl in collector.decls.values() {
        out.push_str(decl);
        out.push_str("\n\n");
    }
    out.push_str(&format!(
        "/** The tauri event that carries {}. */\nexport const CORE_EVENT = \"{}\";\n\n",
        "`CoreEvent`",
        crate::ipc::CORE_EVENT
    ));
    out.push_str(
        "/** Every command: its arguments and what it resolves to. */\nexport type Commands = {\n",
    );
    for entry in crate::commands::command_map_entries(&cfg) {
        out.push_str(&entry);
        out.push('\n');
    }
    out.push_str("};\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_are_current() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let path = root.join(BINDINGS_PATH);
        let fresh = render();
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            std::fs::write(&path, &fresh).unwrap();
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == fresh,
            "{BINDINGS_PATH} is out of date with the Rust IPC types; regenerate it with \
             `UPDATE_BINDINGS=1 cargo test -p switchyard-desktop --lib bindings` and commit it"
        );
    }

    #[test]
    fn camel_case_matches_tauri_argument_names() {
        assert_eq!(camel("base_version"), "baseVersion");
        assert_eq!(camel("kind"), "kind");
    }
}
