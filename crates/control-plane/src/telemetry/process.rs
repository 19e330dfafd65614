//! The metrics every Prometheus exporter ships about itself: `switchyard_build_info` and the
//! standard `process_*` series (the names and meanings of the Prometheus client libraries),
//! read at scrape time. On Linux they come from `/proc/self`; elsewhere only
//! `process_start_time_seconds` (when this process first built a registry) is reported.

use std::sync::Mutex;

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{Counter, Gauge, IntGauge, IntGaugeVec, Opts, Registry};

/// `/proc`'s clock ticks per second (`USER_HZ`, fixed at 100 by the kernel's ABI).
const TICKS_PER_SECOND: f64 = 100.0;

/// Registers `switchyard_build_info` (always 1; the version, commit and build date as labels)
/// and the `process_*` metrics.
pub fn register(registry: &Registry) {
    let info = IntGaugeVec::new(
        Opts::new(
            "switchyard_build_info",
            "The build of this control plane: always 1, with its version, commit and build date as labels.",
        ),
        &["version", "commit", "build_date"],
    )
    .expect("a valid metric");
    info.with_label_values(&[
        switchyard_build_info::VERSION,
        switchyard_build_info::commit().unwrap_or("unknown"),
        switchyard_build_info::BUILD_DATE,
    ])
    .set(1);
    registry
        .register(Box::new(info))
        .expect("each metric is registered once");
    registry
        .register(Box::new(ProcessCollector::new()))
        .expect("each metric is registered once");
}

/// The `process_*` metrics of this process.
pub struct ProcessCollector {
    cpu: Counter,
    /// The CPU seconds already added to `cpu` (a counter only goes up by differences).
    cpu_seen: Mutex<f64>,
    open_fds: IntGauge,
    max_fds: IntGauge,
    virtual_memory: IntGauge,
    resident_memory: IntGauge,
    threads: IntGauge,
    start_time: Gauge,
    descs: Vec<Desc>,
}

impl ProcessCollector {
    pub fn new() -> Self {
        let cpu = Counter::new(
            "process_cpu_seconds_total",
            "Total user and system CPU time spent in seconds.",
        );
        let int = |name: &str, help: &str| IntGauge::new(name, help).expect("a valid metric");
        let start_time = Gauge::new(
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
        )
        .expect("a valid metric");
        start_time.set(start_time_seconds());
        let c = Self {
            cpu: cpu.expect("a valid metric"),
            cpu_seen: Mutex::new(0.0),
            open_fds: int("process_open_fds", "Number of open file descriptors."),
            max_fds: int(
                "process_max_fds",
                "Maximum number of open file descriptors.",
            ),
            virtual_memory: int(
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
            ),
            resident_memory: int(
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
            ),
            threads: int("process_threads", "Number of OS threads in the process."),
            start_time,
            descs: Vec::new(),
        };
        let descs = c
            .collectors()
            .iter()
            .flat_map(|m| m.desc().into_iter().cloned())
            .collect();
        Self { descs, ..c }
    }

    fn collectors(&self) -> Vec<&dyn Collector> {
        let mut all: Vec<&dyn Collector> = vec![&self.start_time];
        if cfg!(target_os = "linux") {
            all.extend([
                &self.cpu as &dyn Collector,
                &self.open_fds,
                &self.max_fds,
                &self.virtual_memory,
                &self.resident_memory,
                &self.threads,
            ]);
        }
        all
    }

    /// Reads `/proc/self`; a figure that cannot be read keeps its last value.
    fn refresh(&self) {
        if let Some(stat) = read_stat() {
            let cpu = stat.cpu_ticks / TICKS_PER_SECOND;
            let mut seen = self.cpu_seen.lock().expect("cpu lock");
            if cpu > *seen {
                self.cpu.inc_by(cpu - *seen);
                *seen = cpu;
            }
            self.threads.set(stat.threads);
            self.virtual_memory.set(stat.vsize);
        }
        if let Some(rss) = status_kib("VmRSS:") {
            self.resident_memory.set(rss.saturating_mul(1024));
        }
        if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
            self.open_fds.set(fds.count() as i64);
        }
        if let Some(max) = max_open_files() {
            self.max_fds.set(max);
        }
    }
}

impl Default for ProcessCollector {
    fn default() -> Self {
        Self::new()
    }
}

impl Collector for ProcessCollector {
    fn desc(&self) -> Vec<&Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        if cfg!(target_os = "linux") {
            self.refresh();
        }
        self.collectors()
            .into_iter()
            .flat_map(|c| c.collect())
            .collect()
    }
}

struct Stat {
    cpu_ticks: f64,
    threads: i64,
    vsize: i64,
    start_ticks: f64,
}

/// `/proc/self/stat`: the fields after the command name (which may hold spaces).
fn read_stat() -> Option<Stat> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &text[text.rfind(')')? + 1..];
    // Fields from the 3rd (state) on: utime is the 14th, so index 11 here.
    let f: Vec<&str> = after.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
    Some(Stat {
        cpu_ticks: num(11)? + num(12)?,
        threads: num(17)? as i64,
        start_ticks: num(19)?,
        vsize: num(20)? as i64,
    })
}

/// A `kB` line of `/proc/self/status`, e.g. `VmRSS:`.
fn status_kib(field: &str) -> Option<i64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].split_whitespace().next()?.parse().ok()
}

/// The soft limit of `Max open files` in `/proc/self/limits`.
fn max_open_files() -> Option<i64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    let soft = line["Max open files".len()..].split_whitespace().next()?;
    Some(soft.parse().unwrap_or(i64::MAX))
}

/// When this process started, in seconds since the epoch: from the boot time and the
/// process's start in ticks since boot on Linux, else the first call's time.
fn start_time_seconds() -> f64 {
    static FIRST: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *FIRST.get_or_init(|| {
        let boot = std::fs::read_to_string("/proc/stat").ok().and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("btime "))
                .and_then(|v| v.trim().parse::<f64>().ok())
        });
        match (boot, read_stat()) {
            (Some(boot), Some(stat)) => boot + stat.start_ticks / TICKS_PER_SECOND,
            _ => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn reads_this_process() {
        let registry = Registry::new();
        registry
            .register(Box::new(ProcessCollector::new()))
            .unwrap();
        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap();
        let value = |name: &str| -> f64 {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("{name} in {text}"));
            line[name.len()..].trim().parse().unwrap()
        };
        assert!(value("process_resident_memory_bytes") > 1_000_000.0);
        assert!(value("process_virtual_memory_bytes") >= value("process_resident_memory_bytes"));
        assert!(value("process_open_fds") >= 3.0);
        assert!(value("process_max_fds") >= value("process_open_fds"));
        assert!(value("process_threads") >= 1.0);
        assert!(value("process_cpu_seconds_total") >= 0.0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let started = value("process_start_time_seconds");
        assert!(
            started <= now + 1.0 && started > now - 86_400.0,
            "{started}"
        );
    }
}
