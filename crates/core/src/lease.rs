//! Lease owners: `boot-id:pid:uuid`. A lease whose owner process is gone (same boot, pid
//! not running) may be taken over before it expires, so a restart after kill -9 resumes at
//! once; otherwise the lease's expiry decides.

/// This machine's boot id (Linux), or `unknown`.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// Whether the process that holds `owner` is certainly gone.
pub fn owner_is_dead(owner: &str, my_boot_id: &str) -> bool {
    let mut parts = owner.splitn(3, ':');
    let (Some(boot), Some(pid)) = (parts.next(), parts.next()) else {
        return false;
    };
    if boot == "unknown" || boot != my_boot_id {
        return false;
    }
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    if pid == std::process::id() {
        return false;
    }
    !std::path::Path::new(&format!("/proc/{pid}")).exists()
}
