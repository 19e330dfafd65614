//! The app process's allocator. glibc gives every thread that allocates while another holds
//! an arena an arena of its own, up to eight per core, and keeps what each arena freed. The
//! app runs the core's and the sandbox control plane's tokio workers, WebKit's and GTK's
//! threads: measured with 10,000 resources (`make bench-desktop`), two arenas cut the app
//! process from ~126 to ~116 MiB PSS with the same launch time. A console's own work is far
//! too light for allocator contention to show. A `MALLOC_ARENA_MAX` the user set is kept
//! (glibc reads it itself).

pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: called first thing in `main`, before any other thread exists; mallopt
        // only changes the allocator's limit for arenas created from now on.
        #[allow(unsafe_code)]
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}
